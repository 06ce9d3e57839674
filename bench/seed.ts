/**
 * Seeds a team with many documents for the list and search scenarios, directly through
 * Kysely: batched multi-row inserts, one transaction per chunk, the database's own triggers
 * (the SQLite FTS5 search index) firing as they do for the service.
 *
 * Every seeded document is a copy of one real template document (created through the API),
 * with its own public id, number, date, buyer, creation time and share tokens, so GET, list
 * and search see rows exactly as the service writes them.
 */
import crypto from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import { sql, type Insertable } from 'kysely';
import { dialectOf, type Db } from '../src/db/database.js';
import { COUNTER_SHARDS } from '../src/db/document-counts.js';
import { normalizeSearchText } from '../src/modules/invoices/rules/search-text.js';
import { flushSearchIndex } from '../src/modules/invoices/store/sqlite-search.js';
import { createStores } from '../src/stores.js';
import type { InvoiceItemsTable, InvoiceRow, InvoicesTable, ShareLinkRow, ShareLinksTable } from '../src/db/types.js';

export interface SeedTemplate {
  row: InvoiceRow;
  items: Array<Insertable<InvoiceItemsTable>>;
  links: ShareLinkRow[];
}

export interface SeedOptions {
  teamId: string;
  template: SeedTemplate;
  count: number;
  /** Documents per transaction. */
  chunk?: number;
  /**
   * `bulk` (default): SQLite and PostgreSQL each through their fast path, the row triggers'
   * effect written once per transaction; `as-service`: row by row through Kysely with every
   * trigger firing, the reference the bulk paths are tested against.
   */
  mode?: 'bulk' | 'as-service';
  /** Called after every committed chunk. */
  onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
  count: number;
  ms: number;
  /** The q of the "matches few" scenario and how many seeded documents it matches. */
  rareQuery: string;
  rareMatches: number;
  /** The first and last seeded date. */
  dateRange: { from: string; to: string };
}

/** Reads a stored document with its items and links, to be cloned. */
export async function readTemplate(db: Db, teamId: string, publicId: string): Promise<SeedTemplate> {
  const row = await db
    .selectFrom('invoices')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .executeTakeFirstOrThrow();
  const items = await db.selectFrom('invoice_items').selectAll().where('team_id', '=', teamId).where('public_id', '=', publicId).execute();
  const links = await db.selectFrom('share_links').selectAll().where('team_id', '=', teamId).where('public_id', '=', publicId).execute();
  return { row, items, links };
}

const FORMS = ['ООО', 'АО', 'ИП', 'ПАО', 'ЗАО'];
const WORDS = [
  'Альфа', 'Вектор', 'Гранит', 'Дельта', 'Заря', 'Исток', 'Кварц', 'Лотос', 'Меридиан', 'Нева',
  'Орион', 'Полюс', 'Радуга', 'Сигма', 'Техно', 'Урал', 'Феникс', 'Хронос', 'Цитадель', 'Экспресс',
  'Юпитер', 'Янтарь', 'Байкал', 'Волга', 'Север', 'Восток', 'Запад', 'Юг', 'Атлант', 'Спектр',
];
/** The buyer word of every hundredth seeded document (a search matching 1 %). */
export const POLAR_WORD = 'Полярная';
/** Dates spread evenly over four years, newest last. */
const FIRST_DAY = Date.UTC(2023, 0, 1);
const DAYS = 4 * 365;

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A deterministic 10-digit INN-shaped number (checksums do not matter for stored rows). */
function innOf(i: number): string {
  return String(7700000000 + ((i * 7919) % 99999999)).padStart(10, '0');
}

/** The number of the i-th seeded document: "СЧ-0012345"; its prefix without the last digit matches ten. */
export function seedNumber(i: number): string {
  return `СЧ-${String(i).padStart(7, '0')}`;
}

/** One seeded document: its invoice row, items, share links and `invoice.created` event. */
interface SeedRows {
  invoice: Insertable<InvoicesTable>;
  items: Array<Insertable<InvoiceItemsTable>>;
  links: Array<Insertable<ShareLinksTable>>;
  event: { team_id: string; type: string; public_id: string; revision: number; data: string; created_at: string };
}

