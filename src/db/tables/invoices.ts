/**
 * The tables of the invoices module, their one writer: the documents, their items, share links
 * and kept revisions, the Idempotency-Key records, and the per-team counters the documents'
 * triggers keep (document counts, list version, stored bytes, month counts). Conventions:
 * src/db/types.ts.
 */
import type { Generated, Selectable } from 'kysely';

export interface InvoicesTable {
  team_id: string;
  public_id: string;
  revision: number;
  package_public_id: string;
  number: string;
  date: string;
  currency: string;
  direction: string;
  seller_org_id: string;
  seller_inn: string;
  seller_name: string;
  buyer_inn: string | null;
  buyer_name: string;
  /** Lower-cased number, names and INNs: what `q` matches as a substring. */
  search_text: string;
  seller_status: string;
  buyer_status: string;
  service_status: string;
  service_status_reason: string;
  editor_mode: string;
  source_type: string;
  subtotal: string;
  vat_total: string;
  total: string;
  public_share_enabled: number;
  /** Moved on by `links rotate`: portal tokens of an older epoch are refused. */
  link_epoch: Generated<number>;
  information_system: string | null;
  seller_edo_id: string | null;
  buyer_edo_id: string | null;
  /** The stored document (JSON). */
  document: string;
  /** The validation outcome (JSON). */
  validation: string;
  /** The latest notification outcome (JSON), null before any. */
  notifications: string | null;
  created_at: string;
  last_modified_at: string;
  created_by_login: string | null;
  last_modified_by_login: string | null;
  api_key_id: number | null;
  api_key_name: string | null;
  api_request_host: string | null;
  api_created_at: string | null;
  api_updated_at: string | null;
  viewed_at: string | null;
  payment_reported_at: string | null;
  /** Moved by any change of the document: writes, statuses, e-mail and EDO news (every event about it). */
  changed_at: string | null;
  /**
   * The id of the EDO send its create asked for, while the job and its outbox row are not yet
   * written (the worker or the next update writes them and clears it; docs/edo.md).
   */
  edo_pending_job: string | null;
  /**
   * The e-mails its create asked for, while their outbox rows are not yet written (the
   * notifications worker or the next update writes them and clears it; docs/notifications.md).
   */
  email_pending: string | null;
  /** The W3C traceparent of the write that last wrote the row, when tracing is on (its recorded sends continue it). */
  traceparent: string | null;
}

export interface InvoiceItemsTable {
  team_id: string;
  public_id: string;
  line_no: number;
  name: string;
  qty: string;
  unit: string;
  price: string;
  vat_pct: string | null;
  amount: string;
  net: string;
  vat: string;
  gross: string;
}

export interface ShareLinksTable {
  team_id: string;
  public_id: string;
  token: string;
  kind: 'buyer' | 'colleague' | 'recipient';
  email: string | null;
  name: string | null;
  position: string | null;
  sort_order: number;
  created_at: string;
  last_opened_at: string | null;
}

export interface InvoiceRevisionsTable {
  team_id: string;
  public_id: string;
  revision: number;
  document: string;
  seller_status: string;
  total: string;
  editor_mode: string;
  modified_at: string;
  modified_by_login: string | null;
  api_key_id: number | null;
  superseded_at: string;
}

export interface IdempotencyKeysTable {
  team_id: string;
  idem_key: string;
  request_hash: string;
  state: 'pending' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

/** A share of a team's document count (src/db/document-counts.ts); the count is the sum. */
export interface TeamDocumentCountsTable {
  team_id: string;
  shard: number;
  documents: number;
  /** The team's list version, summed over shards (migration 2026-11-26T1400_list_versions). */
  changes: Generated<number>;
  /** Bytes of the team's stored documents and kept revisions, summed over shards (migration 2026-11-29T0900). */
  stored_bytes: Generated<number>;
}

/** Documents of a team per month of `date` (`YYYY-MM`), summed over shards. */
export interface TeamMonthCountsTable {
  team_id: string;
  month: string;
  shard: number;
  documents: number;
}

export interface InvoicesTables {
  invoices: InvoicesTable;
  invoice_items: InvoiceItemsTable;
  share_links: ShareLinksTable;
  invoice_revisions: InvoiceRevisionsTable;
  idempotency_keys: IdempotencyKeysTable;
  team_document_counts: TeamDocumentCountsTable;
  team_month_counts: TeamMonthCountsTable;
}

export type InvoiceRow = Selectable<InvoicesTable>;
export type ShareLinkRow = Selectable<ShareLinksTable>;
export type InvoiceRevisionRow = Selectable<InvoiceRevisionsTable>;
