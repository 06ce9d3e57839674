/**
 * Every URL a document response carries, built from the configured bases. The one server
 * answers all of them (share pages under the share base, portal pages under the portal base).
 */
import { portalExpiry, signPortalToken, type PortalMode } from './portal-token.js';

export interface LinkBases {
  publicUrl: string;
  shareUrl: string;
  portalUrl: string;
  secret: string;
}

export interface ShareUrls {
  url: string;
  document_url: string;
}

/** The share page of a token and its printable PDF. */
export function shareUrls(bases: LinkBases, token: string): ShareUrls {
  return { url: `${bases.shareUrl}/${token}`, document_url: `${bases.shareUrl}/${token}/document.pdf` };
}

export function qrUrls(bases: LinkBases, token: string): { png: string; svg: string } {
  return { png: `${bases.shareUrl}/${token}/qr.png`, svg: `${bases.shareUrl}/${token}/qr.svg` };
}

export interface PortalUrls {
  view: string;
  document_view: string;
  edit: string;
  document_edit: string;
}

/** The portal links of a document, signed for its current link epoch (see portal-token.ts). */
export function portalUrls(bases: LinkBases, teamId: string, publicId: string, now: Date, epoch = 0): PortalUrls {
  const token = (mode: PortalMode) =>
    signPortalToken(bases.secret, { teamId, publicId, mode, exp: portalExpiry(mode, now), epoch });
  const view = token('view');
  const edit = token('edit');
  return {
    view: `${bases.portalUrl}/view/${view}`,
    document_view: `${bases.portalUrl}/document/view/${view}`,
    edit: `${bases.portalUrl}/edit/${edit}`,
    document_edit: `${bases.portalUrl}/document/edit/${edit}`,
  };
}

export function apiDocumentUrl(bases: LinkBases, publicId: string): string {
  return `${bases.publicUrl}/api/v1/invoices/${encodeURIComponent(publicId)}`;
}

/**
 * The path part of a base URL, without the trailing slash: `/s` for `https://x.example/s`,
 * `` for `https://share.example`. The pages are served under it on whatever host the request
 * names, and their own links (assets, PDF, QR, forms) are root-relative paths under it.
 */
export function basePath(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, '');
}
