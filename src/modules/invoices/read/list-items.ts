/** Read-side shapes: the list's items and the revisions' list and detail. */
import type { InvoiceRevisionRow, InvoiceRow } from '../../../db/types.js';
import { shareUrls, type LinkBases } from '../../links/index.js';
import { type Tariff } from '../../teams/index.js';
import type { InvoiceList, InvoiceRevisionDetail, InvoiceRevisionList } from '../invoice-requests.schemas.js';
import type { InvoiceListRow, RevisionSummaryRow } from '../store/index.js';
import { serviceRestriction, statusBlock } from '../view/invoice-view.js';

export function buildListItem(r: InvoiceListRow, bases: LinkBases, tariff: Tariff): InvoiceList['items'][number] {
  const restriction = serviceRestriction(tariff) || (r.service_status === 'restricted' ? r.service_status_reason : '');
  return {
    public_id: r.public_id,
    number: r.number,
    date: r.date,
    currency: r.currency,
    direction: r.direction,
    seller_name: r.seller_name,
    seller_inn: r.seller_inn,
    buyer_name: r.buyer_name,
    buyer_inn: r.buyer_inn,
    totals: { subtotal: Number(r.subtotal), vat_total: Number(r.vat_total), total: Number(r.total) },
    status: statusBlock(r.seller_status, r.buyer_status, restriction ? 'restricted' : 'active', restriction),
    editor_mode: r.editor_mode,
    created_at: r.created_at,
    last_modified_at: r.last_modified_at,
    changed_at: r.changed_at ?? r.last_modified_at,
    invoice_url: r.buyer_token ? shareUrls(bases, r.buyer_token).url : '',
  };
}

export function buildRevisionList(
  current: InvoiceRow,
  page: { rows: RevisionSummaryRow[]; total: number },
  limit: number,
  offset: number,
): InvoiceRevisionList {
  return {
    ok: true,
    public_id: current.public_id,
    current_revision: current.revision,
    total: page.total,
    limit,
    offset,
    revisions: page.rows.map((r) => ({
      revision: r.revision,
      modified_at: r.modified_at,
      modified_by_login: r.modified_by_login,
      editor_mode: r.editor_mode,
      seller_status: r.seller_status,
      total: Number(r.total),
      superseded_at: r.superseded_at,
    })),
  };
}

/** One revision with its document: a previous one, or the current one (`superseded_at` null). */
export function buildRevisionDetail(current: InvoiceRow, revision: InvoiceRevisionRow | null): InvoiceRevisionDetail {
  const source = revision ?? {
    revision: current.revision,
    modified_at: current.last_modified_at,
    modified_by_login: current.last_modified_by_login,
    editor_mode: current.editor_mode,
    seller_status: current.seller_status,
    total: current.total,
    document: current.document,
    superseded_at: null,
  };
  return {
    ok: true,
    public_id: current.public_id,
    current_revision: current.revision,
    revision: source.revision,
    modified_at: source.modified_at,
    modified_by_login: source.modified_by_login,
    editor_mode: source.editor_mode,
    seller_status: source.seller_status,
    total: Number(source.total),
    superseded_at: source.superseded_at,
    invoice: JSON.parse(source.document) as Record<string, unknown>,
  };
}
