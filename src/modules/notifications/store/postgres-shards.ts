/**
 * The daily e-mail quota's shard rows on PostgreSQL. A row's lock is held from the reservation
 * to the commit, so with one row a team's e-mail-sending writes queued behind each other on
 * every node (a bulk run of one team ran at a third of its plain creates). So a day is `SHARDS`
 * rows (shard 0 the `email_quota` row, 1–15 rows of `email_quota_shards`, migration
 * 2026-11-27T0900), shard k allowed its share of the limit L, `floor(L / SHARDS) + (k < L %
 * SHARDS ? 1 : 0)`: the shares add up to L and no row passes its share (checked under its lock),
 * so the day never passes L (an e-mailed create 375/415 → 683/697 req/s, docs/performance.md).
 *
 * A write reserves all its e-mails in a shard drawn at random, with an UPDATE within the share,
 * or an INSERT of the row if it is missing, under a savepoint. When that shard has no room for
 * all of them, the write goes back to the savepoint (which lets go of the drawn row: an UPDATE
 * that waited for another write of it keeps it locked even when it then finds no room) and
 * takes what each shard has left in ascending shard order, locking each row as it reads it (FOR
 * UPDATE): a write holds its locks in that order and only waits for higher ones, so two writes
 * cannot deadlock on the quota. Near the limit the last e-mails go to whichever write locks a
 * shard with room first; the total stays exact. Compiled once (src/db/prepared-query.ts).
 */
import crypto from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { preparedQuery } from '../../../db/prepared-query.js';
import type { EmailQuotaShardsTable } from '../../../db/types.js';

/** The shard rows per team and day. */
export const SHARDS = 16;

/** Shard `shard`'s part of `limit`. */
export function shareOf(shard: number, limit: number): number {
  return Math.floor(limit / SHARDS) + (shard < limit % SHARDS ? 1 : 0);
}

type ShardParams = 'teamId' | 'day' | 'shard' | 'now';

/** PostgreSQL's statements on one shard's row: shard 0 is `email_quota`, 1–15 `email_quota_shards`. */
interface ShardStatements {
  /**
   * Adds `count` if the row stays within `share`; a row back when it did. A row another write
   * changed meanwhile stays locked even when it then has no room (the recheck locks it).
   */
  addWithin: (db: Executor, values: Record<ShardParams | 'count' | 'share', unknown>) => Promise<Array<{ reserved: number }>>;
  /** The row, new, holding `count`; nothing back if it exists. */
  insert: (db: Executor, values: Record<ShardParams | 'count', unknown>) => Promise<Array<{ reserved: number }>>;
  /** The row read under its lock (FOR UPDATE). */
  lock: (db: Executor, values: Record<ShardParams, unknown>) => Promise<Array<{ reserved: number }>>;
  /**
   * Adds `count` (the caller holds the row's lock and checked the share), or takes away a
   * negative `count` that the caller added (`giveBackToShard`).
   */
  add: (db: Executor, values: Record<ShardParams | 'count', unknown>) => Promise<unknown[]>;
}

/**
 * The statements of shard 0 (`email_quota`, keyed by team and day) or of shards 1–15
 * (`email_quota_shards`, keyed by team, day and shard). Typed as the latter, whose columns
 * are the former's and `shard`, which is only named for it.
 */
function shardStatements(table: 'email_quota' | 'email_quota_shards'): ShardStatements {
  const sharded = table === 'email_quota_shards';
  const rows = table as 'email_quota_shards';
  type P = ShardParams | 'count' | 'share';
  const isRow = (p: (name: ShardParams) => any) =>
    sql<boolean>`team_id = ${p('teamId')} and day = ${p('day')}${sharded ? sql` and shard = ${p('shard')}` : sql``}`;
  const added = (p: (name: ShardParams | 'count') => any) => ({ reserved: sql<number>`reserved + ${p('count')}::int`, updated_at: p('now') });
  return {
    addWithin: preparedQuery<P, { reserved: number }>((db, p) =>
      db
        .updateTable(rows)
        .set(added(p))
        .where(isRow(p))
        .where(sql<number>`reserved + ${p('count')}::int`, '<=', p('share'))
        .returning('reserved'),
    ),
    insert: preparedQuery<ShardParams | 'count', { reserved: number }>((db, p) =>
      db
        .insertInto(rows)
        .values({ team_id: p('teamId'), day: p('day'), ...(sharded ? { shard: p('shard') } : {}), reserved: p('count'), updated_at: p('now') } as Insertable<EmailQuotaShardsTable>)
        .onConflict((oc) => oc.doNothing())
        .returning('reserved'),
    ),
    lock: preparedQuery<ShardParams, { reserved: number }>((db, p) => db.selectFrom(rows).select('reserved').where(isRow(p)).forUpdate()),
    add: preparedQuery<ShardParams | 'count', never>((db, p) => db.updateTable(rows).set(added(p)).where(isRow(p))),
  };
}

