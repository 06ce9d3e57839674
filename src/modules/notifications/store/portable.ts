/**
 * The daily e-mail quota's portable parts: the UTC day a reservation counts on, the first
 * row's read, and the retention's delete (store/sqlite.ts and store/postgres.ts).
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';

/** The UTC calendar day of `date`, `YYYY-MM-DD`. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Quota rows deleted per statement by `prunePastDays`. */
export const PRUNE_BATCH = 1_000;

/** The team-day's `email_quota` row's count (0 without one). */
export async function reservedInFirstRow(db: Executor, teamId: string, day: string): Promise<number> {
  const first = await db.selectFrom('email_quota').select('reserved').where('team_id', '=', teamId).where('day', '=', day).executeTakeFirst();
  return first?.reserved ?? 0;
}

/**
 * Retention: deletes up to `limit` rows of `table` of days before `beforeDay`, picked by the
 * day, deleted by `key`; the number deleted. A reservation only ever counts on the UTC day of
 * its write (`utcDay`), so once the clocks of every node are past a day its rows are never read
 * or written again; left alone they grow by a row per team and day.
 */
export async function pruneTable(db: Executor, table: string, key: string[], beforeDay: string, limit: number): Promise<number> {
  const columns = sql.join(key.map((c) => sql.ref(c)));
  const result = await sql`delete from ${sql.table(table)} where (${columns}) in
    (select ${columns} from ${sql.table(table)} where day < ${beforeDay} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
