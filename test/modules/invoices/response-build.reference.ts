/**
 * The response built with spreads and conditional spreads: the reference response-build.test.ts
 * holds the one-literal build (view/invoice-view.ts) to, byte for byte.
 */
import type { InvoiceRow, ShareLinkRow } from '../../../src/db/types.js';
import { apiDocumentUrl, portalUrls, qrUrls, shareUrls } from '../../../src/modules/links/index.js';
import { amountInWords, type AmountInWordsCurrency } from '../../../src/modules/invoices/rules/amount-in-words.js';
import type { InvoiceWriteResponse } from '../../../src/modules/invoices/invoice.schemas.js';
import {
  DOCUMENT_KIND,
  KIND_VERSION,
  documentTitle,
  etagOf,
  qrBlock,
  serviceRestriction,
  statusBlock,
  totalsOf,
  type ViewContext,
} from '../../../src/modules/invoices/view/invoice-view.js';
import { toMinorUnits as minorUnits } from '../../../src/shared/money.js';

type Doc = Parameters<typeof totalsOf>[0];
const money = (v: string): number => Number(v);

export function referenceInvoiceResponse(row: InvoiceRow, links: ShareLinkRow[], ctx: ViewContext): InvoiceWriteResponse {
  const doc = JSON.parse(row.document) as Doc;
  const id = row.public_id;
  const kind = { document_public_id: id, document_kind: DOCUMENT_KIND };
  const buyerLink = links.find((l) => l.kind === 'buyer');
  const colleagueLink = links.find((l) => l.kind === 'colleague');
  if (!buyerLink || !colleagueLink) throw new Error(`document ${id} has no buyer or colleague link`);
  const buyer = shareUrls(ctx.bases, buyerLink.token);
  const colleague = shareUrls(ctx.bases, colleagueLink.token);
  const portal = portalUrls(ctx.bases, row.team_id, id, ctx.now, row.link_epoch ?? 0);
  const recipients = links
    .filter((l) => l.kind === 'recipient')
    .map((l) => ({ link: l, urls: shareUrls(ctx.bases, l.token) }));

  const totals = ctx.totals ?? totalsOf(doc);
  const { title, custom } = documentTitle(doc);
  const restriction = serviceRestriction(ctx.tariff) || (row.service_status === 'restricted' ? row.service_status_reason : '');
  const status = statusBlock(row.seller_status, row.buyer_status, restriction ? 'restricted' : 'active', restriction);
  const validation = JSON.parse(row.validation) as InvoiceWriteResponse['validation'];
  const qr = qrBlock(doc, totals, row.seller_status, buyerLink.token, ctx.bases);
  const links_ = {
    share_url: buyer.url,
    document_url: buyer.document_url,
    portal_view_url: portal.view,
    portal_document_view_url: portal.document_view,
    portal_edit_url: portal.edit,
    portal_document_edit_url: portal.document_edit,
    qr_url: qrUrls(ctx.bases, buyerLink.token).png,
    api_url: apiDocumentUrl(ctx.bases, id),
  };
  const apiRecipients = recipients.map(({ link, urls }) => ({
    email: link.email ?? '',
    name: link.name ?? '',
    position: link.position ?? '',
    buyer_invoice_url: urls.url,
    buyer_document_url: urls.document_url,
    contact_id: null,
  }));
  const document = {
    public_id: id,
    ...kind,
    kind_version: KIND_VERSION,
    document_title: title,
    package_public_id: row.package_public_id,
    legacy_invoice_public_id: id,
    kind_ordinal: 1,
    sort_order: 0,
    title_is_custom: custom,
  };
  const shareAvailable = row.public_share_enabled === 1 && ctx.tariff.external_share;

  return {
    ok: true,
    public_id: id,
    ...kind,
    ...(ctx.demo ? { demo_mode: true, demo_guids: ctx.demo.guids } : {}),
    document_url: buyer.document_url,
    invoice_url: buyer.url,
    portal_view_url: portal.view,
    portal_document_view_url: portal.document_view,
    portal_edit_url: portal.edit,
    portal_document_edit_url: portal.document_edit,
    share_links: {
      colleague_url: colleague.url,
      colleague_document_url: colleague.document_url,
      buyer_url: buyer.url,
      buyer_document_url: buyer.document_url,
      recipients: recipients.map(({ link, urls }) => ({
        email: link.email ?? '',
        name: link.name ?? '',
        position: link.position ?? '',
        url: urls.url,
        document_url: urls.document_url,
        contact_id: null,
      })),
    },
    status,
    validation,
    metadata: {
      ...document,
      source_type: row.source_type,
      editor_mode: row.editor_mode,
      ...(row.information_system ? { information_system: row.information_system } : {}),
      ...(row.api_key_id !== null ? { api_key_id: row.api_key_id } : {}),
      public_share_enabled: row.public_share_enabled === 1,
      created_at: row.created_at,
      last_modified_at: row.last_modified_at,
      changed_at: row.changed_at ?? row.last_modified_at,
      ...(row.api_created_at ? { api_created_at: row.api_created_at } : {}),
      ...(row.api_updated_at ? { api_updated_at: row.api_updated_at } : {}),
      ...(row.created_by_login ? { created_by_login: row.created_by_login } : {}),
      ...(row.last_modified_by_login ? { last_modified_by_login: row.last_modified_by_login } : {}),
      ...(row.seller_edo_id ? { seller_edo_id: row.seller_edo_id } : {}),
      ...(row.buyer_edo_id ? { buyer_edo_id: row.buyer_edo_id } : {}),
      ...(row.api_key_name ? { api_key_name: row.api_key_name } : {}),
      ...(row.api_request_host ? { api_request_host: row.api_request_host } : {}),
      revision: row.revision,
      viewed_at: row.viewed_at,
      status,
      validation,
      notifications: ctx.notifications,
      edo: ctx.edo,
      api_recipients: apiRecipients,
      links: links_,
    },
    invoice: { ...doc, public_id: id, seller_status: row.seller_status },
    document,
    notifications: ctx.notifications,
    share_gate: {
      ...kind,
      available: shareAvailable,
      public_share_enabled: row.public_share_enabled === 1,
      external_share_allowed: ctx.tariff.external_share,
      reason: row.public_share_enabled !== 1 ? 'public_share_disabled' : ctx.tariff.external_share ? '' : 'tariff_external_share_disabled',
    },
    api: {
      ...kind,
      key_id: ctx.caller.keyId,
      key_name: ctx.caller.keyName,
      request_host: ctx.request.host,
      request_id: ctx.request.requestId,
      revision: row.revision,
      etag: etagOf(id, row.revision),
    },
    totals: {
      ...kind,
      subtotal: money(totals.subtotal),
      vat_total: money(totals.vat_total),
      total: money(totals.total),
      subtotal_minor_units: minorUnits(totals.subtotal),
      vat_total_minor_units: minorUnits(totals.vat_total),
      currency: doc.currency,
      prices_include_vat: doc.prices_include_vat === true,
      items_count: totals.lines.length,
      total_minor_units: totals.total_kopecks,
      amount_in_words: amountInWords(totals.total, doc.currency as AmountInWordsCurrency),
      vat_breakdown: totals.vat_breakdown.map((b) => ({
        vat_pct: b.vat_pct,
        net: money(b.net),
        vat: money(b.vat),
        gross: money(b.gross),
        net_minor_units: minorUnits(b.net),
        vat_minor_units: minorUnits(b.vat),
        gross_minor_units: minorUnits(b.gross),
      })),
      lines: totals.lines.map((l, i) => ({
        line: i + 1,
        amount: money(l.amount),
        net: money(l.net),
        vat: money(l.vat),
        gross: money(l.gross),
        vat_pct: l.vat_pct,
        amount_minor_units: minorUnits(l.amount),
        net_minor_units: minorUnits(l.net),
        vat_minor_units: minorUnits(l.vat),
        gross_minor_units: minorUnits(l.gross),
      })),
    },
    qr: { ...kind, ...qr },
  };
}
