/**
 * PostgreSQL: the documents' statements of fixed text, each one round trip. Rows of many items,
 * links and events go in as one array per column (`unnest`), so a text does not depend on how
 * many there are, Kysely compiles nothing per write, and outside a transaction the statement
 * runs as a named prepared statement (src/db/pg-statements.ts), parsed and planned once per
 * connection. A statement is atomic on its own: outside a transaction it commits alone (no
 * BEGIN/COMMIT round trips); run so, a statement the server aborted as a deadlock or
 * serialization failure stored nothing and is run again (src/db/pg-retry.ts).
 *
 * The team's document count is the sum of COUNTER_SHARDS rows; each transaction adds to the
 * shard `txid % COUNTER_SHARDS`, so concurrent creates of one team do not all wait on one row
 * lock. It is the shard the list triggers of the same transaction write (migration
 * 2026-11-26T1400_list_versions): one transaction holds at most one counter row of a team, so
 * two cannot deadlock on them.
 *
 * The events of a write are the events module's rows, written by the same statement through
 * its `pgDocumentEventsInsertUnnest`: that is what keeps a plain create and a quiet update one
 * round trip (12 → 2 round trips per create; PUT 178 → 489 req/s, docs/performance.md).
 */
import { CompiledQuery } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { COUNTER_SHARDS } from '../../../db/document-counts.js';
import { nameStatement } from '../../../db/pg-statements.js';
import { retryPgConflicts } from '../../../db/pg-retry.js';
import type { Insertable, InvoiceItemsTable, ShareLinksTable, InvoicesTable } from '../../../db/types.js';
import type { DocumentEventsInsert } from '../../events/index.js';
import type { DocumentUpdate, NewDocumentRows } from './index.js';

/**
 * Adds `n` documents to the team's count, on the transaction's shard: the one write of the
 * counter (`team` and `n` are placeholders or literals of the statement it is part of).
 */
function addDocumentsSql(team: string, n: string): string {
  return (
    `insert into "team_document_counts" ("team_id", "shard", "documents") values (${team}, mod(txid_current(), ${COUNTER_SHARDS})::int, ${n}) ` +
    `on conflict ("team_id", "shard") do update set "documents" = team_document_counts.documents + ${n}`
  );
}

const ADD_DOCUMENTS = addDocumentsSql('$1', '$2::int');

/** Adds `n` documents to the team's count (documents inserted otherwise than by `insertNewDocument`). */
export async function addDocuments(db: Executor, teamId: string, n: number): Promise<void> {
  if (n > 0) await db.executeQuery(CompiledQuery.raw(ADD_DOCUMENTS, [teamId, n]));
}