/**
 * The rows of seeded documents `from`…`to - 1` of `count`, as the service writes a create: the
 * invoice (its own public id, number, date, buyer, search text, creation instants), the
 * template's items, share links with their own tokens, and the `invoice.created` event.
 */
export function documentRows(template: SeedTemplate, baseDoc: Record<string, unknown>, from: number, to: number, count: number): SeedRows[] {
  // Tokens drawn in one go (16 random bytes each, base64url: what randomToken(16) returns).
  const perDoc = 2 + template.links.length;
  const random = crypto.randomBytes(16 * perDoc * (to - from));
  let at = 0;
  const token = (): string => random.toString('base64url', at, (at += 16));
  const rows: SeedRows[] = [];
  for (let i = from; i < to; i++) {
    const publicId = token();
    const dayMs = FIRST_DAY + Math.floor((i * DAYS) / Math.max(count, 1)) * 86_400_000;
    const date = isoDay(dayMs);
    // Creation times fall inside the document's day, so both sort keys vary.
    const createdAt = new Date(dayMs + 8 * 3_600_000 + (i % 36_000) * 1000).toISOString();
    const number = seedNumber(i);
    // Every hundredth buyer is «Полярная …»: the `q` of the "matches 1 %" scenario.
    const firstWord = i % 100 === 0 ? POLAR_WORD : WORDS[i % WORDS.length];
    const buyerName = `${FORMS[i % FORMS.length]} «${firstWord} ${WORDS[Math.floor(i / WORDS.length) % WORDS.length]}»`;
    const buyerInn = innOf(i);
    const doc = { ...baseDoc, public_id: publicId, number, date, buyer: { ...(baseDoc.buyer as object), name: buyerName, inn: buyerInn } };
    const invoice: Insertable<InvoicesTable> = {
      ...template.row,
      public_id: publicId,
      package_public_id: token(),
      number,
      date,
      buyer_name: buyerName,
      buyer_inn: buyerInn,
      search_text: normalizeSearchText(number, template.row.seller_name, template.row.seller_inn, buyerName, buyerInn),
      document: JSON.stringify(doc),
      created_at: createdAt,
      last_modified_at: createdAt,
      api_created_at: createdAt,
      changed_at: createdAt,
    };
    rows.push({
      invoice,
      items: template.items.map((item) => ({ ...item, public_id: publicId })),
      links: template.links.map((link) => ({ ...link, public_id: publicId, token: token(), created_at: createdAt })),
      event: {
        team_id: template.row.team_id,
        type: 'invoice.created',
        public_id: publicId,
        revision: 1,
        data: JSON.stringify({ public_id: publicId, revision: 1, seller_status: template.row.seller_status, number }),
        created_at: createdAt,
      },
    });
  }
  return rows;
}

export async function seedDocuments(db: Db, options: SeedOptions): Promise<SeedResult> {
  const { count } = options;
  const started = Date.now();
  const file = options.mode === 'as-service' ? null : await sqliteFileOf(db);
  if (file !== null) seedSqliteBulk(file, options);
  else if (options.mode !== 'as-service' && dialectOf(db) === 'postgres') await seedPostgresBulk(db, options);
  else await seedThroughTriggers(db, options);
  const rareQuery = count >= 100 ? seedNumber(Math.floor(count / 2)).slice(0, -1).toLowerCase() : seedNumber(0).toLowerCase();
  const rareMatches = count >= 100 ? 10 : 1;
  return {
    count,
    ms: Date.now() - started,
    rareQuery,
    rareMatches,
    dateRange: { from: isoDay(FIRST_DAY), to: isoDay(FIRST_DAY + Math.floor(((count - 1) * DAYS) / Math.max(count, 1)) * 86_400_000) },
  };
}

/** The file of a SQLite database (null for PostgreSQL or an in-memory database). */
async function sqliteFileOf(db: Db): Promise<string | null> {
  if (dialectOf(db) !== 'sqlite') return null;
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(db);
  const file = rows.find((r) => r.name === 'main')?.file ?? '';
  return file === '' ? null : file;
}

