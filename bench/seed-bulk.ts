/**
 * The seed's fast paths, one per database (bench/seed.ts chooses): the rows of bench/seed-rows.ts
 * written in bulk with the row triggers' effect written once per transaction, leaving the
 * database exactly as the reference path does (test/bench/seed.test.ts).
 */
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import { COUNTER_SHARDS } from '../src/db/document-counts.js';
import { documentRows, type SeedOptions } from './seed-rows.js';

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
export function seedSqliteBulk(file: string, options: SeedOptions): void {
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

/**
 * PostgreSQL, fast: per transaction of `chunk` documents, `session_replication_role = replica`
 * (for that transaction only; a superuser's right) so no row trigger fires (the list-version
 * and month triggers, the foreign-key checks: the rows are consistent by construction), each
 * table's rows in statements of a few thousand rows as one JSON parameter
 * (`json_populate_recordset`, no per-row parameters to bind), then what the triggers and
 * `addDocuments` would have written, on the transaction's shard `txid % 16` as they do: the
 * team's `documents` and `changes` (one per document and per share link) and the documents per
 * month. The trigram GIN index is an index, maintained as for any insert. False, with nothing
 * written, without the right to set the role (the caller takes the reference path).
 */
export async function seedPostgresBulk(db: Db, options: SeedOptions): Promise<boolean> {
  const { teamId, template, count } = options;
  const superuser = await sql<{ rolsuper: boolean }>`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`.execute(db);
  if (superuser.rows[0]?.rolsuper !== true) return false;
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
  return true;
}