const firstShard = shardStatements('email_quota');
const otherShards = shardStatements('email_quota_shards');

const statementsOf = (shard: number): ShardStatements => (shard === 0 ? firstShard : otherShards);

/**
 * Takes up to `count` e-mails from the team's quota for `day`, in order: how many were let
 * through (the first ones), 0 when `limit` is already reached. One call per transaction (the
 * write path makes one): a second could hold a higher shard while locking lower ones.
 */
export async function reserveInShards(db: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number> {
  if (limit <= 0 || count <= 0) return 0;
  // The common case: a shard drawn at random has room for all of them. In a transaction, under a
  // savepoint undone when it has not: an UPDATE that waited for another write of the row and then
  // found no room keeps the row locked (PostgreSQL locks the row's latest version before it checks
  // the condition again), and the way below must not wait for lower shards while it holds a higher
  // one (two writes deadlocked so near the limit). Outside a transaction each statement is one.
  const home = crypto.randomInt(SHARDS);
  if (db.isTransaction) await SAVEPOINT.execute(db);
  if ((await reserveInShard(db, teamId, day, home, limit, count, now)) === count) return count;
  if (db.isTransaction) await ROLLBACK_TO_SAVEPOINT.execute(db);
  // Otherwise what each shard has left, in ascending order, each row locked as it is read.
  let granted = 0;
  for (let shard = 0; shard < SHARDS && granted < count; shard++) {
    const room = shareOf(shard, limit);
    if (room === 0) continue;
    const at = statementsOf(shard);
    const key = { teamId, day, shard, now };
    let [row] = await at.lock(db, key);
    if (row === undefined) {
      const take = Math.min(count - granted, room);
      // A new row holding what it takes; when another write created it meanwhile, read that one.
      if ((await at.insert(db, { ...key, count: take })).length > 0) {
        granted += take;
        continue;
      }
      [row] = await at.lock(db, key);
    }
    const take = Math.min(count - granted, room - (row?.reserved ?? room));
    if (take <= 0) continue;
    await at.add(db, { ...key, count: take });
    granted += take;
  }
  return granted;
}

const SAVEPOINT = sql`savepoint quota_home`;
const ROLLBACK_TO_SAVEPOINT = sql`rollback to savepoint quota_home`;

/**
 * PostgreSQL: `count` e-mails added to shard `shard`'s row of the day if they fit in its share,
 * all or none (the row inserted when missing, or added to when another write inserted it
 * meanwhile): `count` or 0. In a transaction the row may stay locked when it had no room (see
 * `reserveInShards`).
 */
export async function reserveInShard(db: Executor, teamId: string, day: string, shard: number, limit: number, count: number, now: string): Promise<number> {
  const share = shareOf(shard, limit);
  if (count <= 0 || count > share) return 0;
  const values = { teamId, day, shard, count, share, now };
  const at = statementsOf(shard);
  if ((await at.addWithin(db, values)).length > 0 || (await at.insert(db, values)).length > 0) return count;
  // The row exists: full, or inserted by another write since the UPDATE looked.
  return (await at.addWithin(db, values)).length > 0 ? count : 0;
}

/**
 * PostgreSQL: `count` e-mails that `reserveInShard` added to shard `shard` and that were never
 * let through given back (a node's unused held e-mails, postgres-held-quota.ts). Nothing when the day's
 * row is gone (pruned).
 */
export async function giveBackToShard(db: Executor, teamId: string, day: string, shard: number, count: number, now: string): Promise<void> {
  if (count > 0) await statementsOf(shard).add(db, { teamId, day, shard, now, count: -count });
}

