/**
 * Claiming due outbox rows with a lease: the one outbox statement that differs between the
 * two databases, so the claim is an object chosen once with the database (`OutboxClaim`, built by
 * the composition root: src/stores.ts). Either way it is a single UPDATE … RETURNING, so a row is
 * handed to exactly one claimer until its lease lapses. Webhook deliveries share the lease columns
 * and the due-condition; their claim, fair across endpoints, is the webhooks module's own.
 *
 * - PostgreSQL: the inner SELECT takes the rows `FOR UPDATE SKIP LOCKED`, so workers running
 *   at the same moment pick disjoint rows instead of queueing behind each other.
 * - SQLite: one writer at a time; the UPDATE runs under the write lock, so the inner SELECT
 *   sees every earlier claim. The outer WHERE repeats the due-condition on both databases, so
 *   a row claimed in between is never taken twice.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db, Executor } from './database.js';
import type { OutboxRow } from './types.js';

/** A worker's claim of one kind of outbox row. */
export interface OutboxClaimRequest {
  kind: OutboxRow['kind'];
  /** A token naming the claimer; outcomes are recorded only while it still holds the lease. */
  owner: string;
  limit: number;
  now: Date;
  /** How long the claim holds unless the claimer records an outcome first. */
  leaseMs: number;
}

/** The claim of due outbox rows on the database that runs. */
export interface OutboxClaim {
  /**
   * Claims up to `limit` due rows of `kind` (retries due, leases lapsed) for `owner`, leased for
   * `leaseMs`. A read first, so idle polling takes no write lock.
   */
  claimDue(db: Executor, claim: OutboxClaimRequest): Promise<OutboxRow[]>;
}

interface ClaimOutboxOptions {
  /** ISO-8601 UTC: rows due at or before this, and leases lapsed by it, are claimable. */
  now: string;
  /** ISO-8601 UTC: when this claim lapses unless the claimer records an outcome first. */
  leaseUntil: string;
  /** A token naming the claimer; outcomes are recorded only while it still holds the lease. */
  owner: string;
  limit: number;
  /** Outbox kinds to claim. */
  kinds: readonly string[];
}

/** The due-condition of a leased row: waiting and due, or claimed with its lease lapsed. */
export function dueCondition(now: string) {
  return sql<boolean>`((state = 'pending' and next_attempt_at <= ${now}) or (state = 'sending' and locked_until <= ${now}))`;
}

/**
 * Whether any row of the leased table (of `kinds`, for the outbox) is due: a read, so idle
 * polling takes no write lock.
 */
export async function anyDueRow(db: Executor | Db, table: 'outbox' | 'webhook_deliveries', now: string, kinds: readonly string[] = []): Promise<boolean> {
  if (table === 'outbox' && kinds.length === 0) return false;
  const kindFilter = table === 'outbox' ? sql`kind in (${sql.join(kinds.map((k) => sql`${k}`))}) and` : sql``;
  const result = await sql<{ one: number }>`select 1 as one from ${sql.table(table)} where ${kindFilter} ${dueCondition(now)} limit 1`.execute(db);
  return result.rows.length > 0;
}

/** The claim whose inner SELECT reads the rows under `rowLock`. */
function claimLocking(rowLock: RawBuilder<unknown>): OutboxClaim {
  return {
    async claimDue(db, claim) {
      const now = claim.now.toISOString();
      if (!(await anyDueRow(db, 'outbox', now, [claim.kind]))) return [];
      return claimDueOutboxRows(db, rowLock, {
        now,
        leaseUntil: new Date(claim.now.getTime() + claim.leaseMs).toISOString(),
        owner: claim.owner,
        limit: claim.limit,
        kinds: [claim.kind],
      });
    },
  };
}

/** SQLite: the write lock orders the claims; the read locks nothing itself. */
export function createSqliteOutboxClaim(): OutboxClaim {
  return claimLocking(sql``);
}

/** PostgreSQL: workers claiming at the same moment take disjoint rows. */
export function createPostgresOutboxClaim(): OutboxClaim {
  return claimLocking(sql`for update skip locked`);
}

async function claimDueOutboxRows(db: Executor | Db, rowLock: RawBuilder<unknown>, options: ClaimOutboxOptions): Promise<OutboxRow[]> {
  const { now, leaseUntil, owner, limit, kinds } = options;
  if (kinds.length === 0 || limit <= 0) return [];
  const kindFilter = sql`kind in (${sql.join(kinds.map((k) => sql`${k}`))}) and`;
  const due = dueCondition(now);
  const result = await sql<OutboxRow>`
    update outbox
       set state = 'sending', locked_by = ${owner}, locked_until = ${leaseUntil},
           attempts = attempts + 1, updated_at = ${now}
     where (team_id, id) in (
             select team_id, id from outbox
              where ${kindFilter} ${due}
              order by next_attempt_at
              limit ${limit}
              ${rowLock})
       and ${due}
    returning *`.execute(db);
  return result.rows;
}
