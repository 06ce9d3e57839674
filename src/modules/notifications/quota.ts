/**
 * The tariff's `emails_per_day`: e-mails let through the gate per team and UTC day.
 *
 * One statement per e-mail, atomic on both databases and across instances sharing the
 * database: insert the day's counter at 1, or add 1 only while it is below the limit, and
 * return the new value; no row back means the quota is used up. It runs inside the
 * document's transaction, so a reservation exists exactly when its outbox row does (an
 * aborted write gives its e-mails back). On PostgreSQL the counter row stays locked until
 * commit, which orders concurrent writes of one team; other teams are not affected.
 *
 * What counts: every e-mail let through at enqueue time, whether it is then delivered or not;
 * retries of it do not count again. Malformed addresses and e-mails stopped by another gate
 * do not count.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/** The UTC calendar day of `date`, `YYYY-MM-DD`. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Takes one e-mail from the team's quota for `day`; false when `limit` is already reached. */
export async function reserveEmail(db: Executor, teamId: string, day: string, limit: number, now: string): Promise<boolean> {
  if (limit <= 0) return false;
  const row = await db
    .insertInto('email_quota')
    .values({ team_id: teamId, day, reserved: 1, updated_at: now })
    .onConflict((oc) =>
      oc
        .columns(['team_id', 'day'])
        .doUpdateSet({ reserved: sql<number>`email_quota.reserved + 1`, updated_at: now })
        .where('email_quota.reserved', '<', limit),
    )
    .returning('reserved')
    .executeTakeFirst();
  return row !== undefined;
}

/** E-mails already let through for the team on `day`. */
export async function reservedOn(db: Executor, teamId: string, day: string): Promise<number> {
  const row = await db.selectFrom('email_quota').select('reserved').where('team_id', '=', teamId).where('day', '=', day).executeTakeFirst();
  return row?.reserved ?? 0;
}
