/**
 * Builds the document response (spec 2.3 + 2.4) from the stored row and its share links.
 * Pure: links, totals, QR and labels are derived here and nowhere else, so GET, create,
 * update and demo mode answer alike.
 */
import type { EdoSync } from '../../edo/index.js';
import type { InvoiceRow, ShareLinkRow } from '../../../db/types.js';
import { formatDateShortRu } from '../../../shared/ru-format.js';
import { amountInWords, type AmountInWordsCurrency } from '../rules/amount-in-words.js';
import { buildPaymentQrPayload, qrPayloadEncoding, QrPayloadError } from '../rules/qr-payload.js';
import { apiDocumentUrl, portalUrls, qrUrls, shareUrls, type LinkBases } from '../../links/index.js';
import type { Tariff } from '../../teams/index.js';
import type { InvoiceWriteResponse, QrOffReason } from '../invoice.schemas.js';
import { BUYER_STATUSES, SELLER_STATUSES, SERVICE_STATUSES, type BuyerStatus, type SellerStatus, type ServiceStatus } from '../rules/statuses.js';
import { requisiteWarnings } from '../rules/requisites.js';
import { toMinorUnits as minorUnits } from '../../../shared/money.js';
import { computeTotals, type DocumentTotals } from '../rules/totals.js';
import { extended } from '../../../shared/objects.js';

export const DOCUMENT_KIND = 'invoice';
export const KIND_VERSION = '1';

export interface ViewContext {
  bases: LinkBases;
  now: Date;
  tariff: Tariff;
  caller: { keyId: number; keyName: string };
  request: { host: string; requestId: string };
  notifications: InvoiceWriteResponse['notifications'];
  /** The document's EDO synchronization; null when it never started. */
  edo: EdoSync | null;
  demo?: { guids: Record<string, string> };
  /** The totals a write just computed from the same document (not recomputed). */
  totals?: DocumentTotals;
}

type Doc = Record<string, unknown> & {
  number: string;
  date: string;
  currency: string;
  seller: Record<string, unknown>;
  buyer: Record<string, unknown>;
  items: Array<{ qty: number; price: number; vat_pct: number | null }>;
  prices_include_vat?: boolean;
  show_payment_qr?: boolean;
};

export function documentTitle(doc: { number: string; date: string; document_title?: unknown }): { title: string; custom: boolean } {
  if (typeof doc.document_title === 'string' && doc.document_title.trim() !== '') {
    return { title: doc.document_title.trim(), custom: true };
  }
  return { title: `Счёт № ${doc.number} от ${formatDateShortRu(doc.date)}`, custom: false };
}

export function etagOf(publicId: string, revision: number): string {
  return `"${publicId}.${revision}"`;
}

export function statusBlock(seller: string, buyer: string, service: string, reason: string) {
  return {
    seller_status: seller,
    seller_status_label: SELLER_STATUSES[seller as SellerStatus] ?? seller,
    buyer_status: buyer,
    buyer_status_label: BUYER_STATUSES[buyer as BuyerStatus] ?? buyer,
    service_status: service,
    service_status_label: SERVICE_STATUSES[service as ServiceStatus] ?? service,
    service_status_reason: reason,
  };
}

