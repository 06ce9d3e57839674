/**
 * The daily e-mail quota on PostgreSQL: the shard rows (postgres-shards.ts), and the blocks of
 * e-mails a node holds for a team whose limit is 1,024 a day or more (postgres-held-quota.ts),
 * from which its e-mailed creates take theirs without a statement.
 */
import type { Executor } from '../../../db/database.js';
import type { QuotaStoreFactory } from './index.js';
import { HeldQuota } from './postgres-held-quota.js';
import { reserveInShards } from './postgres-shards.js';
import { PRUNE_BATCH, pruneTable, reservedInFirstRow } from './portable.js';

/** E-mails let through for the team on `day`: the sum of its shard rows. */
async function reservedOn(db: Executor, teamId: string, day: string): Promise<number> {
  const others = await db
    .selectFrom('email_quota_shards')
    .select((eb) => eb.fn.sum<number | string | null>('reserved').as('n'))
    .where('team_id', '=', teamId)
    .where('day', '=', day)
    .executeTakeFirst();
  return (await reservedInFirstRow(db, teamId, day)) + Number(others?.n ?? 0);
}

/** Retention over both tables: shard 0's rows first, then the others. */
async function prunePastDays(db: Executor, beforeDay: string, limit = PRUNE_BATCH): Promise<number> {
  let deleted = await pruneTable(db, 'email_quota', ['team_id', 'day'], beforeDay, limit);
  if (deleted < limit) deleted += await pruneTable(db, 'email_quota_shards', ['team_id', 'day', 'shard'], beforeDay, limit - deleted);
  return deleted;
}

export const createPostgresQuotaStore: QuotaStoreFactory = ({ db, clock, onError }) => {
  const held = new HeldQuota(db, clock, onError);
  return {
    reserve: reserveInShards,
    takeHeld: (teamId, day, limit, count) => held.take(teamId, day, limit, count),
    giveBack: (taken) => held.giveBack(taken),
    heldFor: (teamId, day) => held.heldFor(teamId, day),
    reservedOn,
    prunePastDays,
    close: () => held.close(),
  };
};