const INVOICE_COLUMNS = [
  'number', 'date', 'currency', 'direction', 'seller_org_id', 'seller_inn', 'seller_name', 'buyer_inn', 'buyer_name',
  'search_text', 'seller_status', 'service_status', 'service_status_reason', 'editor_mode', 'source_type', 'subtotal',
  'vat_total', 'total', 'public_share_enabled', 'information_system', 'seller_edo_id', 'buyer_edo_id', 'document',
  'changed_at', 'validation', 'last_modified_at', 'last_modified_by_login', 'api_key_id', 'api_key_name',
  'api_request_host', 'team_id', 'public_id', 'revision', 'link_epoch', 'package_public_id', 'buyer_status', 'created_at',
  'created_by_login', 'api_created_at', 'api_updated_at', 'notifications', 'viewed_at', 'payment_reported_at',
  'edo_pending_job', 'email_pending', 'traceparent',
] as const satisfies ReadonlyArray<keyof InvoicesTable>;
/** The item columns after team_id and public_id, with the array type each travels as. */
const ITEM_COLUMNS = [
  ['line_no', 'int'], ['name', 'text'], ['qty', 'text'], ['unit', 'text'], ['price', 'text'], ['vat_pct', 'text'],
  ['amount', 'text'], ['net', 'text'], ['vat', 'text'], ['gross', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof InvoiceItemsTable, string]>;
const LINK_COLUMNS = [
  ['token', 'text'], ['kind', 'text'], ['email', 'text'], ['name', 'text'], ['position', 'text'], ['sort_order', 'int'],
  ['created_at', 'text'], ['last_opened_at', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof ShareLinksTable, string]>;

/**
 * `insert into "table" (columns) select ... from unnest(arrays)`: many rows, a fixed text. Each
 * column travels as one array parameter (`param(i)` for the i-th, asked in order); `fixed` columns
 * come first and take the same value in every row (SQL, e.g. a parameter). Under `condition`
 * (SQL) when given.
 */
function pgUnnestInsert(
  table: string,
  columns: ReadonlyArray<readonly [string, string]>,
  param: (i: number) => string,
  condition: string | null,
  fixed: ReadonlyArray<readonly [string, string]> = [],
): string {
  const names = columns.map(([c]) => `"${c}"`).join(', ');
  const all = [...fixed.map(([c]) => `"${c}"`), names].join(', ');
  const values = [...fixed.map(([, value]) => value), ...columns.map(([c]) => `r."${c}"`)].join(', ');
  return (
    `insert into "${table}" (${all}) select ${values} ` +
    `from unnest(${columns.map(([, type], i) => `${param(i)}::${type}[]`).join(', ')}) as r(${names})` +
    (condition ? ` where ${condition}` : '')
  );
}

/** The new document's statement: the invoice, its team's count, its items, links and events (parameters in `newDocumentPgValues`' order). */
function buildNewDocumentPg(): string {
  let n = 0;
  const next = () => `$${++n}`;
  const columns = INVOICE_COLUMNS.map((c) => `"${c}"`).join(', ');
  const invoice = `insert into "invoices" (${columns}) values (${INVOICE_COLUMNS.map(next).join(', ')})`;
  const team = next();
  const publicId = next();
  const fromArrays = (table: string, cols: ReadonlyArray<readonly [string, string]>) =>
    pgUnnestInsert(table, cols, next, null, [
      ['team_id', team],
      ['public_id', publicId],
    ]);
  const items = fromArrays('invoice_items', ITEM_COLUMNS);
  const links = fromArrays('share_links', LINK_COLUMNS);
  const first = n;
  const events = pgDocumentEventsInsertUnnest((i) => `$${first + i + 1}`, []);
  return `with "new_invoice" as (${invoice}), "counted" as (${addDocumentsSql(team, '1')}), "new_items" as (${items}), "new_links" as (${links}) ${events.text}`;
}

/**
 * The events module's insert of document events (its PostgreSQL store), given by
 * `createPostgresInvoiceStore` before any write: the composition root hands it over, so this
 * module never imports another module's statement text.
 */
let eventsInsert: DocumentEventsInsert | null = null;

export function useDocumentEventsInsert(insert: DocumentEventsInsert): void {
  eventsInsert = insert;
}

function pgDocumentEventsInsertUnnest(...args: Parameters<DocumentEventsInsert>): ReturnType<DocumentEventsInsert> {
  if (eventsInsert === null) throw new Error('the invoices PostgreSQL store was built without the events insert');
  return eventsInsert(...args);
}

/** The new document's statement, built (and named) on the first create. */
let newDocumentText: string | null = null;

function newDocumentPg(): string {
  if (newDocumentText === null) {
    newDocumentText = buildNewDocumentPg();
    nameStatement(newDocumentText);
  }
  return newDocumentText;
}

/** Whether `row` sets exactly `columns` (a column set to null counts; undefined does not). */
function hasExactly(row: object, columns: ReadonlyArray<string>, extra: ReadonlyArray<string> = []): boolean {
  const r = row as Record<string, unknown>;
  let defined = 0;
  for (const key in r) if (r[key] !== undefined) defined++;
  return defined === columns.length + extra.length && [...columns, ...extra].every((c) => r[c] !== undefined);
}

/** The parameters of the new document's statement for `doc`; its rows must have exactly the fixed columns (every write builds them so). */
function newDocumentPgValues(doc: NewDocumentRows): unknown[] {
  const row = doc.row as Record<string, unknown>;
  const { team_id: teamId, public_id: publicId } = doc.row;
  const key = ['team_id', 'public_id'];
  const ours = (r: { team_id: string; public_id: string }) => r.team_id === teamId && r.public_id === publicId;
  const items = doc.items as Array<Record<string, unknown> & { team_id: string; public_id: string }>;
  const links = doc.links as Array<Record<string, unknown> & { team_id: string; public_id: string }>;
  const itemNames = ITEM_COLUMNS.map(([c]) => c);
  const linkNames = LINK_COLUMNS.map(([c]) => c);
  if (!hasExactly(row, INVOICE_COLUMNS) || !items.every((i) => ours(i) && hasExactly(i, itemNames, key)) || !links.every((l) => ours(l) && hasExactly(l, linkNames, key))) {
    throw new Error('a new document whose rows do not have the columns of the new document statement');
  }
  const values: unknown[] = INVOICE_COLUMNS.map((c) => row[c]);
  values.push(teamId, publicId);
  for (const c of itemNames) values.push(items.map((i) => i[c]));
  for (const c of linkNames) values.push(links.map((l) => l[c]));
  values.push(...pgDocumentEventsInsertUnnest(() => '', doc.events).values);
  return values;
}

/**
 * A new document in ONE statement: the invoice, its items, its share links, its team's document
 * count and its events, as data-modifying CTEs. The items' and links' foreign keys are checked
 * at the end of the statement, when the invoice row is there; a taken `public_id` fails the
 * whole statement with a unique violation, nothing written. Outside a transaction it commits
 * alone; inside one, it is one statement of it.
 */
export async function insertNewDocument(db: Executor, doc: NewDocumentRows): Promise<void> {
  const values = newDocumentPgValues(doc);
  const write = async (): Promise<void> => {
    await db.executeQuery(CompiledQuery.raw(newDocumentPg(), values));
  };
  return db.isTransaction ? write() : retryPgConflicts(write);
}

/**
 * An update in ONE statement (one round trip, one WAL flush, no BEGIN/COMMIT), for an update
 * with nothing else to write (no e-mail, no EDO job before or after): the invoice row under the
 * optimistic check, its revision row, the retention's delete, the items (changed lines
 * rewritten, lines beyond the new count deleted), the recipient links and the events, each
 * written only if the invoice row was. What the same update in a transaction writes, with one
 * difference that changes no row: the link epoch is checked too (the links written were
 * computed from the ones read with the row: a rotation since then makes it not apply).
 * 'applied', or the stored revision when the row was not written (undefined: no such document).
 */
export async function updateDocument(db: Executor, u: DocumentUpdate): Promise<'applied' | { revision: number | undefined }> {
  const columns: string[] = [];
  const setValues: unknown[] = [];
  for (const [column, value] of Object.entries(u.set)) {
    if (value === undefined) continue;
    columns.push(column);
    setValues.push(value);
  }
  const text = documentUpdateText(columns);
  const r = u.revision;
  const values: unknown[] = [
    ...setValues,
    u.teamId,
    u.publicId,
    u.expectedRevision,
    u.expectedLinkEpoch,
    r.revision, r.document, r.seller_status, r.total, r.editor_mode, r.modified_at, r.modified_by_login, r.api_key_id, r.superseded_at,
    u.pruneUpTo,
    u.items.length,
  ];
  const items = u.items as Array<Record<string, unknown>>;
  for (const [c] of ITEM_COLUMNS) values.push(items.map((i) => i[c] ?? null));
  values.push(u.links.removed);
  values.push(u.links.moved.map((l) => l.token), u.links.moved.map((l) => l.sort_order), u.links.moved.map((l) => l.name), u.links.moved.map((l) => l.position));
  const fresh = u.links.fresh as Array<Record<string, unknown>>;
  for (const [c] of LINK_COLUMNS) values.push(fresh.map((l) => l[c] ?? null));
  values.push(...pgDocumentEventsInsertUnnest(() => '', u.events).values);
  const write = async () => {
    const result = await db.executeQuery<{ applied: number | string; revision: number | null }>(CompiledQuery.raw(text, values));
    const row = result.rows[0];
    return Number(row?.applied ?? 0) === 1 ? ('applied' as const) : { revision: row?.revision ?? undefined };
  };
  return db.isTransaction ? write() : retryPgConflicts(write);
}

/** The text of `updateDocument` per set of columns set (a handful of shapes; bounded all the same). */
const documentUpdateTexts = new Map<string, string>();
const UPDATE_SHAPES_MAX = 16;

function documentUpdateText(columns: string[]): string {
  const key = columns.join(',');
  let text = documentUpdateTexts.get(key);
  if (text !== undefined) return text;
  let n = 0;
  const next = () => `$${++n}`;
  const set = columns.map((c) => `"${c}" = ${next()}`).join(', ');
  const [team, publicId, expected, epoch] = [next(), next(), next(), next()];
  const scope = `"team_id" = ${team} and "public_id" = ${publicId}`;
  const applied = 'exists (select 1 from "upd")';
  const revisionColumns: Array<[string, string]> = [
    ['revision', 'int'], ['document', 'text'], ['seller_status', 'text'], ['total', 'text'], ['editor_mode', 'text'], ['modified_at', 'text'],
    ['modified_by_login', 'text'], ['api_key_id', 'bigint'], ['superseded_at', 'text'],
  ];
  const revision =
    `insert into "invoice_revisions" ("team_id", "public_id", ${revisionColumns.map(([c]) => `"${c}"`).join(', ')}) ` +
    `select ${team}, ${publicId}, ${revisionColumns.map(([, type]) => `${next()}::${type}`).join(', ')} where ${applied}`;
  const pruneUpTo = next();
  const itemCount = next();
  const ours = [
    ['team_id', team],
    ['public_id', publicId],
  ] as const;
  const items = itemsUpsert(next, applied, ours);
  const removed = next();
  const [movedToken, movedOrder, movedName, movedPosition] = [next(), next(), next(), next()];
  const freshLinks = pgUnnestInsert('share_links', LINK_COLUMNS, next, applied, ours);
  const first = n + 1;
  const events = pgDocumentEventsInsertUnnest((i) => `$${first + i}`, [], applied).text;
  text =
    `with "upd" as (update "invoices" set ${set} where ${scope} and "revision" = ${expected} and "link_epoch" = ${epoch} returning 1), ` +
    `"new_revision" as (${revision}), ` +
    `"pruned" as (delete from "invoice_revisions" where ${scope} and "revision" <= ${pruneUpTo} and ${applied}), ` +
    `"items" as (${items}), ` +
    `"items_gone" as (delete from "invoice_items" where ${scope} and "line_no" > ${itemCount} and ${applied}), ` +
    `"links_gone" as (delete from "share_links" where ${scope} and "token" = any(${removed}::text[]) and ${applied}), ` +
    `"links_moved" as (update "share_links" as s set "sort_order" = m."sort_order", "name" = m."name", "position" = m."position" ` +
    `from unnest(${movedToken}::text[], ${movedOrder}::int[], ${movedName}::text[], ${movedPosition}::text[]) as m("token", "sort_order", "name", "position") ` +
    `where s."team_id" = ${team} and s."public_id" = ${publicId} and s."token" = m."token" and ${applied}), ` +
    `"links_new" as (${freshLinks}), ` +
    `"new_events" as (${events}) ` +
    `select (select count(*) from "upd") as "applied", (select "revision" from "invoices" where ${scope}) as "revision"`;
  if (documentUpdateTexts.size >= UPDATE_SHAPES_MAX) documentUpdateTexts.clear();
  documentUpdateTexts.set(key, text);
  nameStatement(text);
  return text;
}

/**
 * The items as `items` says: lines written where they differ from the stored ones (`is distinct
 * from`: an unchanged line is not rewritten, and keeps its pages out of the WAL), new lines
 * inserted. Lines beyond the new count are deleted by the caller's statement.
 */
function itemsUpsert(next: () => string, condition: string | null, ours: ReadonlyArray<readonly [string, string]>): string {
  const names = ITEM_COLUMNS.map(([c]) => c).filter((c) => c !== 'line_no');
  const changed = `(${names.map((c) => `"invoice_items"."${c}"`).join(', ')}) is distinct from (${names.map((c) => `excluded."${c}"`).join(', ')})`;
  return (
    `${pgUnnestInsert('invoice_items', ITEM_COLUMNS, next, condition, ours)} ` +
    `on conflict ("team_id", "public_id", "line_no") do update set ${names.map((c) => `"${c}" = excluded."${c}"`).join(', ')} where ${changed}`
  );
}

/** An update's items in its transaction: `itemsUpsert` and the lines beyond the new count deleted, one statement. */
const REWRITE_ITEMS = (() => {
  let n = 0;
  const next = () => `$${++n}`;
  const [team, publicId] = [next(), next()];
  const items = itemsUpsert(next, null, [
    ['team_id', team],
    ['public_id', publicId],
  ]);
  const count = next();
  return `with "items" as (${items}), "items_gone" as (delete from "invoice_items" where "team_id" = ${team} and "public_id" = ${publicId} and "line_no" > ${count}) select 1`;
})();
nameStatement(REWRITE_ITEMS);

export async function rewriteItems(trx: Executor, teamId: string, publicId: string, items: Array<Insertable<InvoiceItemsTable>>): Promise<void> {
  const rows = items as Array<Record<string, unknown>>;
  const values: unknown[] = [teamId, publicId];
  for (const [c] of ITEM_COLUMNS) values.push(rows.map((i) => i[c] ?? null));
  values.push(items.length);
  await trx.executeQuery(CompiledQuery.raw(REWRITE_ITEMS, values));
}