/** The tariff rule that restricts the document, if any. */
export function serviceRestriction(tariff: Tariff): string {
  return tariff.external_share ? '' : 'tariff_external_share_disabled';
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const money = (v: string): number => Number(v);

/** The GOST key of a QR field and the document path a caller edits to fix it. */
const QR_FIELD_PATHS: Record<string, string> = {
  Name: 'seller.name',
  PersonalAcc: 'seller.account',
  BankName: 'seller.bank_name',
  BIC: 'seller.bik',
  CorrespAcc: 'seller.corr_account',
  PayeeINN: 'seller.inn',
  KPP: 'seller.kpp',
  Sum: 'items',
  Purpose: 'purpose',
};

/** The requisite warnings that make a QR pay the wrong account (or none). */
const QR_REQUISITE_FIELDS = new Set(['seller.bik', 'seller.account', 'seller.corr_account', 'seller.inn', 'seller.kpp']);

/**
 * The VAT clause of the generated purpose, decided from the rates (not from whether the VAT
 * sum is zero): no rated line → "НДС не облагается"; every rated line at 0 % → "НДС 0 %";
 * otherwise "в т.ч. НДС X руб." even when the VAT rounds to 0.00.
 */
export function purposeVatClause(totals: DocumentTotals): string {
  const rated = totals.vat_breakdown.filter((b) => b.vat_pct !== null);
  if (rated.length === 0) return 'НДС не облагается';
  if (rated.every((b) => b.vat_pct === 0)) return 'НДС 0 %';
  return `в т.ч. НДС ${totals.vat_total} руб.`;
}

type QrWarning = { field: string; code: string; message: string };

/** The payment QR block of the response (without its kind fields). */
export function qrBlock(doc: Doc, totals: DocumentTotals, sellerStatus: string, buyerToken: string, bases: LinkBases) {
  const urls = qrUrls(bases, buyerToken);
  const off = (reason: QrOffReason, warnings: QrWarning[] = []) => ({ enabled: false, url: '', svg_url: '', payload: '', encoding: '' as const, reason, warnings });
  if (doc.show_payment_qr === false) return off('disabled_by_document');
  // A QR on a paid or cancelled invoice pays twice or pays for nothing.
  if (sellerStatus === 'paid') return off('invoice_paid');
  if (sellerStatus === 'cancelled') return off('invoice_cancelled');
  if (doc.currency !== 'RUB') return off('currency_not_rub');
  if (!/^[1-9]\d*$/.test(totals.total_kopecks)) return off('zero_total');
  const s = doc.seller;
  if (!str(s.name) || !str(s.account) || !str(s.bank_name) || !str(s.bik) || !str(s.corr_account)) {
    return off('missing_bank_requisites');
  }
  const invalid = requisiteWarnings(s, 'seller').filter((w) => QR_REQUISITE_FIELDS.has(w.field));
  if (invalid.length > 0) return off('invalid_requisites', invalid);
  const purpose = str(doc.purpose).trim() || `Оплата по счёту № ${doc.number} от ${formatDateShortRu(doc.date)}, ${purposeVatClause(totals)}`;
  try {
    const payload = buildPaymentQrPayload({
      name: str(s.name),
      personalAcc: str(s.account),
      bankName: str(s.bank_name),
      bic: str(s.bik),
      correspAcc: str(s.corr_account),
      payeeInn: str(s.inn) || undefined,
      kpp: str(s.kpp) || undefined,
      sumKopecks: totals.total_kopecks,
      purpose,
    });
    return { enabled: true, url: urls.png, svg_url: urls.svg, payload, encoding: qrPayloadEncoding(payload), reason: '' as const, warnings: [] as QrWarning[] };
  } catch (err) {
    if (!(err instanceof QrPayloadError)) throw err;
    const field = (err.key !== null ? QR_FIELD_PATHS[err.key] : undefined) ?? 'seller';
    const code = err.code === 'required_block_too_long' ? 'qr_payload_too_long' : err.key === 'Sum' ? 'qr_sum_too_long' : 'qr_invalid_value';
    const warning = { field, code, message: `payment QR not printed: ${err.message}` };
    return off(err.code === 'required_block_too_long' || err.key === 'Sum' ? 'payload_too_long' : 'invalid_requisites', [warning]);
  }
}

export function totalsOf(doc: Doc): DocumentTotals {
  return computeTotals(doc.items, { pricesIncludeVat: doc.prices_include_vat === true });
}

/**
 * Every object here is one literal with all its keys (an optional one `undefined` when absent)
 * rather than spreads and conditional spreads: each then has one shape, built at once, and the
 * serializer reads it without megamorphic lookups. The bytes are the same: fast-json-stringify
 * writes schema properties in schema order and skips `undefined`, as JSON.stringify does, and
 * the keys are in the order the spreads gave them (test/modules/invoices/response-build.test.ts).
 */
export function buildInvoiceResponse(row: InvoiceRow, links: ShareLinkRow[], ctx: ViewContext): InvoiceWriteResponse {
  const doc = JSON.parse(row.document) as Doc;
  const id = row.public_id;
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
    document_public_id: id,
    document_kind: DOCUMENT_KIND,
    kind_version: KIND_VERSION,
    document_title: title,
    package_public_id: row.package_public_id,
    legacy_invoice_public_id: id,
    kind_ordinal: 1,
    sort_order: 0,
    title_is_custom: custom,
  };
  const shareAvailable = row.public_share_enabled === 1 && ctx.tariff.external_share;
  // The stored document already names itself and its status (storedDocument): no copy needed then.
  const invoice = doc.public_id === id && doc.seller_status === row.seller_status ? doc : extended(doc, { public_id: id, seller_status: row.seller_status });
  const orAbsent = <T>(value: T | null | undefined): T | undefined => (value ? value : undefined);

  return {
    ok: true,
    public_id: id,
    document_public_id: id,
    document_kind: DOCUMENT_KIND,
    demo_mode: ctx.demo ? true : undefined,
    demo_guids: ctx.demo ? ctx.demo.guids : undefined,
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
      public_id: id,
      document_public_id: id,
      document_kind: DOCUMENT_KIND,
      kind_version: KIND_VERSION,
      document_title: title,
      package_public_id: row.package_public_id,
      legacy_invoice_public_id: id,
      kind_ordinal: 1,
      sort_order: 0,
      title_is_custom: custom,
      source_type: row.source_type,
      editor_mode: row.editor_mode,
      information_system: orAbsent(row.information_system),
      api_key_id: row.api_key_id !== null ? row.api_key_id : undefined,
      public_share_enabled: row.public_share_enabled === 1,
      created_at: row.created_at,
      last_modified_at: row.last_modified_at,
      changed_at: row.changed_at ?? row.last_modified_at,
      api_created_at: orAbsent(row.api_created_at),
      api_updated_at: orAbsent(row.api_updated_at),
      created_by_login: orAbsent(row.created_by_login),
      last_modified_by_login: orAbsent(row.last_modified_by_login),
      seller_edo_id: orAbsent(row.seller_edo_id),
      buyer_edo_id: orAbsent(row.buyer_edo_id),
      api_key_name: orAbsent(row.api_key_name),
      api_request_host: orAbsent(row.api_request_host),
      revision: row.revision,
      viewed_at: row.viewed_at,
      status,
      validation,
      notifications: ctx.notifications,
      edo: ctx.edo,
      api_recipients: apiRecipients,
      links: links_,
    },
    invoice,
    document,
    notifications: ctx.notifications,
    share_gate: {
      document_public_id: id,
      document_kind: DOCUMENT_KIND,
      available: shareAvailable,
      public_share_enabled: row.public_share_enabled === 1,
      external_share_allowed: ctx.tariff.external_share,
      reason: row.public_share_enabled !== 1 ? 'public_share_disabled' : ctx.tariff.external_share ? '' : 'tariff_external_share_disabled',
    },
    api: {
      document_public_id: id,
      document_kind: DOCUMENT_KIND,
      key_id: ctx.caller.keyId,
      key_name: ctx.caller.keyName,
      request_host: ctx.request.host,
      request_id: ctx.request.requestId,
      revision: row.revision,
      etag: etagOf(id, row.revision),
    },
    totals: {
      document_public_id: id,
      document_kind: DOCUMENT_KIND,
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
    qr: {
      document_public_id: id,
      document_kind: DOCUMENT_KIND,
      enabled: qr.enabled,
      url: qr.url,
      svg_url: qr.svg_url,
      payload: qr.payload,
      encoding: qr.encoding,
      reason: qr.reason,
      warnings: qr.warnings,
    },
  };
}
