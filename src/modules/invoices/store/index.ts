/**
 * The invoices module's storage: one interface, one implementation per database, chosen once
 * by the composition root (src/stores.ts: `createSqliteInvoiceStore` or
 * `createPostgresInvoiceStore`). Everything invoice-specific that is SQL lives behind it; the
 * services, the reader and the rules never ask which database runs.
 *
 * - sqlite.ts: writes in the group commit (src/db/group-commit.ts), a new document's statements
 *   bound before its transaction and run straight on better-sqlite3; the FTS5 trigram table and
 *   the list plans for a planner without statistics (sqlite-search.ts); heavy reads on the
 *   reading threads (src/db/read-threads.ts); Idempotency-Key claims inside the document's write.
 * - postgres.ts: a plain create or an update that sends nothing in one statement of fixed text
 *   (postgres-statements.ts), every other write in a transaction run again after a deadlock or
 *   serialization failure; the pg_trgm index serves the plain LIKE; the Idempotency-Key claimed
 *   in one statement before the document's transaction.
 * - portable-*.ts: the Kysely queries that run unchanged on both.
 *
 * Methods that run inside a write's transaction take it first (`trx`); reads outside any
 * transaction use the store's own database. Every statement about a document takes its team.
 */
import type { Transaction } from 'kysely';
import type { Db, Executor } from '../../../db/database.js';
import type { TeamListState } from '../../../db/document-counts.js';
import type {
  Database,
  IdempotencyKeysTable,
  Insertable,
  InvoiceItemsTable,
  InvoiceRevisionRow,
  InvoiceRow,
  InvoicesTable,
  ShareLinkRow,
  ShareLinksTable,
} from '../../../db/types.js';
import type { Selectable } from 'kysely';
import type { DocumentEventInput } from '../../events/index.js';

export type { TeamListState };

/** A new document's rows: the invoice, its items and share links, and the events of its creation. */
export interface NewDocumentRows {
  row: Insertable<InvoicesTable>;
  items: Array<Insertable<InvoiceItemsTable>>;
  links: Array<Insertable<ShareLinksTable>>;
  events: DocumentEventInput[];
}

/** A new document made ready for `insertNewDocument` before its transaction (`prepareNewDocument`). */
export interface PreparedNewDocument {
  readonly rows: NewDocumentRows;
}

/** What writing an update on its own needs, read with the document (`findForUpdate`). */
export interface UpdateAlone {
  /** The document's share links as they were read with it. */
  links: ShareLinkRow[];
  /** Whether it has any EDO job (an update of such a document compares with the last one). */
  hasEdoJobs: boolean;
}

/** An update of a document that sends nothing (no e-mail, no EDO job), written on its own (`updateDocumentAlone`). */
export interface DocumentUpdate {
  teamId: string;
  publicId: string;
  /** The row is written only while its revision and link epoch are still these. */
  expectedRevision: number;
  expectedLinkEpoch: number;
  /** The invoice's columns to set (undefined: left alone), as `updateInvoice` takes them. */
  set: Partial<Insertable<InvoicesTable>>;
  /** The revision row keeping the document as it was. */
  revision: InvoiceRevisionRow;
  /** Previous revisions up to this one are deleted (retention; 0: none). */
  pruneUpTo: number;
  items: Array<Insertable<InvoiceItemsTable>>;
  /** Share links: recipients' new order, name and position; tokens removed; new links. */
  links: { moved: ShareLinkRow[]; removed: string[]; fresh: Array<Insertable<ShareLinksTable>> };
  events: DocumentEventInput[];
}

export interface ListFilters {
  q?: string | undefined;
  dateFrom?: string | undefined;
  dateTo?: string | undefined;
  updatedSince?: string | undefined;
  /** `changed_at >= changedSince` (any change, including statuses, e-mail and EDO news). */
  changedSince?: string | undefined;
  limit: number;
  offset: number;
}

/**
 * What the caller of `listInvoices` already knows, read in its request after the list version:
 * the team's document count (`listState`), or the filter's exact total kept at that version.
 */
export interface KnownTotals {
  documents?: number | undefined;
  total?: number | undefined;
}

export type InvoiceListRow = Pick<
  InvoiceRow,
  | 'public_id'
  | 'number'
  | 'date'
  | 'currency'
  | 'direction'
  | 'seller_name'
  | 'seller_inn'
  | 'buyer_name'
  | 'buyer_inn'
  | 'subtotal'
  | 'vat_total'
  | 'total'
  | 'seller_status'
  | 'buyer_status'
  | 'service_status'
  | 'service_status_reason'
  | 'editor_mode'
  | 'created_at'
  | 'last_modified_at'
  | 'changed_at'
> & { buyer_token: string | null };

export type RevisionSummaryRow = Omit<InvoiceRevisionRow, 'document' | 'api_key_id' | 'team_id' | 'public_id'>;

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

