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
  updated_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  tariff_id: string | null;
  locale: string;
  created_at: string;
  updated_at: string;
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

export type OutboxState = 'pending' | 'sending' | 'sent' | 'failed' | 'blocked';

/**
 * A side effect written in the business transaction and delivered by a worker: today an
 * e-mail of one document revision to one recipient. `idem_key` is unique per team, so a
 * (revision, recipient) is never queued twice.
 */
export interface OutboxTable {
  team_id: string;
  id: string;
  kind: 'email';
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
}

/** E-mails let through the gate per team and UTC day (`YYYY-MM-DD`). */
export interface EmailQuotaTable {
  team_id: string;
  day: string;
  reserved: number;
  updated_at: string;
}

// Declaration merging keeps this section append-only.
export interface Database {
  outbox: OutboxTable;
  email_quota: EmailQuotaTable;
}

export type OutboxRow = Selectable<OutboxTable>;
