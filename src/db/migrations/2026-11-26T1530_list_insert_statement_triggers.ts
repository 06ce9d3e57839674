import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * PostgreSQL: the list triggers of migration 2026-11-26T1400_list_versions, cheaper per create
 * (issue 13, docs/performance.md "PostgreSQL (this session)", Session 5). SQLite: nothing.
 *
 * 1. Inserts into `invoices` and `share_links` are counted by one statement-level trigger per
 *    statement (the inserted rows as a transition table, grouped by team) instead of one row
 *    trigger per row: a create (one invoice and two or more links in one statement) runs two
 *    trigger functions instead of three or more, each with two or one upserts. The counts are
 *    the same: `changes` moves on by one per inserted row, a month's `documents` by one per
 *    document dated in it, on the same shard `txid % 16` (one transaction still holds at most
 *    one counter row of a team). Updates and deletes keep their row triggers.
 * 2. `invoicing_list_bump` and `invoicing_list_month` become PL/pgSQL: a SQL-language function
 *    called from a trigger is parsed and planned on every call, PL/pgSQL keeps its plans per
 *    connection (updates and status changes call them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`
    CREATE OR REPLACE FUNCTION invoicing_list_bump(team varchar) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO team_document_counts AS c (team_id, shard, documents, changes)
      VALUES (team, mod(txid_current(), 16)::int, 0, 1)
      ON CONFLICT (team_id, shard) DO UPDATE SET changes = c.changes + 1;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION invoicing_list_month(team varchar, day varchar, n integer) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO team_month_counts AS m (team_id, month, shard, documents)
      VALUES (team, substr(day, 1, 7), mod(txid_current(), 16)::int, n)
      ON CONFLICT (team_id, month, shard) DO UPDATE SET documents = m.documents + n;
    END $$`.execute(db);
  // Grouped and ordered by team (and month), so a statement inserting for several teams (a bulk
  // import) takes the counter rows in one order.
  await sql`
    CREATE FUNCTION invoicing_invoices_list_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO team_document_counts AS c (team_id, shard, documents, changes)
      SELECT team_id, mod(txid_current(), 16)::int, 0, count(*) FROM new_rows GROUP BY team_id ORDER BY team_id
      ON CONFLICT (team_id, shard) DO UPDATE SET changes = c.changes + excluded.changes;
      INSERT INTO team_month_counts AS m (team_id, month, shard, documents)
      SELECT team_id, substr(date, 1, 7), mod(txid_current(), 16)::int, count(*) FROM new_rows
      GROUP BY team_id, substr(date, 1, 7) ORDER BY 1, 2
      ON CONFLICT (team_id, month, shard) DO UPDATE SET documents = m.documents + excluded.documents;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION invoicing_share_links_list_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO team_document_counts AS c (team_id, shard, documents, changes)
      SELECT team_id, mod(txid_current(), 16)::int, 0, count(*) FROM new_rows GROUP BY team_id ORDER BY team_id
      ON CONFLICT (team_id, shard) DO UPDATE SET changes = c.changes + excluded.changes;
      RETURN NULL;
    END $$`.execute(db);
  await sql`DROP TRIGGER invoices_list_version ON invoices`.execute(db);
  await sql`
    CREATE TRIGGER invoices_list_version AFTER UPDATE OR DELETE ON invoices
    FOR EACH ROW EXECUTE FUNCTION invoicing_invoices_list_trigger()`.execute(db);
  await sql`
    CREATE TRIGGER invoices_list_insert AFTER INSERT ON invoices REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION invoicing_invoices_list_insert()`.execute(db);
  await sql`DROP TRIGGER share_links_list_version ON share_links`.execute(db);
  // `last_opened_at` (every open of a link) is not in the list: not a change of it.
  await sql`
    CREATE TRIGGER share_links_list_version AFTER DELETE OR UPDATE OF token, kind, public_id, team_id ON share_links
    FOR EACH ROW EXECUTE FUNCTION invoicing_share_links_list_trigger()`.execute(db);
  await sql`
    CREATE TRIGGER share_links_list_insert AFTER INSERT ON share_links REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION invoicing_share_links_list_insert()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