/** The Idempotency-Key records (write/idempotency.ts holds the rules). */
export interface IdempotencyKeys {
  /**
   * The claim as a statement of its own, before the document's transaction: the team's expired
   * keys swept and the key inserted `pending` (or an expired record of it replaced); true when
   * the key is this request's now. Null where claims are made inside the document's write
   * instead (`deleteExpiredKeys` and `insertClaim` in its transaction: SQLite).
   */
  claimAlone(teamId: string, key: string, hash: string, claimedAt: string, expiresAt: string): Promise<boolean | null>;
  findKey(db: Executor, teamId: string, key: string): Promise<IdempotencyKeyRow | undefined>;
  deleteExpiredKeys(trx: Executor, teamId: string, now: string): Promise<void>;
  /** Throws a unique violation when the key exists. */
  insertClaim(trx: Executor, teamId: string, key: string, hash: string, claimedAt: string, expiresAt: string): Promise<void>;
  /** A lapsed pending claim (created at `lapsedAt`) taken over by this request; false when another took it. */
  takeOverLapsedClaim(db: Executor, teamId: string, key: string, lapsedAt: string, claim: { hash: string; claimedAt: string; expiresAt: string }): Promise<boolean>;
  /** In the write's transaction: the answer as committed, with its status when final. False when the claim is no longer ours. */
  recordCommitted(trx: Executor, teamId: string, key: string, claimedAt: string, body: string, status: number | null): Promise<boolean>;
  /** Nothing was stored: the key is released (if still ours). */
  releaseClaim(trx: Executor, teamId: string, key: string, claimedAt: string): Promise<void>;
  /** The final answer (after the delivery attempt) replaces the committed one. */
  recordFinal(trx: Executor, teamId: string, key: string, claimedAt: string, status: number, body: string): Promise<void>;
}

export interface InvoiceStore {
  /** Reads outside any transaction go here. */
  readonly db: Db;
  /**
   * A write transaction; resolves after its commit. SQLite: shared with the writes arriving
   * together (the group commit, each write in a savepoint). PostgreSQL: one per call, run again
   * when the server aborts it as a deadlock or serialization failure, so `work` writes through
   * `trx` only and can be run again.
   */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;

  findInvoice(db: Executor, teamId: string, publicId: string): Promise<InvoiceRow | undefined>;
  listShareLinks(db: Executor, teamId: string, publicId: string): Promise<ShareLinkRow[]>;
  /** The document and its share links (PostgreSQL: one statement; SQLite: both reads at once). */
  findWithLinks(teamId: string, publicId: string): Promise<{ row: InvoiceRow | undefined; links: ShareLinkRow[] }>;
  /**
   * Before an update: the document, and what writing the update on its own needs, read with it
   * (PostgreSQL, one statement); `alone` null where updates are written in a transaction only
   * (SQLite, whose group commit is its fast path).
   */
  findForUpdate(teamId: string, publicId: string): Promise<{ row: InvoiceRow | undefined; alone: UpdateAlone | null }>;
  /** Whether any team holds the id (client-supplied ids are unique across teams). */
  publicIdTaken(publicId: string): Promise<boolean>;
  /** The team of the document with this public id, for operator commands. */
  findDocumentTeam(publicId: string): Promise<string | undefined>;
  /**
   * The team's document count, list version and stored bytes in one read. Read the version
   * BEFORE the page it validates: a write committing between the two then leaves a page newer
   * than its version, which the next request's version no longer matches (never the reverse).
   */
  listState(teamId: string): Promise<TeamListState>;
  /** One page in the list order (date desc, creation desc, public_id desc) and the count of all matches. */
  listInvoices(teamId: string, filters: ListFilters, known?: KnownTotals): Promise<{ rows: InvoiceListRow[]; total: number }>;
  /** A page of the document's previous revisions, newest first, without their documents. */
  listRevisions(teamId: string, publicId: string, page: { limit: number; offset: number }): Promise<{ rows: RevisionSummaryRow[]; total: number }>;
  /** One previous revision with its document. */
  findRevision(teamId: string, publicId: string, revision: number): Promise<InvoiceRevisionRow | undefined>;

  /**
   * Adds `n` new documents to the team's count (the unfiltered list's `total`); in the
   * transaction that inserts them. A new document's own statements include it already.
   */
  addDocuments(trx: Executor, teamId: string, n: number): Promise<void>;
  /** A new document made ready before its transaction (SQLite: its statements compiled and bound). */
  prepareNewDocument(doc: NewDocumentRows): PreparedNewDocument;
  /** In the creating transaction: the document, its team's count, items, links and events. */
  insertNewDocument(trx: Executor, prepared: PreparedNewDocument): Promise<void>;
  /**
   * A new document with nothing else to write, written on its own: PostgreSQL, one statement
   * that commits alone (one round trip). Null, at once and `build` not called, where new
   * documents are written only in `transaction` (SQLite's group commit).
   */
  insertNewDocumentAlone(build: () => NewDocumentRows): Promise<void> | null;

  /** Optimistic update: applies only when the stored revision is still `expectedRevision`. */
  updateInvoice(trx: Executor, teamId: string, publicId: string, expectedRevision: number, set: Partial<Insertable<InvoicesTable>>): Promise<boolean>;
  insertRevision(trx: Executor, row: InvoiceRevisionRow): Promise<void>;
  /** The retention rule: deletes the document's previous revisions older than the newest `keep`. */
  pruneRevisions(trx: Executor, teamId: string, publicId: string, newestKept: number, keep: number): Promise<void>;
  /** An update's items: the stored ones become `items`, lines unchanged left unwritten. */
  rewriteItems(trx: Executor, teamId: string, publicId: string, items: Array<Insertable<InvoiceItemsTable>>): Promise<void>;
  insertShareLinks(trx: Executor, links: Array<Insertable<ShareLinksTable>>): Promise<void>;
  deleteShareLinks(trx: Executor, teamId: string, publicId: string, tokens: string[]): Promise<void>;
  updateShareLinkOrder(trx: Executor, teamId: string, token: string, values: { sort_order: number; name: string | null; position: string | null }): Promise<void>;
  /**
   * An update read with `findForUpdate`'s `alone` and sending nothing, written on its own (one
   * statement, PostgreSQL): 'applied', or the stored revision when it did not apply (undefined:
   * no such document). Only where `findForUpdate` answers `alone`.
   */
  updateDocumentAlone(u: DocumentUpdate): Promise<'applied' | { revision: number | undefined }>;

  keys: IdempotencyKeys;
}
