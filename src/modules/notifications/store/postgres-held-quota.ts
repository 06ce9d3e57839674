/**
 * PostgreSQL: e-mails of the daily quota a node holds, so that most e-mailed creates write no
 * quota row at all (docs/notifications.md, "Held e-mails"; the store's `takeHeld`).
 *
 * A reservation on a shard row is a row version and its WAL per create, and a row lock held
 * until the commit that the team's other creates drawing the same shard wait on; it also needs a
 * transaction around the create. With the e-mails taken from what the node holds, a create whose
 * e-mails are recorded in its row is the plain create's one statement: measured, the e-mailed
 * create went from 0.86 to 0.98 of a plain create's rate (docs/performance.md).
 *
 * A node reserves a block of its team's e-mails for the day in one statement of its own, on a
 * shard drawn at random, within that shard's share as any reservation (`reserveInShard`),
 * and lets its creates through from it, in memory. The database stays the one account: what a
 * node holds is reserved there, so the day never passes the limit, across any number of nodes.
 *
 * - Block size: `blockSize(limit)`, at most `BLOCK_MAX`, and never more than a 1/1024th of the
 *   limit, so a team whose limit is below 1,024 (any tariff a test or a small shop has) gets no
 *   block and every create reserves its e-mails in its transaction. A node asks for the
 *   next block when what it holds falls below half a block, in the background, so its creates
 *   rarely find it empty; one request at a time per team and day. Until it arrives, or when the
 *   drawn shard has no room for a block (then no new request for `REFILL_PAUSE_MS`), creates
 *   reserve their e-mails in their transaction, exactly: near the limit that is all that is left.
 * - A create whose document was not written gives its e-mails back to the node (`giveBack`); one
 *   whose outcome is unknown (the connection was lost) does not: at worst e-mails are counted that
 *   were never sent, never the other way round.
 * - What a node holds unused goes back to the rows: after `IDLE_MS` without a create of that team
 *   and day (a sweep every `SWEEP_MS`), when the tariff's limit changes, and when the node shuts
 *   down (`close`). A node killed without shutting down loses what it held for the day: at most
 *   1.5 blocks per team, counted as let through although never sent.
 * - Until it goes back, what a node holds counts as taken: near the limit, another node may
 *   refuse up to that many e-mails that this one still holds (for `IDLE_MS` at most if this one
 *   is idle); the total let through never passes the limit.
 * - At most `MAX_HELD` teams and days held per node; beyond, creates reserve their e-mails in
 *   their transaction.
 */
import type { Executor } from '../../../db/database.js';
import type { Clock } from '../../../shared/clock.js';
import type { HeldTake } from './index.js';
import { utcDay } from './portable.js';
import { giveBackToShard, reserveInShard, SHARDS, shareOf } from './postgres-shards.js';
import crypto from 'node:crypto';

/** The most e-mails of one team and day a node reserves at once. */
export const BLOCK_MAX = 64;
/** A block is at most this fraction of the day's limit: below 1,024 a day, no blocks. */
export const BLOCK_DIVISOR = 1024;
/** Held e-mails of a team and day without a create for this long go back to the rows. */
export const IDLE_MS = 30_000;
/** How often the idle ones are looked for. */
export const SWEEP_MS = 10_000;
/** After a block request found its shard without room, none for this long. */
export const REFILL_PAUSE_MS = 1_000;
/** Teams and days held per node at most. */
export const MAX_HELD = 10_000;

/** The block a node reserves at once for a team whose daily limit is `limit` (0: none). */
export function blockSize(limit: number): number {
  return Math.min(BLOCK_MAX, Math.floor(limit / BLOCK_DIVISOR));
}

interface Held {
  teamId: string;
  day: string;
  limit: number;
  /** Unused e-mails per shard whose row they are reserved in. */
  shards: Map<number, number>;
  total: number;
  refilling: boolean;
  /** No block request before this time (ms). */
  pauseUntil: number;
  usedAt: number;
}

