import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * The team's change counter (`team_document_counts.changes`, migration 2026-11-26T1400) also
 * moves on an update of a share link's recipient columns (`email`, `name`, `position`,
 * `sort_order`, `created_at`), not only of the list-visible ones (issue 12, session 5). The
 * detail cache (src/modules/invoices/invoice.detail-cache.ts) serves a document's GET with no
 * read of its row, links or EDO state while that counter is where it was when the cached text
 * was last validated, so every column the detail shows must move it. Every column but
 * `last_opened_at` (an open of a link, shown nowhere) now does; the triggers on `invoices`
 * already fire on any update. The same bump as before, in the writing transaction, so no
 * writer can forget it; the recipient columns change only when a document's recipients are
 * edited, in a transaction that already bumps the counter through `invoices`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    // Inserts are counted by the statement-level trigger of migration 2026-11-26T1530
    // (share_links_list_insert); this row trigger covers updates and deletes.
    await sql`DROP TRIGGER share_links_list_version ON share_links`.execute(db);
    await sql`
      CREATE TRIGGER share_links_list_version
      AFTER DELETE OR UPDATE OF token, kind, public_id, team_id, email, name, position, sort_order, created_at ON share_links
      FOR EACH ROW EXECUTE FUNCTION invoicing_share_links_list_trigger()`.execute(db);
    return;
  }
  const bump = (team: string) => `
      INSERT INTO team_document_counts (team_id, shard, documents, changes) VALUES (${team}, 0, 0, 1)
        ON CONFLICT (team_id, shard) DO UPDATE SET changes = changes + 1;`;
  await sql`DROP TRIGGER share_links_list_after_update`.execute(db);
  await sql.raw(`CREATE TRIGGER share_links_list_after_update
    AFTER UPDATE OF token, kind, public_id, team_id, email, name, position, sort_order, created_at ON share_links BEGIN${bump('new.team_id')}${bump('old.team_id')}
    END`).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