/**
 * The reference path: the rows inserted with the database's triggers firing for each row, as
 * the service's creates do (the FTS5 index, the list version, the month counters) and
 * `addDocuments` per transaction. Slow (~2,500 documents/s at best); the bulk paths must
 * leave the database exactly as this one does (test/bench/seed.test.ts).
 */
async function seedThroughTriggers(db: Db, options: SeedOptions): Promise<void> {
  const { teamId, template, count } = options;
  const chunk = options.chunk ?? 5000;
  const baseDoc = JSON.parse(template.row.document) as Record<string, unknown>;
  for (let from = 0; from < count; from += chunk) {
    const to = Math.min(count, from + chunk);
    const rows = documentRows(template, baseDoc, from, to, count);
    const invoices = rows.map((r) => r.invoice);
    const items = rows.flatMap((r) => r.items);
    const links = rows.flatMap((r) => r.links);
    await db.transaction().execute(async (trx) => {
      const txId = dialectOf(trx) === 'postgres' ? sql<number>`pg_current_xact_id()::text::bigint` : 0;
      // Statements stay well under the bound-parameter limits (SQLite 32766, PostgreSQL 65535).
      for (let i = 0; i < invoices.length; i += 500) await trx.insertInto('invoices').values(invoices.slice(i, i + 500)).execute();
      await createStores({ db, dialect: dialectOf(db) }).invoices.addDocuments(trx, teamId, invoices.length);
      for (let i = 0; i < items.length; i += 1500) await trx.insertInto('invoice_items').values(items.slice(i, i + 1500)).execute();
      for (let i = 0; i < links.length; i += 2000) await trx.insertInto('share_links').values(links.slice(i, i + 2000)).execute();
      for (let i = 0; i < rows.length; i += 2000) {
        await trx
          .insertInto('events')
          .values(rows.slice(i, i + 2000).map((r) => ({ ...r.event, tx_id: txId })))
          .execute();
      }
      // SQLite: the chunk's documents into the trigram index, as the service's group commit does.
      if (dialectOf(trx) === 'sqlite') await flushSearchIndex(trx);
    });
    options.onProgress?.(to, count);
  }
}

/**
 * The row triggers the SQLite bulk path replaces with one statement per transaction each
 * (migrations 2026-11-25T2350_invoice_search and 2026-11-26T1400_list_versions). Any other
 * trigger on these tables (one a later migration adds) stays in place and fires per row.
 */
const REPLACED_SQLITE_TRIGGERS = ['invoices_fts_after_insert', 'invoices_list_after_insert', 'share_links_list_after_insert'];

/**
 * SQLite, fast: a connection of its own (synchronous=OFF: the seed is rebuilt rather than
 * recovered after a crash; foreign keys off: the rows are consistent by construction; a 1 GB
 * page cache), prepared multi-row INSERTs, and per transaction of `chunk` documents the three
 * row triggers dropped and, before the commit, their effect written in bulk and the triggers
 * created again (DDL is transactional in SQLite: no other connection ever sees the schema
 * without them):
 *
 * - `invoices_fts_after_insert`: `INSERT INTO invoices_fts(rowid, search_text) SELECT … ` the
 *   transaction's new rows, what the trigger inserts one row at a time;
 * - `invoices_list_after_insert` and `share_links_list_after_insert`: the team's `changes`
 *   plus one per document and per share link, `team_month_counts` plus the documents per month;
 * - `addDocuments`: the team's `documents` plus the transaction's documents.
 */
