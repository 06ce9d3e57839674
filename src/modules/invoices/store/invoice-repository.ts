/** SQL of the documents module. Every function takes the executor first and the team. */
import { CompiledQuery, sql, type Insertable, type Kysely } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { addDocuments, addDocumentsQuery, pgAddOneDocumentSql, teamDocumentCount, teamListState, teamMonthDocuments, type TeamListState } from '../../../db/document-counts.js';
import { edoJobsExistSql } from '../../edo/index.js';
import { documentEventQuery, pgDocumentEventsInsertUnnest, type DocumentEventInput } from '../../events/index.js';
import { executeCompiled } from '../../../db/direct-execution.js';
import { modifiedSince, teamScope } from '../../../db/list-plans.js';
import { insertRows, insertRowsQuery, preparedQuery, preparedStatement } from '../../../db/prepared-query.js';
import { nameStatement } from '../../../db/pg-statements.js';
import { retryPgConflicts } from '../../../db/pg-retry.js';
import { invoiceSearchMatches, probeTrigramTable, usesTrigramTable, type SearchPlan } from '../../../db/text-search.js';
import type {
  Database,
  InvoiceItemsTable,
  InvoiceRevisionRow,
  InvoiceRow,
  InvoicesTable,
  ShareLinkRow,
  ShareLinksTable,
} from '../../../db/types.js';
import { extended } from '../../../shared/objects.js';

// The two reads of every GET detail, compiled once (src/db/prepared-query.ts).
const invoiceById = preparedQuery<'teamId' | 'publicId', InvoiceRow>((db, p) =>
  db.selectFrom('invoices').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')),
);
const shareLinksOf = preparedQuery<'teamId' | 'publicId', ShareLinkRow>((db, p) =>
  db.selectFrom('share_links').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')).orderBy('sort_order'),
);

/**
 * PostgreSQL: the document and its share links in one statement (one round trip, one connection,
 * where `invoiceById` and `shareLinksOf` at once take two): the links come as a JSON array in
 * `sort_order`. Every share_links column is text or integer, so JSON gives back exactly the
 * values `select *` does (a timestamp or numeric column added there would need converting here).
 */
function documentWithLinksPg(db: Kysely<Database>, p: (name: 'teamId' | 'publicId') => any) {
  return db
    .selectFrom('invoices')
    .selectAll('invoices')
    .select(
      sql<ShareLinkRow[]>`coalesce((select json_agg(l order by l.sort_order) from share_links l where l.team_id = invoices.team_id and l.public_id = invoices.public_id), '[]'::json)`.as(
        'share_links_json',
      ),
    )
    .where('team_id', '=', p('teamId'))
    .where('public_id', '=', p('publicId'));
}

const invoiceWithLinksPg = preparedQuery<'teamId' | 'publicId', InvoiceRow & { share_links_json: ShareLinkRow[] }>(documentWithLinksPg);

export async function findInvoiceWithLinksPg(
  db: Executor,
  teamId: string,
  publicId: string,
): Promise<{ row: InvoiceRow | undefined; links: ShareLinkRow[] }> {
  const found = (await invoiceWithLinksPg(db, { teamId, publicId }))[0];
  if (!found) return { row: undefined, links: [] };
  const { share_links_json: links, ...row } = found;
  return { row, links };
}

/**
 * PostgreSQL, before an update: the document, its share links (as `invoiceWithLinksPg`) and
 * whether it has any EDO job (the edo module's condition), in one statement. An update that
 * sends nothing and has no EDO state to keep can then be written in one statement
 * (`updateDocumentPg`) without reading the links or the EDO state again.
 */
const invoiceForUpdatePg = preparedQuery<'teamId' | 'publicId', InvoiceRow & { share_links_json: ShareLinkRow[]; has_edo_jobs: boolean }>((db, p) =>
  documentWithLinksPg(db, p).select(edoJobsExistSql(sql.ref('invoices.team_id'), sql.ref('invoices.public_id')).as('has_edo_jobs')),
);

export async function findInvoiceForUpdatePg(
  db: Executor,
  teamId: string,
  publicId: string,
): Promise<{ row: InvoiceRow | undefined; links: ShareLinkRow[]; hasEdoJobs: boolean }> {
  const found = (await invoiceForUpdatePg(db, { teamId, publicId }))[0];
  if (!found) return { row: undefined, links: [], hasEdoJobs: false };
  const { share_links_json: links, has_edo_jobs: hasEdoJobs, ...row } = found;
  return { row, links, hasEdoJobs };
}

