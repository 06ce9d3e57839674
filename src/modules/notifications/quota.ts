/**
 * The tariff's `emails_per_day`: e-mails let through the gate per team and UTC day.
 *
 * Atomic on both databases and across instances sharing the database, and inside the
 * document's transaction, so a reservation exists exactly when its outbox rows do (an aborted
 * write gives its e-mails back).
 *
 * SQLite (one writer at a time): one row per team and day; insert it, or add to it only while
 * the sum stays within the limit, one statement per write, in the write's transaction (inside a
 * group commit's batch, the write's savepoint: a write rolled back gives its e-mails back).
 *
 * PostgreSQL: a row's lock is held from the reservation to the commit, so with one row a team's
 * e-mail-sending writes queued behind each other on every node (a bulk run of one team ran at a
 * third of its plain creates, every connection waiting on that lock). So a day is `SHARDS` rows
 * (shard 0 the `email_quota` row, 1–15 rows of `email_quota_shards`, migration
 * 2026-11-27T0900), shard k allowed its share of the limit L, `floor(L / SHARDS) + (k < L %
 * SHARDS ? 1 : 0)`: the shares add up to L and no row passes its share (checked under its lock),
 * so the day never passes L. A write reserves all its e-mails in a shard drawn at random, with an
 * UPDATE within the share, or an INSERT of the row if it is missing, under a savepoint. When that
 * shard has no room for all of them, the write goes back to the savepoint (which lets go of the
 * drawn row: an UPDATE that waited for another write of it keeps it locked even when it then finds
 * no room) and takes what each shard has left in ascending shard order, locking each row as it
 * reads it (FOR UPDATE): a write holds its locks in that order and only waits for higher ones, so
 * two writes cannot deadlock on the quota. Near the limit the last e-mails go to whichever write
 * locks a shard with room first; the total stays exact. Most e-mailed creates take their e-mails
 * from what their node holds instead (held-quota.ts).
 *
 * A write's e-mails are reserved together; when they do not all fit, the first recipients take
 * what is left and the rest are blocked. What counts: every e-mail let through at enqueue time,
 * whether it is then delivered or not; retries of it do not count again. Malformed addresses and
 * e-mails stopped by another gate do not count. The statements are compiled once
 * (src/db/prepared-query.ts).
 */
import crypto from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import { dialectOf, type Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { EmailQuotaShardsTable } from '../../db/types.js';

/** PostgreSQL's shard rows per team and day. */
export const SHARDS = 16;

/** The UTC calendar day of `date`, `YYYY-MM-DD`. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Shard `shard`'s part of `limit` (PostgreSQL). */
export function shareOf(shard: number, limit: number): number {
  return Math.floor(limit / SHARDS) + (shard < limit % SHARDS ? 1 : 0);
}

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
 * Takes up to `count` e-mails from the team's quota for `day`, in order: returns how many were
 * let through (the first ones), 0 when `limit` is already reached. One call per transaction
 * (the write path makes one): a second could hold a higher shard while locking lower ones.
 */
export async function reserveEmails(db: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number> {
  if (limit <= 0 || count <= 0) return 0;
  if (dialectOf(db) === 'postgres') return reserveInShards(db, teamId, day, limit, count, now);
  // All at once; a new day's row starts at `count`, so only when that fits the limit.
  if (count <= limit && (await reserveInOneRow(db, { teamId, day, count, limit, now })).length > 0) return count;
  if (count === 1) return 0;
  let granted = 0;
  while (granted < count && (await reserveInOneRow(db, { teamId, day, count: 1, limit, now })).length > 0) granted++;
  return granted;
}

async function reserveInShards(db: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number> {
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
 * let through given back (a node's unused held e-mails, held-quota.ts). Nothing when the day's
 * row is gone (pruned).
 */
export async function giveBackToShard(db: Executor, teamId: string, day: string, shard: number, count: number, now: string): Promise<void> {
  if (count > 0) await statementsOf(shard).add(db, { teamId, day, shard, now, count: -count });
}

/** E-mails already let through for the team on `day` (every shard). */
export async function reservedOn(db: Executor, teamId: string, day: string): Promise<number> {
  const first = await db.selectFrom('email_quota').select('reserved').where('team_id', '=', teamId).where('day', '=', day).executeTakeFirst();
  if (dialectOf(db) !== 'postgres') return first?.reserved ?? 0;
  const others = await db
    .selectFrom('email_quota_shards')
    .select((eb) => eb.fn.sum<number | string | null>('reserved').as('n'))
    .where('team_id', '=', teamId)
    .where('day', '=', day)
    .executeTakeFirst();
  return (first?.reserved ?? 0) + Number(others?.n ?? 0);
}

/** Quota rows deleted per statement by `prunePastDays`. */
export const PRUNE_BATCH = 1_000;

/**
 * Retention: deletes up to `limit` quota rows of days before `beforeDay` (`YYYY-MM-DD`), from
 * `email_quota` and, on PostgreSQL, `email_quota_shards`; the number deleted. A reservation only
 * ever counts on the UTC day of its write (`utcDay`), so once the clocks of every node are past
 * a day its rows are never read or written again; left alone they grew by one row per team and
 * day (16 on PostgreSQL). Each statement picks its rows by the day, deletes them by key, and
 * stays within `limit`: a backlog goes in several calls.
 */
export async function prunePastDays(db: Executor, beforeDay: string, limit = PRUNE_BATCH): Promise<number> {
  let deleted = await pruneTable(db, 'email_quota', ['team_id', 'day'], beforeDay, limit);
  if (dialectOf(db) === 'postgres' && deleted < limit) {
    deleted += await pruneTable(db, 'email_quota_shards', ['team_id', 'day', 'shard'], beforeDay, limit - deleted);
  }
  return deleted;
}

async function pruneTable(db: Executor, table: string, key: string[], beforeDay: string, limit: number): Promise<number> {
  const columns = sql.join(key.map((c) => sql.ref(c)));
  const result = await sql`delete from ${sql.table(table)} where (${columns}) in
    (select ${columns} from ${sql.table(table)} where day < ${beforeDay} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