function seedSqliteBulk(file: string, options: SeedOptions): void {
  const { teamId, template, count } = options;
  const chunk = options.chunk ?? 50_000;
  const baseDoc = JSON.parse(template.row.document) as Record<string, unknown>;
  const sqlite = new SqliteDatabase(file);
  try {
    sqlite.pragma('busy_timeout = 60000');
    sqlite.pragma('synchronous = OFF');
    sqlite.pragma('foreign_keys = OFF');
    sqlite.pragma('cache_size = -1000000');
    const triggers = sqlite
      .prepare(`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name IN (${REPLACED_SQLITE_TRIGGERS.map(() => '?').join(', ')})`)
      .all(...REPLACED_SQLITE_TRIGGERS) as Array<{ name: string; sql: string }>;
    if (triggers.length !== REPLACED_SQLITE_TRIGGERS.length) {
      throw new Error(`the SQLite schema lacks a trigger the bulk seed replaces (found ${triggers.map((t) => t.name).join(', ')})`);
    }
    const inserters = new Map<string, (rows: Array<Record<string, unknown>>) => void>();
    const insertAll = (table: string, rows: Array<Record<string, unknown>>): void => {
      if (rows.length === 0) return;
      let insert = inserters.get(table);
      if (!insert) {
        insert = multiRowInsert(sqlite, table, Object.keys(rows[0] as object));
        inserters.set(table, insert);
      }
      insert(rows);
    };
    const maxRowid = sqlite.prepare('SELECT coalesce(max(rowid), 0) AS n FROM invoices').pluck();
    const ftsInsert = sqlite.prepare('INSERT INTO invoices_fts(rowid, search_text) SELECT rowid, search_text FROM invoices WHERE rowid > ?');
    const monthsInsert = sqlite.prepare(
      `INSERT INTO team_month_counts (team_id, month, shard, documents)
       SELECT team_id, substr(date, 1, 7), 0, count(*) FROM invoices WHERE rowid > ? GROUP BY team_id, substr(date, 1, 7)
       ON CONFLICT (team_id, month, shard) DO UPDATE SET documents = documents + excluded.documents`,
    );
    const countersInsert = sqlite.prepare(
      `INSERT INTO team_document_counts (team_id, shard, documents, changes) VALUES (?, 0, ?, ?)
       ON CONFLICT (team_id, shard) DO UPDATE SET documents = documents + excluded.documents, changes = changes + excluded.changes`,
    );
    const seedChunk = sqlite.transaction((from: number, to: number) => {
      for (const t of triggers) sqlite.exec(`DROP TRIGGER ${t.name}`);
      const before = maxRowid.get() as number;
      const rows = documentRows(template, baseDoc, from, to, count);
      insertAll('invoices', rows.map((r) => r.invoice as Record<string, unknown>));
      insertAll('invoice_items', rows.flatMap((r) => r.items as Array<Record<string, unknown>>));
      insertAll('share_links', rows.flatMap((r) => r.links as Array<Record<string, unknown>>));
      insertAll('events', rows.map((r) => ({ ...r.event, tx_id: 0 })));
      ftsInsert.run(before);
      monthsInsert.run(before);
      const links = rows.reduce((n, r) => n + r.links.length, 0);
      countersInsert.run(teamId, rows.length, rows.length + links);
      for (const t of triggers) sqlite.exec(t.sql);
    });
    for (let from = 0; from < count; from += chunk) {
      const to = Math.min(count, from + chunk);
      seedChunk.immediate(from, to);
      options.onProgress?.(to, count);
    }
  } finally {
    sqlite.close();
  }
}

/**
 * PostgreSQL, fast: per transaction of `chunk` documents, `session_replication_role = replica`
 * (for that transaction only; a superuser's right) so no row trigger fires (the list-version
 * and month triggers, the foreign-key checks: the rows are consistent by construction), each
 * table's rows in statements of a few thousand rows as one JSON parameter
 * (`json_populate_recordset`, no per-row parameters to bind), then what the triggers and
 * `addDocuments` would have written, on the transaction's shard `txid % 16` as they do: the
 * team's `documents` and `changes` (one per document and per share link) and the documents per
 * month. The trigram GIN index is an index, maintained as for any insert. Without the right
 * to set the role, the reference path.
 */