export async function findInvoice(db: Executor, teamId: string, publicId: string): Promise<InvoiceRow | undefined> {
  return (await invoiceById(db, { teamId, publicId }))[0];
}

/** Whether any team holds the id (client-supplied ids are unique across teams). */
export async function publicIdTaken(db: Executor, publicId: string): Promise<boolean> {
  const row = await db.selectFrom('invoices').select('public_id').where('public_id', '=', publicId).executeTakeFirst();
  return row !== undefined;
}

/**
 * Inserts documents and adds them to their team's document count (the unfiltered list's
 * `total`, src/db/document-counts.ts): call inside the creating transaction.
 */
export async function insertInvoice(db: Executor, row: Insertable<InvoicesTable>): Promise<void> {
  await insertInvoices(db, [row]);
}

/**
 * A new document's statements, bound but not run: the invoice and its team's document count,
 * its items, its share links and its events, the rows `insertInvoice`, `insertItems`,
 * `insertShareLinks` and `recordEvent` write, in that order. A create binds them before its
 * transaction and `insertNewDocument` only runs them inside it (on SQLite, in the group commit,
 * straight on better-sqlite3: src/db/direct-execution.ts).
 */
export function newDocumentStatements(db: Executor, doc: NewDocumentRows): CompiledQuery[] {
  const statements: CompiledQuery[] = [];
  const add = (query: CompiledQuery | null) => {
    if (query !== null) statements.push(query);
  };
  add(insertRowsQuery(db, 'invoices', [doc.row]));
  statements.push(addDocumentsQuery(db, doc.row.team_id, 1));
  for (let i = 0; i < doc.items.length; i += ITEMS_PER_INSERT) add(insertRowsQuery(db, 'invoice_items', doc.items.slice(i, i + ITEMS_PER_INSERT)));
  add(insertRowsQuery(db, 'share_links', doc.links));
  for (const event of doc.events) statements.push(documentEventQuery(db, event));
  return statements;
}

/** Runs what `newDocumentStatements` bound; call inside the creating transaction. */
export async function insertNewDocument(trx: Executor, statements: readonly CompiledQuery[]): Promise<void> {
  for (const statement of statements) await executeCompiled(trx, statement);
}

/** Several documents at once (e.g. one transaction of grouped creates), counted per team. */
export async function insertInvoices(db: Executor, rows: Array<Insertable<InvoicesTable>>): Promise<void> {
  if (rows.length === 0) return;
  await insertRows(db, 'invoices', rows);
  const perTeam = new Map<string, number>();
  for (const row of rows) perTeam.set(row.team_id, (perTeam.get(row.team_id) ?? 0) + 1);
  for (const [teamId, n] of perTeam) await addDocuments(db, teamId, n);
}

/**
 * The optimistic UPDATE, compiled once per set of columns (a write sets the same columns every
 * time; a handful of sets at most, bounded all the same).
 */
const updateStatements = new Map<string, ReturnType<typeof updateStatementFor>>();
const UPDATE_SHAPES_MAX = 16;

function updateStatementFor(columns: string[]) {
  return preparedStatement<string, never>((db, p) =>
    db
      .updateTable('invoices')
      .set(Object.fromEntries(columns.map((c) => [c, p(`set:${c}`)])))
      .where('team_id', '=', p('teamId'))
      .where('public_id', '=', p('publicId'))
      .where('revision', '=', p('expectedRevision')),
  );
}

/** A new document's rows: the invoice, its items and share links, and the events of its creation. */
export interface NewDocumentRows {
  row: Insertable<InvoicesTable>;
  items: Array<Insertable<InvoiceItemsTable>>;
  links: Array<Insertable<ShareLinksTable>>;
  events: DocumentEventInput[];
}

