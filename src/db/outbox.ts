/**
 * SQL of the outbox, shared by its kinds (e-mail, EDO sends). Every statement is scoped by
 * team; recording an attempt's result is fenced by the lease owner, so a claimer whose lease
 * lapsed cannot overwrite the row.
 */
import { sql, type UpdateObject } from 'kysely';
import type { Executor } from './database.js';
import { anyDueRow, createPostgresOutboxClaim, createSqliteOutboxClaim } from './outbox-claim.js';
import { insertRows } from './prepared-query.js';
import { extended } from '../shared/objects.js';
import type { Database, OutboxRow, OutboxTable } from './types.js';

/**
 * One statement for all `rows` (a write's e-mails, an EDO send), compiled once per row count
 * (`insertRows`): its parameters are read from the rows by position, not through an object of
 * `column:row` keys built per call (that binding was 79 µs of self time per e-mailed create).
 */
export async function insertOutboxRows(db: Executor, rows: OutboxTable[]): Promise<void> {
  await insertRows(db, 'outbox', rows);
}

/** A document revision's rows of one kind. */
export async function listRevisionRows(
  db: Executor,
  teamId: string,
  publicId: string,
  revision: number,
  kind: OutboxRow['kind'],
): Promise<OutboxRow[]> {
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('revision', '=', revision)
    .where('kind', '=', kind)
    .orderBy('position')
    .execute();
}

/** The rows `owner` still holds a lease on, among `ids`. */
export async function listLeasedRows(db: Executor, teamId: string, ids: readonly string[], owner: string): Promise<OutboxRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', 'in', [...ids])
    .where('state', '=', 'sending')
    .where('locked_by', '=', owner)
    .orderBy('position')
    .execute();
}

/** Whether any row of `kinds` is due (a read, so idle polling takes no write lock). */
export function anyDue(db: Executor, now: string, kinds: readonly OutboxRow['kind'][]): Promise<boolean> {
  return anyDueRow(db, 'outbox', now, kinds);
}

const claims = { sqlite: createSqliteOutboxClaim(), postgres: createPostgresOutboxClaim() };

/**
 * `OutboxClaim.claimDue` (outbox-claim.ts) on the claim of `dialect`: for a worker not yet given
 * its claim by the composition root (src/stores.ts `outbox`); it goes when none is left.
 */
export async function claimDue(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  claim: { kind: OutboxRow['kind']; owner: string; limit: number; now: Date; leaseMs: number },
): Promise<OutboxRow[]> {
  return claims[dialect].claimDue(db, claim);
}

export interface Fence {
  teamId: string;
  id: string;
  owner: string;
}

/** An update of a row `fence.owner` still holds a lease on; false when it no longer does. */
async function updateLeased(db: Executor, fence: Fence, values: UpdateObject<Database, 'outbox'>): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set(values)
    .where('team_id', '=', fence.teamId)
    .where('id', '=', fence.id)
    .where('state', '=', 'sending')
    .where('locked_by', '=', fence.owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

function finishAttempt(
  db: Executor,
  fence: Fence,
  values: Partial<Pick<OutboxTable, 'state' | 'next_attempt_at' | 'last_error' | 'last_error_code' | 'sent_at' | 'updated_at'>>,
): Promise<boolean> {
  return updateLeased(db, fence, extended(values, { locked_by: null, locked_until: null }));
}

/** Extends `owner`'s lease; false when the row is no longer its to send. */
export function renewLease(db: Executor, fence: Fence, now: string, leaseUntil: string): Promise<boolean> {
  return updateLeased(db, fence, { locked_until: leaseUntil, updated_at: now });
}

export function markSent(db: Executor, fence: Fence, now: string): Promise<boolean> {
  return finishAttempt(db, fence, { state: 'sent', sent_at: now, updated_at: now, last_error: null, last_error_code: null });
}

export function markRetry(db: Executor, fence: Fence, now: string, nextAttemptAt: string, error: string, code: string): Promise<boolean> {
  return finishAttempt(db, fence, { state: 'pending', next_attempt_at: nextAttemptAt, last_error: error, last_error_code: code, updated_at: now });
}

/**
 * The attempt could not run for want of capacity (every PDF renderer busy): due again at
 * `nextAttemptAt`, and the claim's count of attempts is given back, so a busy renderer never
 * uses up a row's attempts. The last error stays that of the last real attempt.
 */
export function markPostponed(db: Executor, fence: Fence, now: string, nextAttemptAt: string): Promise<boolean> {
  return updateLeased(db, fence, { state: 'pending', next_attempt_at: nextAttemptAt, attempts: sql<number>`attempts - 1`, updated_at: now, locked_by: null, locked_until: null });
}

export function markFailed(db: Executor, fence: Fence, now: string, error: string, code: string): Promise<boolean> {
  return finishAttempt(db, fence, { state: 'failed', last_error: error, last_error_code: code, updated_at: now });
}

/** The claimed row is not to be sent any more: a later revision replaced it. */
export function markSuperseded(db: Executor, fence: Fence, now: string): Promise<boolean> {
  return finishAttempt(db, fence, { state: 'superseded', updated_at: now });
}

/** The states an outbox row ends in: never attempted again. */
const FINISHED_STATES = ['sent', 'failed', 'blocked', 'superseded'] as const;

/**
 * Retention: deletes up to `batch` rows of `kind` that finished (sent, failed, blocked or
 * superseded) and last moved before `before`; how many went. Found through the due index
 * (`state`, `next_attempt_at`: a row's last scheduled attempt, never after its last change).
 */
export async function pruneFinishedRows(db: Executor, kind: OutboxRow['kind'], before: string, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('team_id', 'id'),
        'in',
        selectFrom('outbox')
          .select(['team_id', 'id'])
          .where('state', 'in', [...FINISHED_STATES])
          .where('next_attempt_at', '<', before)
          .where('updated_at', '<', before)
          .where('kind', '=', kind)
          .limit(batch)
          .$asTuple('team_id', 'id'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
