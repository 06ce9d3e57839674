/**
 * What a document write stores: the invoice row's columns, the item rows, and the small rules
 * shared by create, update and demo dry-runs. Pure: no database, no clock.
 */

import type { InvoiceRow } from '../../../db/types.js';
import { normalizeSearchText } from '../rules/search-text.js';
import { ApiError } from '../../../shared/errors.js';
import { emptyOutcome, recordedOutcome } from '../../notifications/index.js';
import type { AuthContext } from '../../teams/index.js';
import type { WriteEnvelope } from '../rules/envelope.js';
import type { InvoiceWriteResponse } from '../invoice.schemas.js';
import { requestHash } from '../../../shared/request-hash.js';
import type { EdoSyncRequest } from '../../edo/index.js';
import { documentTitle, etagOf, serviceRestriction } from '../view/invoice-view.js';
import type { DocumentTotals } from '../rules/totals.js';
import type { ResolvedSeller } from '../rules/seller-resolution.js';
import type { SellerStatus } from '../rules/statuses.js';
import type { NormalizedInvoice, ValidationIssue } from './invoice.model.js';
import { extended } from '../../../shared/objects.js';
import { currentTraceparent } from '../../../shared/tracing.js';

export interface RequestInfo {
  host: string;
  requestId: string;
}

/**
 * Who makes a write. The API (the default) records the key; the portal's edit page records
 * `editor_mode: portal` and its login, and leaves the columns that describe the last API write
 * (api_key_id, api_key_name, api_request_host, api_updated_at) and `source_type` as they were.
 */
export type Editor = { mode: 'api' } | { mode: 'portal'; login: string };
export const API_EDITOR: Editor = { mode: 'api' };

/** A validated, seller-resolved document ready to store. */
export interface PreparedWrite {
  envelope: WriteEnvelope;
  invoice: NormalizedInvoice;
  resolved: ResolvedSeller;
  warnings: ValidationIssue[];
  /** Computed once per write: the row's columns, the item rows and the response all use these. */
  totals: DocumentTotals;
}

/** The columns a write sets from the document; the rest belong to the document's life. */
export type WriteValues = Omit<
  InvoiceRow,
  | 'team_id'
  | 'public_id'
  | 'revision'
  | 'package_public_id'
  | 'created_at'
  | 'buyer_status'
  | 'created_by_login'
  | 'api_created_at'
  | 'api_updated_at'
  | 'notifications'
  | 'viewed_at'
  | 'payment_reported_at'
  | 'link_epoch'
  | 'edo_pending_job'
  | 'email_pending'
>;

/** The columns a write sets, from the validated document, for the caller and request. */
export function documentRowValues(
  auth: Extract<AuthContext, { mode: 'live' }> | Extract<AuthContext, { mode: 'demo' }>,
  prepared: PreparedWrite,
  publicId: string,
  now: string,
  sellerStatus: SellerStatus,
  info: RequestInfo,
): WriteValues {
  const { invoice, resolved, warnings, totals } = prepared;
  const restriction = serviceRestriction(auth.tariff);
  const stored = storedDocument(invoice, publicId, sellerStatus);
  return {
    number: invoice.number,
    date: invoice.date,
    currency: invoice.currency,
    direction: invoice.invoice_direction,
    seller_org_id: resolved.organization.id,
    seller_inn: resolved.seller.inn,
    seller_name: String(resolved.seller.name ?? resolved.organization.name),
    buyer_inn: typeof invoice.buyer.inn === 'string' && invoice.buyer.inn !== '' ? invoice.buyer.inn : null,
    buyer_name: invoice.buyer.name,
    search_text: normalizeSearchText(
      invoice.number,
      String(resolved.seller.name ?? ''),
      resolved.seller.inn,
      invoice.buyer.name,
      typeof invoice.buyer.inn === 'string' ? invoice.buyer.inn : null,
    ),
    seller_status: sellerStatus,
    service_status: restriction ? 'restricted' : 'active',
    service_status_reason: restriction,
    editor_mode: 'api',
    source_type: 'api',
    subtotal: totals.subtotal,
    vat_total: totals.vat_total,
    total: totals.total,
    public_share_enabled: invoice.public_share_enabled ? 1 : 0,
    information_system: invoice.information_system ?? null,
    seller_edo_id: resolved.organization.edo_id,
    buyer_edo_id: invoice.buyer_edo_id ?? null,
    document: JSON.stringify(stored),
    changed_at: now,
    validation: JSON.stringify(storedValidation(warnings)),
    last_modified_at: now,
    // Without actor_login the key's name stands for the actor (as the metadata description says).
    last_modified_by_login: prepared.envelope.actorLogin ?? auth.keyName,
    api_key_id: auth.keyId,
    api_key_name: auth.keyName,
    api_request_host: info.host,
    // The request's trace, continued by the sends a create records in this row (null when tracing is off).
    traceparent: currentTraceparent(),
  };
}