/**
 * PostgreSQL: a new document in ONE statement, i.e. one round trip: the invoice, its items, its
 * share links, its team's document count (`addDocuments`) and its events, as a data-modifying
 * CTE. What `insertInvoice`, `insertItems`, `insertShareLinks` and `recordEvent` write one
 * statement each. A statement is atomic on its own: outside a transaction it commits alone (no
 * BEGIN/COMMIT round trips); inside one, it is one statement of it. The items' and links'
 * foreign keys are checked at the end of the statement, when the invoice row is there; a taken
 * `public_id` fails the whole statement with a unique violation, nothing written.
 *
 * The statement's text is fixed (NEW_DOCUMENT_PG): the items, links and events go in as one
 * array per column (`unnest`), so the text does not depend on how many there are, Kysely
 * compiles nothing per create, and outside a transaction it runs as a named prepared statement
 * (pg-statements.ts), parsed and planned once per connection. Run on its own (not in a
 * transaction), a statement the server aborted as a deadlock or serialization failure stored
 * nothing and is run again (pg-retry.ts); in a transaction, the transaction is.
 */
export async function insertNewDocumentPg(db: Executor, doc: NewDocumentRows): Promise<void> {
  const values = newDocumentPgValues(doc);
  const write = async (): Promise<void> => {
    await db.executeQuery(CompiledQuery.raw(NEW_DOCUMENT_PG, values));
  };
  return db.isTransaction ? write() : retryPgConflicts(write);
}

const INVOICE_COLUMNS = [
  'number', 'date', 'currency', 'direction', 'seller_org_id', 'seller_inn', 'seller_name', 'buyer_inn', 'buyer_name',
  'search_text', 'seller_status', 'service_status', 'service_status_reason', 'editor_mode', 'source_type', 'subtotal',
  'vat_total', 'total', 'public_share_enabled', 'information_system', 'seller_edo_id', 'buyer_edo_id', 'document',
  'changed_at', 'validation', 'last_modified_at', 'last_modified_by_login', 'api_key_id', 'api_key_name',
  'api_request_host', 'team_id', 'public_id', 'revision', 'link_epoch', 'package_public_id', 'buyer_status', 'created_at',
  'created_by_login', 'api_created_at', 'api_updated_at', 'notifications', 'viewed_at', 'payment_reported_at',
  'edo_pending_job', 'email_pending',
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
  return `with "new_invoice" as (${invoice}), "counted" as (${pgAddOneDocumentSql(team)}), "new_items" as (${items}), "new_links" as (${links}) ${events.text}`;
}

const NEW_DOCUMENT_PG = buildNewDocumentPg();
nameStatement(NEW_DOCUMENT_PG);

/** Whether `row` sets exactly `columns` (a column set to null counts; undefined does not). */
function hasExactly(row: object, columns: ReadonlyArray<string>, extra: ReadonlyArray<string> = []): boolean {
  const r = row as Record<string, unknown>;
  let defined = 0;
  for (const key in r) if (r[key] !== undefined) defined++;
  return defined === columns.length + extra.length && [...columns, ...extra].every((c) => r[c] !== undefined);
}

/** The parameters of NEW_DOCUMENT_PG for `doc`; its rows must have exactly the fixed columns (every write builds them so). */
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
    throw new Error('a new document whose rows do not have the columns of NEW_DOCUMENT_PG');
  }
  const values: unknown[] = INVOICE_COLUMNS.map((c) => row[c]);
  values.push(teamId, publicId);
  for (const c of itemNames) values.push(items.map((i) => i[c]));
  for (const c of linkNames) values.push(links.map((l) => l[c]));
  values.push(...pgDocumentEventsInsertUnnest(() => '', doc.events).values);
  return values;
}

