/**
 * The share and portal pages' rules. Every page shows what the API says: the document is read
 * through `InvoiceService.get` (so through `buildInvoiceResponse`), mapped once by
 * `toPrintModel`, and the same model feeds the HTML, the PDF and the QR. The portal's edit page
 * saves through `InvoiceService.update`, the API's own validation and rules.
 *
 * Capabilities:
 * - a share token (random, stored) opens that document's share page, PDF and QR, subject to
 *   the share gate: `public_share_enabled: false` → 404, a tariff without external sharing → 403;
 * - a portal token (signed, expiring) names the team, document and mode; a view token opens
 *   the view pages, an edit token the edit pages and, as editing includes reading, the view
 *   pages too. A view token on an edit page is refused (403), never upgraded.
 * - the demo links (`demo-buyer`, `demo-colleague`, `demo-recipient-N`, and portal tokens of
 *   the demo world, whatever document they name) show the demo sample and change nothing;
 *   the demo world's team id is outside the team id alphabet, so they never reach a real team.
 * - a portal token carries its document's link epoch; `links rotate` moves it on (404 after).
 */
import { ApiError } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import { isoNow } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { ShareLinkRow } from '../../db/types.js';
import {
  DEMO_SHARE_TOKENS,
  markDocumentViewed,
  markPaymentReported,
  toPrintModel,
  type InvoiceDetail,
  type InvoicePrintModel,
  type InvoiceService,
  type RequestInfo,
} from '../invoices/index.js';
import { inlinePdfRenderer, RenderCache, renderKey, renderQrPng, renderQrSvg, type PdfRenderer, type RenderLane } from '../rendering/index.js';
import { DEMO_AUTH, DEMO_TEAM_ID, LEGACY_DEMO_TEAM_ID, type AuthContext, type AuthService } from '../teams/index.js';
import { refusedEdit } from './edit-refusals.js';
import { messagesByField, warningMessageRu } from './form-messages.js';
import { basePath, type LinkBases } from '../links/index.js';
import {
  mergeEditedDocument,
  parseEditFormDetailed,
  portalViewInput,
  renderPortalEditPage,
  renderPortalViewPage,
  renderSharePage,
  type PostedFields,
} from './pages/index.js';
import { csrfTokenFor, verifyCsrfToken, verifyPortalToken, type PortalMode } from '../links/index.js';
import * as repo from './sharing.repository.js';
import { LinkOpens, recordPaymentReported } from './link-events.js';
import { pdfFilenames, type BinaryFile, type RenderedFile } from './rendered-files.js';

export type { BinaryFile, RenderedFile } from './rendered-files.js';

/** Why a page cannot be shown; the routes map each to its status and page. */
export type PageProblem = 'not_found' | 'share_forbidden' | 'view_only' | 'csrf_failed';

export class PageError extends Error {
  constructor(readonly problem: PageProblem) {
    super(problem);
    this.name = 'PageError';
  }
}

export interface SharingServiceDeps {
  db: Db;
  clock: Clock;
  bases: LinkBases;
  invoices: InvoiceService;
  auth: AuthService;
  /** INVOICING_DEMO_PUBLIC_ID: the sample the demo links show. */
  demoPublicId: string;
  /** Where PDFs are rendered: worker threads (createPdfRenderer) or, by default, inline. */
  pdf?: PdfRenderer;
  /** Rendered PDFs and QR images by what they are rendered from; by default 64 MB. */
  cache?: RenderCache;
}

/** The login a portal edit is recorded under (`last_modified_by_login`). */
export const PORTAL_ACTOR = 'portal';

/** Shapes a token can have: share tokens are base64url, portal tokens two base64url parts. */
const SHARE_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
const PORTAL_TOKEN = /^[A-Za-z0-9_-]{1,1000}\.[A-Za-z0-9_-]{1,100}$/;
const DEMO_RECIPIENT = /^demo-recipient-[1-9]\d{0,3}$/;

type LinkKind = 'buyer' | 'colleague' | 'recipient';

interface ShareContext {
  token: string;
  kind: LinkKind;
  /** The stored link; null for a demo link. */
  link: ShareLinkRow | null;
  model: InvoicePrintModel;
}

interface PortalContext {
  token: string;
  mode: PortalMode;
  /** Null in the demo: the sample is read through the demo token's context. */
  auth: Extract<AuthContext, { mode: 'live' }> | null;
  publicId: string;
  response: InvoiceDetail;
  etag: string;
  model: InvoicePrintModel;
}