export class HeldQuota {
  private readonly held = new Map<string, Held>();
  /** Block requests and give-backs under way (`close` waits for them). */
  private readonly running = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly onError: (err: unknown, what: string) => void,
  ) {}

  /**
   * `count` e-mails of `teamId`'s quota for `day` from what this node holds, or null when it
   * does not hold that many (then reserve them in the statement). Asks for the next block when
   * what is held runs low.
   */
  take(teamId: string, day: string, limit: number, count: number): HeldTake | null {
    const size = blockSize(limit);
    if (size === 0 || count <= 0 || count > size || this.closed) return null;
    const key = `${teamId}\u0000${day}`;
    let entry = this.held.get(key);
    if (entry !== undefined && entry.limit !== limit) {
      // The tariff changed: what was reserved under the old limit goes back.
      this.release(key, entry);
      entry = undefined;
    }
    const now = this.clock.now().getTime();
    if (entry === undefined) {
      if (this.held.size >= MAX_HELD) return null;
      entry = { teamId, day, limit, shards: new Map(), total: 0, refilling: false, pauseUntil: 0, usedAt: now };
      this.held.set(key, entry);
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    }
    entry.usedAt = now;
    let taken: HeldTake | null = null;
    for (const [shard, left] of entry.shards) {
      if (left < count) continue;
      entry.shards.set(shard, left - count);
      entry.total -= count;
      taken = { teamId, day, limit, shard, count };
      break;
    }
    if (entry.total < size / 2 && !entry.refilling && now >= entry.pauseUntil) this.refill(key, entry, size);
    return taken;
  }

  /** A create's statement wrote nothing: what it took is held again (or, no longer held, given back to its row). */
  giveBack(taken: HeldTake): void {
    const entry = this.held.get(`${taken.teamId}\u0000${taken.day}`);
    if (entry !== undefined && entry.limit === taken.limit && !this.closed) {
      entry.shards.set(taken.shard, (entry.shards.get(taken.shard) ?? 0) + taken.count);
      entry.total += taken.count;
      return;
    }
    this.track(giveBackToShard(this.db, taken.teamId, taken.day, taken.shard, taken.count, this.nowIso()), 'give back held e-mails');
  }

  /** E-mails held unused for `teamId` and `day` (tests, metrics). */
  heldFor(teamId: string, day: string): number {
    return this.held.get(`${teamId}\u0000${day}`)?.total ?? 0;
  }

  /** Gives back every held e-mail after the requests under way; no more blocks. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    await Promise.allSettled([...this.running]);
    for (const [key, entry] of this.held) this.release(key, entry);
    await Promise.allSettled([...this.running]);
  }

  /** Gives back what was held unused for `IDLE_MS`, and what was held for another day than today. */
  sweep(): void {
    const now = this.clock.now().getTime();
    const today = utcDay(new Date(now));
    for (const [key, entry] of this.held) {
      if (entry.refilling) continue;
      if (entry.day !== today || now - entry.usedAt >= IDLE_MS) this.release(key, entry);
    }
  }

  private refill(key: string, entry: Held, size: number): void {
    entry.refilling = true;
    // A shard drawn at random whose share fits a block (every one does when the limit allows a block).
    let shard = crypto.randomInt(SHARDS);
    if (shareOf(shard, entry.limit) < size) shard = 0;
    const request = reserveInShard(this.db, entry.teamId, entry.day, shard, entry.limit, size, this.nowIso()).then(
      async (granted) => {
        entry.refilling = false;
        if (granted === 0) {
          entry.pauseUntil = this.clock.now().getTime() + REFILL_PAUSE_MS;
          return;
        }
        if (this.held.get(key) === entry && !this.closed) {
          entry.shards.set(shard, (entry.shards.get(shard) ?? 0) + granted);
          entry.total += granted;
        } else {
          // Released (idle, or the node closing) while the request ran.
          await giveBackToShard(this.db, entry.teamId, entry.day, shard, granted, this.nowIso());
        }
      },
      (err) => {
        entry.refilling = false;
        entry.pauseUntil = this.clock.now().getTime() + REFILL_PAUSE_MS;
        throw err;
      },
    );
    this.track(request, 'reserve a block of e-mails');
  }

  /** No longer held: every unused e-mail goes back to its shard's row. */
  private release(key: string, entry: Held): void {
    this.held.delete(key);
    for (const [shard, left] of entry.shards) {
      if (left > 0) this.track(giveBackToShard(this.db, entry.teamId, entry.day, shard, left, this.nowIso()), 'give back held e-mails');
    }
    entry.shards.clear();
    entry.total = 0;
  }

  private track(work: Promise<void>, what: string): void {
    const tracked = work.catch((err: unknown) => this.onError(err, what)).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  private nowIso(): string {
    return this.clock.now().toISOString();
  }
}