/** What `updateDocumentPg` writes: the update of a document that sends nothing (no e-mail, no EDO). */
export interface DocumentUpdatePg {
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

/**
 * PostgreSQL: an update in ONE statement (one round trip, one WAL flush, no BEGIN/COMMIT), for
 * an update with nothing else to write (no e-mail, no EDO job before or after): the invoice
 * row under the optimistic check, its revision row, the retention's delete, the items (changed
 * lines rewritten, lines beyond the new count deleted), the recipient links and the events,
 * each written only if the invoice row was. The statement is atomic on its own. What the same
 * update in a transaction writes (updateInvoice, insertRevision, pruneRevisions, replaceItems,
 * syncShareLinks, recordWriteEvents) with three differences that change no row: unchanged
 * items and links are not rewritten, and the link epoch is checked too (the links written
 * were computed from the ones read with the row: a rotation since then makes it not apply).
 * 'applied', or the stored revision when the row was not written (undefined: no such document).
 */
export async function updateDocumentPg(db: Executor, u: DocumentUpdatePg): Promise<'applied' | { revision: number | undefined }> {
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

/** The text of `updateDocumentPg` per set of columns set (a handful of shapes; bounded all the same). */
const documentUpdateTexts = new Map<string, string>();

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
  const itemNames = ITEM_COLUMNS.map(([c]) => c);
  const changed = (names: readonly string[], table: string) =>
    `(${names.map((c) => `${table}."${c}"`).join(', ')}) is distinct from (${names.map((c) => `excluded."${c}"`).join(', ')})`;
  const ours = [
    ['team_id', team],
    ['public_id', publicId],
  ] as const;
  const items =
    `${pgUnnestInsert('invoice_items', ITEM_COLUMNS, next, applied, ours)} ` +
    `on conflict ("team_id", "public_id", "line_no") do update set ${itemNames.filter((c) => c !== 'line_no').map((c) => `"${c}" = excluded."${c}"`).join(', ')} ` +
    `where ${changed(itemNames.filter((c) => c !== 'line_no'), '"invoice_items"')}`;
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

/** Optimistic update: applies only when the stored revision is still `expectedRevision`. */
export async function updateInvoice(
  db: Executor,
  teamId: string,
  publicId: string,
  expectedRevision: number,
  row: Partial<Insertable<InvoicesTable>>,
): Promise<boolean> {
  const values: Record<string, unknown> = { teamId, publicId, expectedRevision };
  const columns: string[] = [];
  for (const [column, value] of Object.entries(row)) {
    if (value === undefined) continue;
    columns.push(column);
    values[`set:${column}`] = value;
  }
  const key = columns.join(',');
  let statement = updateStatements.get(key);
  if (statement === undefined) {
    if (updateStatements.size >= UPDATE_SHAPES_MAX) updateStatements.clear();
    statement = updateStatementFor(columns);
    updateStatements.set(key, statement);
  }
  const result = await statement(db, values);
  return Number(result.numAffectedRows ?? 0) === 1;
}

const deleteItemsOf = preparedStatement<'teamId' | 'publicId', never>((db, p) =>
  db.deleteFrom('invoice_items').where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')),
);

export async function replaceItems(
  db: Executor,
  teamId: string,
  publicId: string,
  items: Array<Insertable<InvoiceItemsTable>>,
): Promise<void> {
  await deleteItemsOf(db, { teamId, publicId });
  await insertItems(db, items);
}

const itemsOf = preparedQuery<'teamId' | 'publicId', InvoiceItemsTable>((db, p) =>
  db.selectFrom('invoice_items').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')).orderBy('line_no'),
);

/**
 * An update's items: rewritten only when they differ from the stored rows (every column, in
 * line order). A DELETE and INSERT of unchanged items rewrote two b-tree pages per document
 * (the rows and their key) for nothing; a read of the rows costs less. True when it wrote.
 */
export async function replaceItemsIfChanged(
  db: Executor,
  teamId: string,
  publicId: string,
  items: Array<Insertable<InvoiceItemsTable>>,
): Promise<boolean> {
  const stored = await itemsOf(db, { teamId, publicId });
  if (sameRows(stored, items)) return false;
  await replaceItems(db, teamId, publicId, items);
  return true;
}

function sameRows(stored: readonly object[], wanted: readonly object[]): boolean {
  if (stored.length !== wanted.length) return false;
  for (let i = 0; i < stored.length; i++) {
    const a = stored[i] as Record<string, unknown>;
    const b = wanted[i] as Record<string, unknown>;
    const keys = Object.keys(b);
    if (Object.keys(a).length !== keys.length) return false;
    for (const key of keys) if (a[key] !== b[key]) return false;
  }
  return true;
}

/** Items per INSERT: the chunks keep each statement under SQLite's bound-parameter limit. */
const ITEMS_PER_INSERT = 200;

/** A new document's items: one multi-row INSERT (in chunks of ITEMS_PER_INSERT). */
export async function insertItems(db: Executor, items: Array<Insertable<InvoiceItemsTable>>): Promise<void> {
  for (let i = 0; i < items.length; i += ITEMS_PER_INSERT) {
    await insertRows(db, 'invoice_items', items.slice(i, i + ITEMS_PER_INSERT));
  }
}

export async function listShareLinks(db: Executor, teamId: string, publicId: string): Promise<ShareLinkRow[]> {
  return shareLinksOf(db, { teamId, publicId });
}

export async function insertShareLinks(db: Executor, links: Array<Insertable<ShareLinksTable>>): Promise<void> {
  await insertRows(db, 'share_links', links);
}

export async function deleteShareLinks(db: Executor, teamId: string, publicId: string, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  await db
    .deleteFrom('share_links')
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('token', 'in', tokens)
    .execute();
}

export async function updateShareLinkOrder(
  db: Executor,
  teamId: string,
  token: string,
  values: { sort_order: number; name: string | null; position: string | null },
): Promise<void> {
  await db.updateTable('share_links').set(values).where('team_id', '=', teamId).where('token', '=', token).execute();
}

export async function insertRevision(db: Executor, row: InvoiceRevisionRow): Promise<void> {
  await insertRows(db, 'invoice_revisions', [row]);
}

export type RevisionSummaryRow = Omit<InvoiceRevisionRow, 'document' | 'api_key_id' | 'team_id' | 'public_id'>;

/** A page of the document's previous revisions, newest first, without their documents. */
export async function listRevisions(
  db: Executor,
  teamId: string,
  publicId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: RevisionSummaryRow[]; total: number }> {
  const scoped = db.selectFrom('invoice_revisions').where('team_id', '=', teamId).where('public_id', '=', publicId);
  const rows = await scoped
    .select(['revision', 'seller_status', 'total', 'editor_mode', 'modified_at', 'modified_by_login', 'superseded_at'])
    .orderBy('revision', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await scoped.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  return { rows, total: Number(count?.n ?? 0) };
}

/** One previous revision with its document. */
export async function findRevision(db: Executor, teamId: string, publicId: string, revision: number): Promise<InvoiceRevisionRow | undefined> {
  return db
    .selectFrom('invoice_revisions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('revision', '=', revision)
    .executeTakeFirst();
}

const pruneRevisionsOf = preparedStatement<'teamId' | 'publicId' | 'oldest', never>((db, p) =>
  db
    .deleteFrom('invoice_revisions')
    .where('team_id', '=', p('teamId'))
    .where('public_id', '=', p('publicId'))
    .where('revision', '<=', p('oldest')),
);

/** The retention rule: deletes the document's previous revisions older than the newest `keep`. */
export async function pruneRevisions(db: Executor, teamId: string, publicId: string, newestKept: number, keep: number): Promise<void> {
  await pruneRevisionsOf(db, { teamId, publicId, oldest: newestKept - keep });
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

/**
 * Choosing between the trigram index and a scan for `q`. PostgreSQL's planner does it from its
 * statistics; SQLite knows nothing about FTS5's selectivity, so the repository asks the index
 * how many candidates it has (bounded, cheap) and compares with the rows the other filters
 * leave: collecting a candidate costs about two row visits, scanning a row in range one.
 */
const FEW_CANDIDATES = 2000;
const CANDIDATE_CAP = 200_000;
/**
 * Above this many matches a page is found faster by walking the list index in order and
 * testing each row (it stops after offset + limit matches) than by collecting every match
 * and sorting them; at or below it, collecting is faster, as the matches may be anywhere.
 */
const DENSE_MATCHES = 2000;

async function searchPlan(db: Executor, teamId: string, f: ListFilters): Promise<SearchPlan> {
  if (!f.q) return 'index';
  const probe = await probeTrigramTable(db, f.q, FEW_CANDIDATES, CANDIDATE_CAP);
  if (probe === null) return 'index';
  if ('rowids' in probe) return { rowids: probe.rowids };
  if (probe.candidates >= CANDIDATE_CAP) return 'scan';
  const bound = 2 * probe.candidates;
  const scope = await db
    .selectFrom(
      filtered(db, teamId, { ...f, q: undefined }, { q: 'index', collectUpdated: false })
        .select(sql<number>`1`.as('one'))
        .limit(bound)
        .as('scope'),
    )
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(scope.n) < bound ? 'scan' : 'index';
}

/**
 * How the filters are written (src/db/list-plans.ts). `q`: see SearchPlan. `collectUpdated`:
 * the count says the matches are few, so `updated_since` collects them from its own index.
 */
interface Access {
  q: SearchPlan;
  collectUpdated: boolean;
}

function filtered(db: Executor, teamId: string, f: ListFilters, access: Access) {
  const collect =
    (f.q !== undefined && access.q !== 'scan' && usesTrigramTable(db, f.q)) || (f.updatedSince !== undefined && access.collectUpdated);
  let query = db.selectFrom('invoices').where(teamScope(db, teamId, collect));
  if (f.dateFrom) query = query.where('invoices.date', '>=', f.dateFrom);
  if (f.dateTo) query = query.where('invoices.date', '<=', f.dateTo);
  if (f.updatedSince) query = query.where(modifiedSince(db, teamId, f.updatedSince, access.collectUpdated));
  if (f.changedSince) query = query.where('invoices.changed_at', '>=', f.changedSince);
  if (f.q) query = query.where(invoiceSearchMatches(db, f.q, access.q));
  return query;
}

async function countMatches(db: Executor, teamId: string, f: ListFilters, plan: SearchPlan): Promise<number> {
  const row = await filtered(db, teamId, f, { q: plan, collectUpdated: false })
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function shiftMonth(month: string, by: 1 | -1): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const next = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${String(next.getUTCFullYear()).padStart(4, '0')}-${String(next.getUTCMonth() + 1).padStart(2, '0')}`;
}

function lastDayOf(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return `${month}-${String(new Date(Date.UTC(y, m, 0)).getUTCDate()).padStart(2, '0')}`;
}

/**
 * The exact number of the team's documents dated `from`…`to` (inclusive, either open): the
 * whole months in between from the per-month counters (team_month_counts, kept by triggers in
 * the writing transactions), the partial first and last months counted on the list index.
 * Stored dates are calendar dates `YYYY-MM-DD` (validated on write), so a month's counter is
 * exactly the rows between its first and last day. Cost: one indexed sum over ≤ 16 rows per
 * month of the range plus at most two months of index entries, whatever the volume.
 */
async function dateRangeCount(db: Executor, teamId: string, from: string | undefined, to: string | undefined): Promise<number> {
  if ((from !== undefined && !ISO_DAY.test(from)) || (to !== undefined && !ISO_DAY.test(to))) {
    return countMatches(db, teamId, { dateFrom: from, dateTo: to, limit: 0, offset: 0 }, 'index');
  }
  const fromMonth = from?.slice(0, 7);
  const toMonth = to?.slice(0, 7);
  // The whole months inside the range (null: open).
  const first = from === undefined || fromMonth === undefined ? null : from.endsWith('-01') ? fromMonth : shiftMonth(fromMonth, 1);
  const last = to === undefined || toMonth === undefined ? null : to === lastDayOf(toMonth) ? toMonth : shiftMonth(toMonth, -1);
  if (first !== null && last !== null && first > last) {
    return countMatches(db, teamId, { dateFrom: from, dateTo: to, limit: 0, offset: 0 }, 'index');
  }
  let n = await teamMonthDocuments(db, teamId, first, last);
  if (from !== undefined && fromMonth !== undefined && first !== fromMonth) {
    n += await countMatches(db, teamId, { dateFrom: from, dateTo: lastDayOf(fromMonth), limit: 0, offset: 0 }, 'index');
  }
  if (to !== undefined && toMonth !== undefined && last !== toMonth) {
    n += await countMatches(db, teamId, { dateFrom: `${toMonth}-01`, dateTo: to, limit: 0, offset: 0 }, 'index');
  }
  return n;
}

/** The team's document count and list version (src/db/document-counts.ts), in one read. */
export async function listState(db: Executor, teamId: string): Promise<TeamListState> {
  return teamListState(db, teamId);
}

/**
 * One page in the list order (date desc, creation desc, then public_id for a stable order)
 * and the count of all matches. The page's buyer share tokens are read afterwards for its
 * rows only: a correlated subquery would run for every match before the sort.
 */
export async function listInvoices(
  db: Executor,
  teamId: string,
  f: ListFilters,
  /**
   * What the caller already knows, read in this request after the list version: the team's
   * document count (listState), or the filter's exact total kept at that same version.
   */
  known: { documents?: number | undefined; total?: number | undefined } = {},
): Promise<{ rows: InvoiceListRow[]; total: number }> {
  // A total already known decides without asking the trigram table again (the probe counts up
  // to CANDIDATE_CAP candidates, ~10,000 for a 1 % search at 1M documents): no page to read,
  // or matches too many to collect (the page walks the list index whatever the plan).
  if (known.total !== undefined && (known.total === 0 || f.offset >= known.total)) return { rows: [], total: known.total };
  const plan = known.total !== undefined && known.total > DENSE_MATCHES ? 'scan' : await searchPlan(db, teamId, f);
  // No filter: the team's document counter, kept in the creating transactions, is the count.
  const unfiltered = !f.q && !f.dateFrom && !f.dateTo && !f.updatedSince && !f.changedSince;
  const onlyDates = !f.q && !f.updatedSince && !f.changedSince && (f.dateFrom !== undefined || f.dateTo !== undefined);
  const total =
    known.total ??
    (unfiltered
      ? (known.documents ?? (await teamDocumentCount(db, teamId)))
      : onlyDates
        ? await dateRangeCount(db, teamId, f.dateFrom, f.dateTo)
        : await countMatches(db, teamId, f, plan));
  if (total === 0 || f.offset >= total) return { rows: [], total };
  const dense = plan === 'scan' || total > DENSE_MATCHES;
  const page = await filtered(db, teamId, f, { q: dense ? 'scan' : plan, collectUpdated: !dense })
    .select([
      'invoices.public_id',
      'invoices.number',
      'invoices.date',
      'invoices.currency',
      'invoices.direction',
      'invoices.seller_name',
      'invoices.seller_inn',
      'invoices.buyer_name',
      'invoices.buyer_inn',
      'invoices.subtotal',
      'invoices.vat_total',
      'invoices.total',
      'invoices.seller_status',
      'invoices.buyer_status',
      'invoices.service_status',
      'invoices.service_status_reason',
      'invoices.editor_mode',
      'invoices.created_at',
      'invoices.last_modified_at',
      'invoices.changed_at',
    ])
    .orderBy('invoices.date', 'desc')
    .orderBy('invoices.created_at', 'desc')
    .orderBy('invoices.public_id', 'desc')
    .limit(f.limit)
    .offset(f.offset)
    .execute();
  const tokens = new Map<string, string>();
  const ids = page.map((r) => r.public_id);
  if (ids.length > 0) {
    const links = await db
      .selectFrom('share_links')
      .select(['public_id', 'token'])
      .where('team_id', '=', teamId)
      // SQLite (3.53, no statistics) plans `public_id IN (?)` of one value beside `kind = ?`
      // as a scan of the whole table; `=` uses the key.
      .where((eb) => (ids.length === 1 ? eb('public_id', '=', ids[0] as string) : eb('public_id', 'in', ids)))
      .where('kind', '=', 'buyer')
      .execute();
    for (const link of links) if (!tokens.has(link.public_id)) tokens.set(link.public_id, link.token);
  }
  return { rows: page.map((r) => extended(r, { buyer_token: tokens.get(r.public_id) ?? null })), total };
}

/** The team of the document with this public id (ids are unique across teams), for operator commands. */
export async function findDocumentTeam(db: Executor, publicId: string): Promise<string | undefined> {
  const row = await db.selectFrom('invoices').select('team_id').where('public_id', '=', publicId).executeTakeFirst();
  return row?.team_id;
}

/** Gives one link a new token; the old token then finds nothing. */
export async function replaceLinkToken(db: Executor, link: Pick<ShareLinkRow, 'team_id' | 'public_id' | 'token'>, token: string): Promise<void> {
  await db
    .updateTable('share_links')
    .set({ token, last_opened_at: null })
    .where('team_id', '=', link.team_id)
    .where('public_id', '=', link.public_id)
    .where('token', '=', link.token)
    .execute();
}

/** Ends every portal link of the document signed so far (`links rotate`). */
export async function advanceLinkEpoch(db: Executor, teamId: string, publicId: string): Promise<void> {
  await db
    .updateTable('invoices')
    .set((eb) => ({ link_epoch: eb('link_epoch', '+', 1) }))
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .execute();
}
