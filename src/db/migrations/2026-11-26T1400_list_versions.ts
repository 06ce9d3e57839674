import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * The list's page cache and month counts (issue 12, docs/performance.md "The list (this session)").
 *
 * 1. `team_document_counts.changes`: a team's change counter, the sum over its shard rows.
 *    Every write to a team's `invoices` rows (create, PUT, every status move, `changed_at`,
 *    link epoch) and to the list-visible columns of its `share_links` (a link added, removed,
 *    rotated) adds 1 in the writing transaction, so a node reading the sum before it reads a
 *    page knows whether a page it kept is still the page. Database triggers do it, so no write
 *    path (present or future, worker or CLI) can forget it and PostgreSQL pays no round trip.
 * 2. `team_month_counts`: documents per team and month of `date` (`YYYY-MM`), kept by the same
 *    triggers (insert, a date moved to another month, delete), so the exact `total` of a date
 *    range is a sum over its whole months plus counts of its partial edge months.
 *
 * PostgreSQL: every counter write of a transaction goes to the shard `txid % 16` (the same row
 * for the whole transaction, also for `addDocuments`), so concurrent writes of a team spread
 * over 16 rows and one transaction never holds two shard rows of a team (no lock-order
 * deadlock between them). SQLite (one writer at a time): shard 0.
 *
 * Documents stored before this migration are counted into their months here once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('team_document_counts').addColumn('changes', 'bigint', (col) => col.notNull().defaultTo(0)).execute();
  await db.schema
    .createTable('team_month_counts')
    .addColumn('team_id', 'varchar(100)', (col) => col.notNull())
    .addColumn('month', 'varchar(7)', (col) => col.notNull())
    .addColumn('shard', 'integer', (col) => col.notNull())
    .addColumn('documents', 'bigint', (col) => col.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('team_month_counts_pk', ['team_id', 'month', 'shard'])
    .execute();
  await sql`INSERT INTO team_month_counts (team_id, month, shard, documents)
            SELECT team_id, substr(date, 1, 7), 0, count(*) FROM invoices GROUP BY team_id, substr(date, 1, 7)`.execute(db);

  if (dialectOf(db) === 'postgres') {
    await sql`
      CREATE FUNCTION invoicing_list_bump(team varchar) RETURNS void LANGUAGE sql AS $$
        INSERT INTO team_document_counts (team_id, shard, documents, changes)
        VALUES (team, mod(txid_current(), 16)::int, 0, 1)
        ON CONFLICT (team_id, shard) DO UPDATE SET changes = team_document_counts.changes + 1
      $$`.execute(db);
    await sql`
      CREATE FUNCTION invoicing_list_month(team varchar, day varchar, n integer) RETURNS void LANGUAGE sql AS $$
        INSERT INTO team_month_counts (team_id, month, shard, documents)
        VALUES (team, substr(day, 1, 7), mod(txid_current(), 16)::int, n)
        ON CONFLICT (team_id, month, shard) DO UPDATE SET documents = team_month_counts.documents + n
      $$`.execute(db);
    await sql`
      CREATE FUNCTION invoicing_invoices_list_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM invoicing_list_bump(NEW.team_id);
          PERFORM invoicing_list_month(NEW.team_id, NEW.date, 1);
        ELSIF TG_OP = 'UPDATE' THEN
          PERFORM invoicing_list_bump(NEW.team_id);
          IF OLD.team_id IS DISTINCT FROM NEW.team_id THEN PERFORM invoicing_list_bump(OLD.team_id); END IF;
          IF OLD.team_id IS DISTINCT FROM NEW.team_id OR substr(OLD.date, 1, 7) IS DISTINCT FROM substr(NEW.date, 1, 7) THEN
            PERFORM invoicing_list_month(OLD.team_id, OLD.date, -1);
            PERFORM invoicing_list_month(NEW.team_id, NEW.date, 1);
          END IF;
        ELSE
          PERFORM invoicing_list_bump(OLD.team_id);
          PERFORM invoicing_list_month(OLD.team_id, OLD.date, -1);
        END IF;
        RETURN NULL;
      END $$`.execute(db);
    await sql`
      CREATE TRIGGER invoices_list_version AFTER INSERT OR UPDATE OR DELETE ON invoices
      FOR EACH ROW EXECUTE FUNCTION invoicing_invoices_list_trigger()`.execute(db);
    await sql`
      CREATE FUNCTION invoicing_share_links_list_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'DELETE' THEN PERFORM invoicing_list_bump(NEW.team_id); END IF;
        IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.team_id IS DISTINCT FROM NEW.team_id) THEN
          PERFORM invoicing_list_bump(OLD.team_id);
        END IF;
        RETURN NULL;
      END $$`.execute(db);
    // `last_opened_at` (every open of a link) is not in the list: not a change of it.
    await sql`
      CREATE TRIGGER share_links_list_version AFTER INSERT OR DELETE OR UPDATE OF token, kind, public_id, team_id ON share_links
      FOR EACH ROW EXECUTE FUNCTION invoicing_share_links_list_trigger()`.execute(db);
    return;
  }

  const bump = (team: string) => `
      INSERT INTO team_document_counts (team_id, shard, documents, changes) VALUES (${team}, 0, 0, 1)
        ON CONFLICT (team_id, shard) DO UPDATE SET changes = changes + 1;`;
  const month = (team: string, day: string, n: number) => `
      INSERT INTO team_month_counts (team_id, month, shard, documents) VALUES (${team}, substr(${day}, 1, 7), 0, ${n})
        ON CONFLICT (team_id, month, shard) DO UPDATE SET documents = documents + (${n});`;
  await sql.raw(`CREATE TRIGGER invoices_list_after_insert AFTER INSERT ON invoices BEGIN${bump('new.team_id')}${month('new.team_id', 'new.date', 1)}
    END`).execute(db);
  await sql.raw(`CREATE TRIGGER invoices_list_after_update AFTER UPDATE ON invoices BEGIN${bump('new.team_id')}
    END`).execute(db);
  await sql.raw(`CREATE TRIGGER invoices_list_after_update_team AFTER UPDATE OF team_id ON invoices
    WHEN old.team_id IS NOT new.team_id BEGIN${bump('old.team_id')}
    END`).execute(db);
  await sql.raw(`CREATE TRIGGER invoices_list_after_update_month AFTER UPDATE OF date, team_id ON invoices
    WHEN old.team_id IS NOT new.team_id OR substr(old.date, 1, 7) IS NOT substr(new.date, 1, 7) BEGIN${month('old.team_id', 'old.date', -1)}${month('new.team_id', 'new.date', 1)}
    END`).execute(db);
  await sql.raw(`CREATE TRIGGER invoices_list_after_delete AFTER DELETE ON invoices BEGIN${bump('old.team_id')}${month('old.team_id', 'old.date', -1)}
    END`).execute(db);
  await sql.raw(`CREATE TRIGGER share_links_list_after_insert AFTER INSERT ON share_links BEGIN${bump('new.team_id')}
    END`).execute(db);
  await sql.raw(`CREATE TRIGGER share_links_list_after_delete AFTER DELETE ON share_links BEGIN${bump('old.team_id')}
    END`).execute(db);
  // `last_opened_at` (every open of a link) is not in the list: not a change of it.
  await sql.raw(`CREATE TRIGGER share_links_list_after_update AFTER UPDATE OF token, kind, public_id, team_id ON share_links BEGIN${bump('new.team_id')}${bump('old.team_id')}
    END`).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