/** The columns of a document's row that belong to its life, not to a write (see WriteValues). */
export type LifeValues = Omit<InvoiceRow, keyof WriteValues>;

/**
 * The whole row from a write's values and the document's life columns, as one literal: a spread
 * of the 30 values followed by 13 more keys built the object one transition at a time (a create
 * spent more on that than on its statements' parameters).
 */
export function invoiceRow(v: WriteValues, life: LifeValues): InvoiceRow {
  return {
    number: v.number,
    date: v.date,
    currency: v.currency,
    direction: v.direction,
    seller_org_id: v.seller_org_id,
    seller_inn: v.seller_inn,
    seller_name: v.seller_name,
    buyer_inn: v.buyer_inn,
    buyer_name: v.buyer_name,
    search_text: v.search_text,
    seller_status: v.seller_status,
    service_status: v.service_status,
    service_status_reason: v.service_status_reason,
    editor_mode: v.editor_mode,
    source_type: v.source_type,
    subtotal: v.subtotal,
    vat_total: v.vat_total,
    total: v.total,
    public_share_enabled: v.public_share_enabled,
    information_system: v.information_system,
    seller_edo_id: v.seller_edo_id,
    buyer_edo_id: v.buyer_edo_id,
    document: v.document,
    changed_at: v.changed_at,
    validation: v.validation,
    last_modified_at: v.last_modified_at,
    last_modified_by_login: v.last_modified_by_login,
    api_key_id: v.api_key_id,
    api_key_name: v.api_key_name,
    api_request_host: v.api_request_host,
    traceparent: v.traceparent,
    team_id: life.team_id,
    public_id: life.public_id,
    revision: life.revision,
    link_epoch: life.link_epoch,
    package_public_id: life.package_public_id,
    buyer_status: life.buyer_status,
    created_at: life.created_at,
    created_by_login: life.created_by_login,
    api_created_at: life.api_created_at,
    api_updated_at: life.api_updated_at,
    notifications: life.notifications,
    viewed_at: life.viewed_at,
    payment_reported_at: life.payment_reported_at,
    edo_pending_job: life.edo_pending_job,
    email_pending: life.email_pending,
  };
}

/** A stored row's life columns (for `invoiceRow` of its next revision). */
export function lifeOf(row: InvoiceRow): LifeValues {
  return {
    team_id: row.team_id,
    public_id: row.public_id,
    revision: row.revision,
    link_epoch: row.link_epoch,
    package_public_id: row.package_public_id,
    buyer_status: row.buyer_status,
    created_at: row.created_at,
    created_by_login: row.created_by_login,
    api_created_at: row.api_created_at,
    api_updated_at: row.api_updated_at,
    notifications: row.notifications,
    viewed_at: row.viewed_at,
    payment_reported_at: row.payment_reported_at,
    edo_pending_job: row.edo_pending_job,
    email_pending: row.email_pending,
  };
}

/** What the `document` column holds, as an object (`documentRowValues` stores its JSON). */
export function storedDocument(invoice: NormalizedInvoice, publicId: string, sellerStatus: SellerStatus) {
  return extended(invoice, { public_id: publicId, seller_status: sellerStatus });
}

/** What the `validation` column holds, as an object. */
export function storedValidation(warnings: ValidationIssue[]) {
  return { valid: true, errors: [], warnings };
}

