/**
 * The tariff's `emails_per_day`: e-mails let through the gate per team and UTC day.
 *
 * Atomic on both databases and across instances sharing the database: insert the day's
 * counter, or add to it only while the sum stays within the limit, and return the new value;
 * no row back means the e-mails did not fit. It runs inside the document's transaction, so a
 * reservation exists exactly when its outbox rows do (an aborted write gives its e-mails back).
 * On PostgreSQL the counter row stays locked until commit, which orders concurrent writes of
 * one team; other teams are not affected.
 *
 * A write's e-mails are reserved together: one statement for all of them while the quota has
 * room (the common case), and one at a time, in recipient order, only when they do not all fit,
 * so the first recipients take what is left and the rest are blocked. The statement is compiled
 * once (src/db/prepared-query.ts).
 *
 * What counts: every e-mail let through at enqueue time, whether it is then delivered or not;
 * retries of it do not count again. Malformed addresses and e-mails stopped by another gate
 * do not count.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared-query.js';

/** The UTC calendar day of `date`, `YYYY-MM-DD`. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Adds `count` to the day's counter if the sum stays within `limit`; a row back when it did. */
const reserve = preparedQuery<'teamId' | 'day' | 'count' | 'limit' | 'now', { reserved: number }>((db, p) =>
  db
    .insertInto('email_quota')
    .values({ team_id: p('teamId'), day: p('day'), reserved: p('count'), updated_at: p('now') })
    .onConflict((oc) =>
      oc
        .columns(['team_id', 'day'])
        .doUpdateSet({ reserved: sql<number>`email_quota.reserved + ${p('count')}`, updated_at: p('now') })
        .where(sql<number>`email_quota.reserved + ${p('count')}`, '<=', p('limit')),
    )
    .returning('reserved'),
);

/**
 * Takes up to `count` e-mails from the team's quota for `day`, in order: returns how many were
 * let through (the first ones), 0 when `limit` is already reached.
 */
export async function reserveEmails(db: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number> {
  if (limit <= 0 || count <= 0) return 0;
  // All at once; a new day's counter starts at `count`, so only when that fits the limit.
  if (count <= limit && (await reserve(db, { teamId, day, count, limit, now })).length > 0) return count;
  if (count === 1) return 0;
  let granted = 0;
  while (granted < count && (await reserve(db, { teamId, day, count: 1, limit, now })).length > 0) granted++;
  return granted;
}

/** Takes one e-mail from the team's quota for `day`; false when `limit` is already reached. */
export async function reserveEmail(db: Executor, teamId: string, day: string, limit: number, now: string): Promise<boolean> {
  return (await reserveEmails(db, teamId, day, limit, 1, now)) === 1;
}

/** E-mails already let through for the team on `day`. */
export async function reservedOn(db: Executor, teamId: string, day: string): Promise<number> {
  const row = await db.selectFrom('email_quota').select('reserved').where('team_id', '=', teamId).where('day', '=', day).executeTakeFirst();
  return row?.reserved ?? 0;
}
