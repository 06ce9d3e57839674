/**
 * The tariff's `emails_per_day`: e-mails let through the gate per team and UTC day, behind one
 * interface with one design per database, chosen once by the composition root (src/stores.ts:
 * `createSqliteQuotaStore` or `createPostgresQuotaStore`).
 *
 * Atomic on both databases and across instances sharing the database, and inside the
 * document's transaction, so a reservation exists exactly when its outbox rows (or the record
 * in its document's row) do: an aborted write gives its e-mails back.
 * - SQLite (sqlite.ts): one row per team and day, one upsert per write.
 * - PostgreSQL (postgres.ts): 16 shard rows per team and day (postgres-shards.ts), and the
 *   blocks a node holds for teams whose tariff allows them (postgres-held-quota.ts).
 *
 * A write's e-mails are reserved together; when they do not all fit, the first recipients take
 * what is left and the rest are blocked. What counts: every e-mail let through at enqueue time,
 * whether it is then delivered or not; retries of it do not count again. Malformed addresses and
 * e-mails stopped by another gate do not count.
 */
import type { Db, Executor } from '../../../db/database.js';
import type { OutboxRow } from '../../../db/types.js';
import type { OutboxClaimRequest } from '../../../db/outbox-claim.js';
import type { Clock } from '../../../shared/clock.js';

/** E-mails a create took from what its node holds (`QuotaStore.takeHeld`): hand back to `giveBack` if its document was not written. */
export interface HeldTake {
  teamId: string;
  day: string;
  limit: number;
  shard: number;
  count: number;
}

export interface QuotaStore {
  /**
   * Takes up to `count` e-mails from the team's quota for `day` (`limit` a day), in the write's
   * transaction: how many were let through (the first ones), 0 when the limit is reached. One
   * call per transaction.
   */
  reserve(trx: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number>;
  /**
   * `count` e-mails of the team's quota for `day` from what this node holds, without a
   * statement; null when it does not hold that many (then they are reserved in the write's
   * transaction).
   */
  takeHeld(teamId: string, day: string, limit: number, count: number): HeldTake | null;
  /** The document of a `takeHeld` was not written: what it took is held again. */
  giveBack(taken: HeldTake): void;
  /** E-mails of `teamId`'s quota for `day` this node holds unused (tests, metrics). */
  heldFor(teamId: string, day: string): number;
  /** E-mails already let through for the team on `day` (what the node holds counts as let through). */
  reservedOn(db: Executor, teamId: string, day: string): Promise<number>;
  /**
   * Retention: deletes up to `limit` quota rows of days before `beforeDay` (`YYYY-MM-DD`); the
   * number deleted. A backlog goes in several calls.
   */
  prunePastDays(db: Executor, beforeDay: string, limit?: number): Promise<number>;
  /** Gives back what this node holds; before the database closes. */
  close(): Promise<void>;
}

/** A database's quota store, made by the notifications service with its clock and error log. */
export type QuotaStoreFactory = (deps: { db: Db; clock: Clock; onError: (err: unknown, what: string) => void }) => QuotaStore;

/** Claims due outbox rows of one kind for a worker (the outbox's claim of the database in use). */
export type OutboxClaimer = (claim: OutboxClaimRequest) => Promise<OutboxRow[]>;

/** What the notifications module stores per database (src/stores.ts builds it). */
export interface NotificationStores {
  quota: QuotaStoreFactory;
  claimOutbox: OutboxClaimer;
}