/** Which portal page: `/view/…` or `/document/view/…` (and the same for edit). */
export interface PortalRoute {
  document: boolean;
}

export type SaveOutcome = { kind: 'saved'; location: string } | { kind: 'shown'; status: 200 | 400 | 409; html: string };

export class SharingService {
  /** Root-relative paths of the two bases: the pages' own links are built under them. */
  readonly paths: { share: string; portal: string };
  private readonly cache: RenderCache;
  /** What opening a link writes: only what changed, `last_opened_at` at most once a minute. */
  private readonly opens: LinkOpens;

  constructor(private readonly deps: SharingServiceDeps) {
    this.paths = { share: basePath(deps.bases.shareUrl), portal: basePath(deps.bases.portalUrl) };
    this.cache = deps.cache ?? new RenderCache(64 * 1024 * 1024);
    this.opens = new LinkOpens(deps.db);
  }

  // --- share links --------------------------------------------------------------------------

  /** The share page. `countOpen` (GET, not HEAD) records the open and, for the buyer or a recipient, the view. */
  async sharePage(token: string, info: RequestInfo, options: { countOpen: boolean }): Promise<string> {
    const ctx = await this.openShare(token, info, options.countOpen);
    const base = `${this.paths.share}/${ctx.token}`;
    return renderSharePage({
      model: ctx.model,
      pdfUrl: `${base}/document.pdf`,
      qrImageUrl: ctx.model.qr_payload ? `${base}/qr.png` : null,
      // The colleague link is for the seller's people: no payment button there.
      paymentReportUrl: ctx.kind === 'colleague' ? null : `${base}/payment-reported`,
      assetPrefix: this.paths.share,
    });
  }

  /** The printable PDF through a share link; opening it counts like opening the page. */
  async sharePdf(token: string, info: RequestInfo, options: { countOpen: boolean }): Promise<RenderedFile> {
    const ctx = await this.openShare(token, info, options.countOpen);
    return this.pdfFile(ctx.model);
  }

  /** The payment QR of the document (PNG or SVG). Loading it is not an open: the page embeds it. */
  async shareQr(token: string, format: 'png' | 'svg', info: RequestInfo): Promise<RenderedFile> {
    const ctx = await this.openShare(token, info, false);
    return this.qrFile(ctx.model, format);
  }

  /**
   * "I have paid" from the buyer's or a recipient's page: `payment_reported`. The colleague link
   * and the demo change nothing. Returns the page to go back to (root-relative).
   */
  async reportPayment(token: string, info: RequestInfo): Promise<string> {
    const { link, kind } = await this.openShare(token, info, false);
    if (link && kind !== 'colleague') await recordPaymentReported(this.deps.db, link.team_id, link.public_id, isoNow(this.deps.clock));
    return `${this.paths.share}/${token}`;
  }

  private async openShare(token: string, info: RequestInfo, countOpen: boolean): Promise<ShareContext> {
    if (!SHARE_TOKEN.test(token)) throw new PageError('not_found');
    const link = await repo.findShareLink(this.deps.db, token);
    if (!link) return this.demoShare(token, info);
    const auth = await this.deps.auth.signedLinkContext(link.team_id, 'share');
    if (!auth) throw new PageError('not_found');
    const response = await this.read(auth, link.public_id, info);
    const gate = response.body.share_gate;
    if (gate && !gate.available) {
      throw new PageError(gate.reason === 'public_share_disabled' || !gate.public_share_enabled ? 'not_found' : 'share_forbidden');
    }
    if (countOpen) {
      const state = { buyer_status: response.body.status.buyer_status, viewed_at: response.body.metadata.viewed_at ?? null };
      await this.opens.record(link, state, this.deps.clock.now());
    }
    return { token, kind: link.kind, link, model: toPrintModel(response.body) };
  }

  private async demoShare(token: string, info: RequestInfo): Promise<ShareContext> {
    const kind: LinkKind | null =
      token === DEMO_SHARE_TOKENS.buyer ? 'buyer' : token === DEMO_SHARE_TOKENS.colleague ? 'colleague' : DEMO_RECIPIENT.test(token) ? 'recipient' : null;
    if (kind === null) throw new PageError('not_found');
    const { body } = await this.deps.invoices.get(DEMO_AUTH, this.demoPublicId(), info);
    return { token, kind, link: null, model: toPrintModel(body) };
  }

  // --- portal -------------------------------------------------------------------------------

