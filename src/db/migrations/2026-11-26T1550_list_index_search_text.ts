import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * SQLite: `search_text` appended to the list index, `invoices_team_list_idx (team_id, date,
 * created_at, public_id, search_text)` (docs/performance.md "Session 5: 1,000,000 documents").
 *
 * A `q` matching many documents (more than the repository collects, 2,000) is answered by
 * walking the list index in order and testing each row's `search_text LIKE '%q%'` until the
 * page is full: at 1 % matches, ~100 rows per document on the page, ~9,000 for a page at
 * offset 36. With the text in the index entry SQLite tests it there (its deferred seek) and
 * reads a table row (~3 KB, one page each) only for a match: 12 ms → 1 ms for such a page at
 * 1M documents. The order and every other use of the index are unchanged (its first four
 * columns are the same); the name stays, so nothing that names it changes. Costs ~100 bytes
 * per document of index, and a PUT that changes the number, seller or buyer now also moves
 * the document's entry.
 *
 * PostgreSQL keeps its index: its planner cannot test a filter on an index entry of a scan that
 * also needs the table row, and its `q` is served by the GIN trigram index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`DROP INDEX invoices_team_list_idx`.execute(db);
  await sql`CREATE INDEX invoices_team_list_idx ON invoices (team_id, date, created_at, public_id, search_text)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
