import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * `events.tx_id` is filled by the database itself: on PostgreSQL its default becomes the writing
 * transaction's id (`pg_current_xact_id()`), the feed position's first half (docs/webhooks.md,
 * "Ordering"); on SQLite it stays 0 (one writer at a time: `seq` alone is the commit order). So
 * the insert of an event is the same statement on both databases, and whoever writes an event
 * in its transaction hands over only its data. A default is evaluated per row exactly as the
 * expression written in the insert was, so the positions are the same as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`alter table events alter column tx_id set default (pg_current_xact_id()::text::bigint)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
