import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * An index for the list's `q`, a substring match on `invoices.search_text` (lower-cased text
 * of the number, seller and buyer name and INN). A B-tree cannot serve `LIKE '%q%'`, so each
 * database gets its trigram index:
 *
 * - PostgreSQL: the pg_trgm extension and a GIN index with `gin_trgm_ops`, which the planner
 *   uses for `search_text LIKE '%q%'` itself (q of 3 characters and more).
 * - SQLite: an FTS5 table with the `trigram` tokenizer over the same column, stored as an
 *   external-content table (the text stays only in `invoices`), kept in step by triggers.
 *   Its rowids are those of `invoices`; a `VACUUM` may renumber them, after which the index
 *   is rebuilt with `INSERT INTO invoices_fts(invoices_fts) VALUES('rebuild')` (docs/performance.md).
 *
 * The query side is `invoiceSearchMatches` in src/db/text-search.ts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
    await db.schema
      .createIndex('invoices_search_trgm_idx')
      .on('invoices')
      .using('gin')
      .expression(sql`search_text gin_trgm_ops`)
      .execute();
    return;
  }
  await sql`CREATE VIRTUAL TABLE invoices_fts USING fts5(search_text, content='invoices', tokenize='trigram')`.execute(db);
  await sql`
    CREATE TRIGGER invoices_fts_after_insert AFTER INSERT ON invoices BEGIN
      INSERT INTO invoices_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
    END`.execute(db);
  // An external-content FTS5 table forgets a row by being told its old text.
  await sql`
    CREATE TRIGGER invoices_fts_after_delete AFTER DELETE ON invoices BEGIN
      INSERT INTO invoices_fts(invoices_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
    END`.execute(db);
  await sql`
    CREATE TRIGGER invoices_fts_after_update AFTER UPDATE OF search_text ON invoices
    WHEN old.search_text IS NOT new.search_text BEGIN
      INSERT INTO invoices_fts(invoices_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
      INSERT INTO invoices_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
    END`.execute(db);
  // Documents stored before this migration.
  await sql`INSERT INTO invoices_fts(invoices_fts) VALUES ('rebuild')`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