async function seedPostgresBulk(db: Db, options: SeedOptions): Promise<void> {
  const { teamId, template, count } = options;
  const superuser = await sql<{ rolsuper: boolean }>`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`.execute(db);
  if (superuser.rows[0]?.rolsuper !== true) return seedThroughTriggers(db, options);
  const chunk = options.chunk ?? 20_000;
  const baseDoc = JSON.parse(template.row.document) as Record<string, unknown>;
  const shard = sql<number>`mod(txid_current(), ${sql.lit(COUNTER_SHARDS)})::int`;
  const insertJson = async (trx: Db, table: string, rows: Array<Record<string, unknown>>, computed: Record<string, string> = {}) => {
    if (rows.length === 0) return;
    const columns = [...Object.keys(rows[0] as object), ...Object.keys(computed)];
    const select = columns.map((c) => computed[c] ?? `"${c}"`).join(', ');
    for (let i = 0; i < rows.length; i += 5000) {
      await sql`INSERT INTO ${sql.table(table)} (${sql.raw(columns.map((c) => `"${c}"`).join(', '))})
                SELECT ${sql.raw(select)} FROM json_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows.slice(i, i + 5000))})`.execute(trx);
    }
  };
  for (let from = 0; from < count; from += chunk) {
    const to = Math.min(count, from + chunk);
    const rows = documentRows(template, baseDoc, from, to, count);
    const months = new Map<string, number>();
    for (const r of rows) months.set(r.invoice.date.slice(0, 7), (months.get(r.invoice.date.slice(0, 7)) ?? 0) + 1);
    const links = rows.reduce((n, r) => n + r.links.length, 0);
    await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(trx);
      await insertJson(trx, 'invoices', rows.map((r) => r.invoice as Record<string, unknown>));
      await insertJson(trx, 'invoice_items', rows.flatMap((r) => r.items as Array<Record<string, unknown>>));
      await insertJson(trx, 'share_links', rows.flatMap((r) => r.links as Array<Record<string, unknown>>));
      await insertJson(trx, 'events', rows.map((r) => r.event), { tx_id: 'pg_current_xact_id()::text::bigint' });
      await trx
        .insertInto('team_document_counts')
        .values({ team_id: teamId, shard, documents: rows.length, changes: rows.length + links })
        .onConflict((oc) =>
          oc.columns(['team_id', 'shard']).doUpdateSet({
            documents: sql<number>`team_document_counts.documents + excluded.documents`,
            changes: sql<number>`team_document_counts.changes + excluded.changes`,
          }),
        )
        .execute();
      await trx
        .insertInto('team_month_counts')
        .values([...months].map(([month, n]) => ({ team_id: teamId, month, shard, documents: n })))
        .onConflict((oc) =>
          oc.columns(['team_id', 'month', 'shard']).doUpdateSet({ documents: sql<number>`team_month_counts.documents + excluded.documents` }),
        )
        .execute();
    });
    options.onProgress?.(to, count);
  }
}

/** Inserts rows with `columns` through prepared `INSERT … VALUES (…), (…)` of up to 30,000 parameters. */
function multiRowInsert(sqlite: SqliteDatabase.Database, table: string, columns: string[]): (rows: Array<Record<string, unknown>>) => void {
  const perStatement = Math.max(1, Math.min(500, Math.floor(30_000 / columns.length)));
  const statements = new Map<number, SqliteDatabase.Statement>();
  const statementFor = (n: number): SqliteDatabase.Statement => {
    let statement = statements.get(n);
    if (!statement) {
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      statement = sqlite.prepare(`INSERT INTO ${table} (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${Array(n).fill(tuple).join(', ')}`);
      statements.set(n, statement);
    }
    return statement;
  };
  return (rows) => {
    for (let i = 0; i < rows.length; i += perStatement) {
      const batch = rows.slice(i, i + perStatement);
      const values: unknown[] = [];
      for (const row of batch) for (const column of columns) values.push(row[column] ?? null);
      statementFor(batch.length).run(values);
    }
  };
}

/** A one-line progress bar on stderr, redrawn in place on a terminal, every 10% otherwise. */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): (done: number, total: number) => void {
  const started = Date.now();
  let lastDecile = -1;
  return (done, total) => {
    const fraction = total === 0 ? 1 : done / total;
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 ? (total - done) / rate : 0;
    const width = 30;
    const filled = Math.round(fraction * width);
    const line =
      `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
      `${done}/${total} ${Math.round(rate)}/s ETA ${eta.toFixed(0)}s`;
    if (stream.isTTY) {
      stream.write(`\r${line}`);
      if (done >= total) stream.write('\n');
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== lastDecile || done >= total) {
      lastDecile = decile;
      stream.write(`${line}\n`);
    }
  };
}