export function itemRows(teamId: string, publicId: string, prepared: Pick<PreparedWrite, 'invoice' | 'totals'>) {
  const { invoice, totals } = prepared;
  return invoice.items.map((item, i) => {
    const line = totals.lines[i];
    if (!line) throw new Error('totals and items disagree');
    return {
      team_id: teamId,
      public_id: publicId,
      line_no: i + 1,
      name: item.name,
      qty: String(item.qty),
      unit: item.unit,
      price: String(item.price),
      vat_pct: item.vat_pct === null ? null : String(item.vat_pct),
      amount: line.amount,
      net: line.net,
      vat: line.vat,
      gross: line.gross,
    };
  });
}

/** The row values as `editor` writes them (see Editor). */
export function editedBy(values: WriteValues, editor: Editor, current: InvoiceRow): WriteValues {
  if (editor.mode === 'api') return values;
  return {
    ...values,
    editor_mode: 'portal',
    source_type: current.source_type,
    last_modified_by_login: editor.login,
    api_key_id: current.api_key_id,
    api_key_name: current.api_key_name,
    api_request_host: current.api_request_host,
  };
}

/**
 * The e-mail outcome stored with the document; for a create whose e-mails are still recorded in
 * its row, the one its record gives (docs/notifications.md, "Recorded e-mails").
 */
export function storedNotifications(row: InvoiceRow): InvoiceWriteResponse['notifications'] {
  if (row.notifications) return JSON.parse(row.notifications) as InvoiceWriteResponse['notifications'];
  return (row.email_pending ? recordedOutcome(row.public_id, row.email_pending) : null) ?? emptyOutcome(row.public_id, false);
}

/** Stored documents compared by content: key order is not a change. */
export function sameDocument(a: string, b: string): boolean {
  return requestHash(JSON.parse(a)) === requestHash(JSON.parse(b));
}

export function etagMatches(ifMatch: string, row: InvoiceRow): boolean {
  const current = etagOf(row.public_id, row.revision);
  return ifMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === current);
}

export function notFound(publicId: string): ApiError {
  return new ApiError('document_not_found', {
    details: `no document ${publicId} in this team`,
    document_public_id: publicId,
    document_kind: 'invoice',
  });
}

export function conflict(publicId: string): ApiError {
  return new ApiError('public_id_conflict', {
    details: `public_id "${publicId}" is already taken`,
    document_public_id: publicId,
    document_kind: 'invoice',
  });
}


/**
 * What EDO sync needs of a written document. The content hash covers what is sent (the document
 * without seller_status, and both participant ids), so a status change alone sends nothing again.
 * It is computed when EDO sync reads it: a document without `buyer_edo_id` (most) never does.
 */
export function edoSyncRequest(row: InvoiceRow, invoice: NormalizedInvoice): EdoSyncRequest {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  let contentHash: string | undefined;
  return {
    teamId: row.team_id,
    publicId: row.public_id,
    revision: row.revision,
    sellerStatus: row.seller_status,
    sellerEdoId: row.seller_edo_id,
    buyerEdoId: row.buyer_edo_id,
    get contentHash(): string {
      if (contentHash === undefined) {
        // What `row.document` holds (documentRowValues: the invoice, its public_id and seller_status),
        // without seller_status. Hashed as the object: requestHash sorts keys and drops undefined as
        // JSON does, so the digest is that of the stored JSON, without parsing it back.
        const content = extended(invoice, { public_id: row.public_id, seller_status: undefined });
        contentHash = requestHash({ content, seller: row.seller_edo_id, buyer: row.buyer_edo_id });
      }
      return contentHash;
    },
    document: {
      kind: 'invoice',
      publicId: row.public_id,
      revision: row.revision,
      number: invoice.number,
      date: invoice.date,
      currency: invoice.currency,
      total: row.total,
      title: documentTitle(invoice).title,
      seller: { name: row.seller_name, inn: row.seller_inn, kpp: text(invoice.seller.kpp) },
      buyer: { name: invoice.buyer.name, inn: text(invoice.buyer.inn), kpp: text(invoice.buyer.kpp) },
    },
  };
}