  async portalViewPage(token: string, route: PortalRoute, info: RequestInfo, options: { saved: boolean }): Promise<string> {
    const ctx = await this.openPortal(token, 'view', info);
    const locked = ctx.response.status.seller_status === 'paid' || ctx.response.status.seller_status === 'cancelled';
    const input = portalViewInput(ctx.response, {
      editUrl: ctx.mode === 'edit' && !locked ? this.portalPath(route, 'edit', token) : null,
      pdfUrl: `${this.paths.portal}/view/${token}/document.pdf`,
      qrImageUrl: ctx.model.qr_payload ? `${this.paths.portal}/view/${token}/qr.png` : null,
    });
    return renderPortalViewPage({ ...input, saved: options.saved, assetPrefix: this.paths.portal });
  }

  /** The PDF from the portal: the seller's copy, available whatever the share gate says. */
  async portalPdf(token: string, info: RequestInfo): Promise<RenderedFile> {
    const ctx = await this.openPortal(token, 'view', info);
    return this.pdfFile(ctx.model);
  }

  async portalQr(token: string, info: RequestInfo): Promise<RenderedFile> {
    const ctx = await this.openPortal(token, 'view', info);
    return this.qrFile(ctx.model, 'png');
  }

  async portalEditPage(token: string, route: PortalRoute, info: RequestInfo): Promise<string> {
    const ctx = await this.openPortal(token, 'edit', info);
    return this.renderEdit(ctx, route, { document: ctx.response.invoice });
  }

  /**
   * Saves the posted edit form as a full update (PUT semantics) through the API's service:
   * the form's fields over the stored document's other keys, If-Match from `_etag`. On success
   * the caller redirects to the view page; otherwise the form is shown again with the user's
   * values and the errors next to their fields.
   */
  async savePortalEdit(token: string, route: PortalRoute, fields: PostedFields, info: RequestInfo): Promise<SaveOutcome> {
    const ctx = await this.openPortal(token, 'edit', info);
    const csrf = posted(fields, '_csrf');
    if (csrf === '' || !verifyCsrfToken(this.deps.bases.secret, token, csrf)) throw new PageError('csrf_failed');

    const parsed = parseEditFormDetailed(fields);
    const document = mergeEditedDocument(ctx.response.invoice, parsed.invoice);
    const etag = posted(fields, '_etag');
    try {
      if (ctx.auth === null) {
        // Demo: the same validation, nothing stored.
        await this.deps.invoices.update(DEMO_AUTH, this.demoPublicId(), { invoice: { ...document, public_id: this.demoPublicId() } }, { ...info, ifMatch: null });
        return this.shown(ctx, route, 200, { document, formError: 'Демо-режим: документ прошёл проверку, но изменения не сохраняются.' });
      }
      // A number the parser could not read stays the string typed, which validation refuses
      // (`invalid_type`, nothing coerced) before anything is stored: the update then reports
      // every other problem too, and the parser's message replaces validation's for that field.
      await this.deps.invoices.update(
        ctx.auth,
        ctx.publicId,
        { invoice: document },
        { ...info, ifMatch: etag === '' ? null : etag },
        { mode: 'portal', login: PORTAL_ACTOR },
      );
      return { kind: 'saved', location: `${this.portalPath(route, 'view', token)}?saved=1` };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return this.refused(ctx, route, err, document, parsed.errors, info);
    }
  }

  private async refused(
    ctx: PortalContext,
    route: PortalRoute,
    err: ApiError,
    document: Record<string, unknown>,
    parserErrors: Record<string, string>,
    info: RequestInfo,
  ): Promise<SaveOutcome> {
    if (err.body.error === 'document_not_found') throw new PageError('not_found');
    const refused = refusedEdit(err, document, parserErrors);
    if (!refused) throw err;
    let shownOver = ctx;
    if (refused.reloadRevision && ctx.auth) {
      // The form is shown again over the current revision: saving it now replaces the other change.
      const fresh = await this.deps.invoices.get(ctx.auth, ctx.publicId, info);
      shownOver = { ...ctx, response: fresh.body, etag: fresh.etag, model: toPrintModel(fresh.body) };
    }
    return this.shown(shownOver, route, refused.status, { document, errors: refused.errors, formError: refused.formError });
  }

  private shown(
    ctx: PortalContext,
    route: PortalRoute,
    status: 200 | 400 | 409,
    form: { document: Record<string, unknown>; errors?: Record<string, string>; formError?: string | undefined },
  ): SaveOutcome {
    return { kind: 'shown', status, html: this.renderEdit(ctx, route, form) };
  }

