import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * SQLite: the FTS5 trigram index (migration 2026-11-25T2350_invoice_search) filled once per
 * group commit instead of once per new document (docs/performance.md, "Session 5: create CPU
 * on SQLite").
 *
 * A trigger that inserts into an FTS5 table makes every statement of the transaction that
 * follows flush FTS5's pending terms to a new index segment (FTS5 flushes on each savepoint,
 * and a statement with triggers or foreign keys opens one): per new document a segment of its
 * own, written and merged. Now the insert trigger only records the new row's `public_id` in
 * `invoices_fts_pending` (a plain table), and `flushSearchIndex` (src/db/text-search.ts)
 * indexes all rows recorded there with one `INSERT INTO invoices_fts … SELECT` and empties it:
 * the group commit calls it before each COMMIT, the bench seeding after each chunk. A row not
 * yet flushed is still found: the search asks the trigram table *and* the pending rows (their
 * LIKE decides, as for every candidate), so `q` results stay exact whoever inserted the row.
 *
 * The update and delete triggers keep the index exact for a row already indexed, and leave a
 * pending row alone (the flush reads its text as it is then). Pending rows are named by
 * `public_id`, unique and never renumbered (a VACUUM may renumber rowids).
 *
 * PostgreSQL: nothing (its pg_trgm GIN index is maintained by the server).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`CREATE TABLE invoices_fts_pending (public_id TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID`.execute(db);
  await sql`DROP TRIGGER invoices_fts_after_insert`.execute(db);
  await sql`DROP TRIGGER invoices_fts_after_delete`.execute(db);
  await sql`DROP TRIGGER invoices_fts_after_update`.execute(db);
  await sql`
    CREATE TRIGGER invoices_fts_after_insert AFTER INSERT ON invoices BEGIN
      INSERT OR IGNORE INTO invoices_fts_pending(public_id) VALUES (new.public_id);
    END`.execute(db);
  // An external-content FTS5 table forgets a row by being told its old text; a pending row was never told.
  await sql`
    CREATE TRIGGER invoices_fts_after_delete AFTER DELETE ON invoices BEGIN
      INSERT INTO invoices_fts(invoices_fts, rowid, search_text)
        SELECT 'delete', old.rowid, old.search_text
        WHERE NOT EXISTS (SELECT 1 FROM invoices_fts_pending WHERE public_id = old.public_id);
      DELETE FROM invoices_fts_pending WHERE public_id = old.public_id;
    END`.execute(db);
  await sql`
    CREATE TRIGGER invoices_fts_after_update AFTER UPDATE OF search_text ON invoices
    WHEN old.search_text IS NOT new.search_text
      AND NOT EXISTS (SELECT 1 FROM invoices_fts_pending WHERE public_id = old.public_id) BEGIN
      INSERT INTO invoices_fts(invoices_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
      INSERT INTO invoices_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
    END`.execute(db);
  await sql`
    CREATE TRIGGER invoices_fts_pending_after_rename AFTER UPDATE OF public_id ON invoices
    WHEN old.public_id IS NOT new.public_id BEGIN
      UPDATE invoices_fts_pending SET public_id = new.public_id WHERE public_id = old.public_id;
    END`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
