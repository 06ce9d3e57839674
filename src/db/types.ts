/**
 * Table types for Kysely. Portable choices: timestamps are ISO-8601 UTC text, calendar
 * dates are `YYYY-MM-DD` text, flags are integers 0/1, money is decimal text. Tenant tables
 * lead their keys with `team_id`.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface SettingsTable {
  key: string;
  value: string;
}

export interface TariffsTable {
  id: string;
  max_organizations: number;
  max_api_keys: number;
  key_per_sec: number;
  key_per_min: number;
  key_per_day: number;
  team_per_sec: number;
  team_per_min: number;
  team_per_day: number;
  emails_per_day: number;
  external_share: number;
  max_webhook_endpoints: Generated<number>;
  /** The stored size of the team's documents and kept revisions may not pass this (migration 2026-11-29T0900). */
  max_storage_mb: Generated<number>;
  updated_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  tariff_id: string | null;
  locale: string;
  created_at: string;
  updated_at: string;
  /** Moved on by triggers with every write to the team's organizations, bank accounts, managers or signers (migration 2026-11-26T1410). */
  catalog_version: Generated<number>;
}

export interface ApiKeysTable {
  id: number;
  /** null for a service key, which needs `x-tenant-id` to name the team. */
  team_id: string | null;
  kind: 'team' | 'service';
  name: string;
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  secret_hash: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface OrganizationsTable {
  team_id: string;
  id: string;
  sort_order: number;
  name: string;
  inn: string;
  kpp: string | null;
  email: string | null;
  address: string | null;
  edo_id: string | null;
  active: number;
  updated_at: string;
}

export interface BankAccountsTable {
  team_id: string;
  id: string;
  organization_id: string;
  sort_order: number;
  bank_name: string | null;
  bik: string | null;
  account: string | null;
  corr_account: string | null;
  is_default: number;
  updated_at: string;
}

export interface ManagersTable {
  team_id: string;
  id: string;
  sort_order: number;
  name: string;
  email: string | null;
  phone: string | null;
  updated_at: string;
}

export interface SignersTable {
  team_id: string;
  id: string;
  organization_id: string | null;
  sort_order: number;
  name: string;
  position: string | null;
  role: string | null;
  updated_at: string;
}

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

export interface Database {
  invoices: InvoicesTable;
  invoice_items: InvoiceItemsTable;
  share_links: ShareLinksTable;
  invoice_revisions: InvoiceRevisionsTable;
  idempotency_keys: IdempotencyKeysTable;
  settings: SettingsTable;
  tariffs: TariffsTable;
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  organizations: OrganizationsTable;
  bank_accounts: BankAccountsTable;
  managers: ManagersTable;
  signers: SignersTable;
  team_document_counts: TeamDocumentCountsTable;
  team_month_counts: TeamMonthCountsTable;
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

export type TariffRow = Selectable<TariffsTable>;
export type TeamRow = Selectable<TeamsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type BankAccountRow = Selectable<BankAccountsTable>;
export type ManagerRow = Selectable<ManagersTable>;
export type SignerRow = Selectable<SignersTable>;
export type InvoiceRow = Selectable<InvoicesTable>;
export type ShareLinkRow = Selectable<ShareLinksTable>;
export type InvoiceRevisionRow = Selectable<InvoiceRevisionsTable>;
export type { Generated, Insertable, Updateable };

// --- Outbox and e-mail quota (notifications) -----------------------------------------------

export type OutboxState = 'pending' | 'sending' | 'sent' | 'failed' | 'blocked' | 'superseded';

/**
 * A side effect written in the business transaction and delivered by a worker: today an
 * e-mail of one document revision to one recipient. `idem_key` is unique per team, so a
 * (revision, recipient) is never queued twice.
 */
export interface OutboxTable {
  team_id: string;
  id: string;
  kind: 'email' | 'edo_send';
  public_id: string;
  revision: number;
  /** Order of the recipient within the revision's e-mails. */
  position: number;
  /** The address as given (trimmed). */
  recipient: string;
  /** `${public_id}:${revision}:${recipient lower-cased}`. */
  idem_key: string;
  /** Fixed at enqueue time, so every attempt sends the same Message-ID. */
  message_id: string;
  /** Everything needed to send without re-reading the document (JSON). */
  payload: string;
  state: OutboxState;
  /** Attempts started (counted when claimed, so a crash mid-send still counts). */
  attempts: number;
  max_attempts: number;
  next_attempt_at: string;
  /** Lease: the claimer's token and when its claim lapses. */
  locked_by: string | null;
  locked_until: string | null;
  /** The last SMTP reply or error, or the gate / `invalid_address`. */
  last_error: string | null;
  last_error_code: string | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
  /** The W3C traceparent of the write that queued the row, when tracing is on: its delivery's span continues it. */
  traceparent: string | null;
}

/** E-mails let through the gate per team and UTC day (`YYYY-MM-DD`). */
export interface EmailQuotaTable {
  team_id: string;
  day: string;
  reserved: number;
  updated_at: string;
}

/** PostgreSQL: shards 1–15 of a team's day; shard 0 is the `email_quota` row (quota.ts). */
export interface EmailQuotaShardsTable {
  team_id: string;
  day: string;
  shard: number;
  reserved: number;
  updated_at: string;
}

// Declaration merging keeps this section append-only.
export interface Database {
  outbox: OutboxTable;
  email_quota: EmailQuotaTable;
  email_quota_shards: EmailQuotaShardsTable;
}

export type OutboxRow = Selectable<OutboxTable>;

// --- EDO synchronization (edo) --------------------------------------------------------------

export type EdoJobStatus = 'queued' | 'sent' | 'delivered' | 'accepted' | 'rejected' | 'failed' | 'superseded';

/**
 * One revision of a document sent to the buyer through EDO. Its attempts, retry time and last
 * error live in the outbox row with the same id (`kind: 'edo_send'`); this row holds what the
 * operator reported.
 */
export interface EdoJobsTable {
  team_id: string;
  /** The outbox row id, and the operator's idempotency key. */
  job_id: string;
  public_id: string;
  revision: number;
  operator: string;
  seller_edo_id: string | null;
  buyer_edo_id: string;
  /** What was sent (document without seller_status, both participant ids), to send a change once. */
  content_hash: string;
  status: EdoJobStatus;
  operator_document_id: string | null;
  rejection_reason: string | null;
  queued_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  accepted_at: string | null;
  rejected_at: string | null;
  failed_at: string | null;
  updated_at: string;
}

/** A document the operator reported as referring to ours. */
export interface EdoLinksTable {
  team_id: string;
  public_id: string;
  link_document_id: string;
  job_id: string;
  kind: string;
  title: string;
  number: string | null;
  date: string | null;
  /** When the operator reported the link (its event's time): the order links are shown in. */
  linked_at: string;
  received_at: string;
}

/** An operator's change-feed cursor, advanced only after its events were applied. */
export interface EdoFeedsTable {
  feed: string;
  cursor: string | null;
  locked_by: string | null;
  locked_until: string | null;
  events_applied: number;
  last_polled_at: string | null;
  last_error: string | null;
  updated_at: string;
}

/** The sandbox operator's mailbox: one row per job it accepted. */
export interface EdoSandboxDocumentsTable {
  job_id: string;
  document_id: string;
  sender: string;
  recipient: string;
  send_attempts: number;
  /** 1 when the send went through (the events were scheduled). */
  accepted: number;
  created_at: string;
}

/** The sandbox operator's change feed, each event due at `at`. */
export interface EdoSandboxEventsTable {
  id: string;
  at: string;
  job_id: string;
  document_id: string;
  /** The event as JSON (an EdoEvent). */
  body: string;
}

export interface Database {
  edo_jobs: EdoJobsTable;
  edo_links: EdoLinksTable;
  edo_feeds: EdoFeedsTable;
  edo_sandbox_documents: EdoSandboxDocumentsTable;
  edo_sandbox_events: EdoSandboxEventsTable;
}

export type EdoJobRow = Selectable<EdoJobsTable>;
export type EdoLinkRow = Selectable<EdoLinksTable>;


/**
 * One change an integrator cares about, written in the change's transaction. Feed order is
 * (`tx_id`, `seq`); see the events module.
 */
export interface EventsTable {
  seq: Generated<number>;
  team_id: string;
  /** PostgreSQL: the writing transaction's id; SQLite: 0. */
  tx_id: Generated<number>;
  type: string;
  public_id: string | null;
  revision: number | null;
  /** The event's `data` (JSON). */
  data: string;
  created_at: string;
}

export interface WebhookEndpointsTable {
  team_id: string;
  id: string;
  url: string;
  /** JSON array of event types, or `["*"]`. */
  events: string;
  description: string;
  enabled: number;
  disabled_reason: string | null;
  /** The signing secret, encrypted with a key derived from the service secret. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  /** The last feed position fanned out to this endpoint. */
  cursor_tx: number;
  cursor_seq: number;
  /** Set at the first failed attempt after a success; the endpoint is disabled 3 days later. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryState = 'pending' | 'sending' | 'sent' | 'failed';

/** One event to one endpoint, leased like an outbox row. */
export interface WebhookDeliveriesTable {
  team_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The JSON body as sent (`{type, timestamp, data}`), the same on every attempt. */
  body: string;
  state: WebhookDeliveryState;
  attempts: number;
  next_attempt_at: string;
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  last_status_code: number | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  team_id: string;
  id: string;
  endpoint_id: string;
  delivery_id: string;
  event_id: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  at: string;
  next_attempt_at: string | null;
}

export interface Database {
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export type EventRow = Selectable<EventsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