  private renderEdit(
    ctx: PortalContext,
    route: PortalRoute,
    form: { document: Record<string, unknown>; errors?: Record<string, string>; formError?: string | undefined },
  ): string {
    return renderPortalEditPage({
      title: ctx.model.document_title,
      document: form.document,
      errors: form.errors ?? {},
      warnings: messagesByField(ctx.response.validation.warnings, warningMessageRu),
      formError: form.formError ?? null,
      csrfToken: csrfTokenFor(this.deps.bases.secret, ctx.token),
      actionUrl: this.portalPath(route, 'edit', ctx.token),
      cancelUrl: this.portalPath(route, 'view', ctx.token),
      etag: ctx.etag,
      currentSellerStatus: ctx.response.status.seller_status,
      assetPrefix: this.paths.portal,
    });
  }

  private async openPortal(token: string, need: PortalMode, info: RequestInfo): Promise<PortalContext> {
    if (!PORTAL_TOKEN.test(token)) throw new PageError('not_found');
    const claims = verifyPortalToken(this.deps.bases.secret, token, Math.floor(this.deps.clock.now().getTime() / 1000), {
      refuseLegacyTeam: LEGACY_DEMO_TEAM_ID,
    });
    if (!claims) throw new PageError('not_found');
    if (need === 'edit' && claims.mode !== 'edit') throw new PageError('view_only');
    if (claims.teamId === DEMO_TEAM_ID) {
      // Demo-mode responses sign portal links for the demo world (never a real team id) and a
      // document that was never stored (the sample, or a dry-run write): whatever public id
      // they name, they show the sample and never read or write stored data.
      const sample = await this.deps.invoices.get(DEMO_AUTH, this.demoPublicId(), info);
      return { token, mode: claims.mode, auth: null, publicId: this.demoPublicId(), response: sample.body, etag: sample.etag, model: toPrintModel(sample.body) };
    }
    const auth = await this.deps.auth.signedLinkContext(claims.teamId, PORTAL_ACTOR);
    if (!auth) throw new PageError('not_found');
    // A token of an older link epoch was ended by `links rotate`.
    const epoch = await repo.findLinkEpoch(this.deps.db, claims.teamId, claims.publicId);
    if (epoch === undefined || epoch !== claims.epoch) throw new PageError('not_found');
    const stored = await this.read(auth, claims.publicId, info);
    return { token, mode: claims.mode, auth, publicId: claims.publicId, response: stored.body, etag: stored.etag, model: toPrintModel(stored.body) };
  }

  // --- helpers ------------------------------------------------------------------------------

  private pdfFile(model: InvoicePrintModel, lane: RenderLane = 'public'): RenderedFile {
    const key = renderKey('pdf', model);
    const renderer = this.deps.pdf ?? inlinePdfRenderer;
    return { etag: `"${key}"`, filename: pdfFilenames(model), load: () => this.cache.get(key, () => renderer.render(model, lane)) };
  }

  private qrFile(model: InvoicePrintModel, format: 'png' | 'svg'): RenderedFile {
    // No QR (disabled by the document, not RUB, no bank requisites): `qr.url` is empty then.
    const payload = model.qr_payload;
    if (!payload) throw new PageError('not_found');
    // The image depends on the payload only.
    const key = renderKey(`qr.${format}`, payload);
    const render = async () => (format === 'png' ? ((await renderQrPng(payload)) as Buffer) : Buffer.from(await renderQrSvg(payload), 'utf8'));
    return { etag: `"${key}"`, load: () => this.cache.get(key, render) };
  }

  private async read(auth: AuthContext, publicId: string, info: RequestInfo): Promise<{ body: InvoiceDetail; etag: string }> {
    try {
      return await this.deps.invoices.get(auth, publicId, info);
    } catch (err) {
      if (err instanceof ApiError && err.body.error === 'document_not_found') throw new PageError('not_found');
      throw err;
    }
  }

  private portalPath(route: PortalRoute, mode: PortalMode, token: string): string {
    return `${this.paths.portal}${route.document ? '/document' : ''}/${mode}/${token}`;
  }

  private demoPublicId(): string {
    return this.deps.demoPublicId;
  }
}


/** The last value posted under `name`, or ''. */
function posted(fields: PostedFields, name: string): string {
  if (!Object.hasOwn(fields, name)) return '';
  const raw = fields[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return typeof value === 'string' ? value : '';
}
