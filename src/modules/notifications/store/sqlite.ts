/**
 * The daily e-mail quota on SQLite (one writer at a time): one row per team and day; a write
 * inserts it, or adds to it only while the sum stays within the limit, one statement, in the
 * write's transaction (inside a group commit's batch, the write's savepoint: a write rolled back
 * gives its e-mails back). Compiled once (src/db/prepared-query.ts). No e-mails are held by a
 * node: every create reserves its own in its transaction.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { preparedQuery } from '../../../db/prepared-query.js';
import type { QuotaStore, QuotaStoreFactory } from './index.js';
import { PRUNE_BATCH, pruneTable, reservedInFirstRow } from './portable.js';

/** Adds `count` to the day's row if the sum stays within `limit`; a row back when it did (SQLite). */
const reserveInOneRow = preparedQuery<'teamId' | 'day' | 'count' | 'limit' | 'now', { reserved: number }>((db, p) =>
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

async function reserve(db: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number> {
  if (limit <= 0 || count <= 0) return 0;
  // All at once; a new day's row starts at `count`, so only when that fits the limit.
  if (count <= limit && (await reserveInOneRow(db, { teamId, day, count, limit, now })).length > 0) return count;
  if (count === 1) return 0;
  let granted = 0;
  while (granted < count && (await reserveInOneRow(db, { teamId, day, count: 1, limit, now })).length > 0) granted++;
  return granted;
}

export const createSqliteQuotaStore: QuotaStoreFactory = (): QuotaStore => ({
  reserve,
  takeHeld: () => null,
  giveBack: () => undefined,
  heldFor: () => 0,
  reservedOn: reservedInFirstRow,
  prunePastDays: (db, beforeDay, limit = PRUNE_BATCH) => pruneTable(db, 'email_quota', ['team_id', 'day'], beforeDay, limit),
  close: async () => undefined,
});
