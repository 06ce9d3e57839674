/**
 * The Idempotency-Key records' portable SQL (write/idempotency.ts holds the rules; PostgreSQL's
 * one-statement claim is in postgres.ts). A key is claimed by the request that inserted it
 * (`state = pending`, `created_at` = its claim time); every later write is fenced by that claim
 * time, so a request whose claim lapsed changes nothing.
 */
import type { Executor } from '../../../db/database.js';
import { insertRows, preparedQuery, preparedStatement } from '../../../db/prepared-query.js';
import type { Selectable } from 'kysely';
import type { IdempotencyKeysTable } from '../../../db/types.js';

// The statements of every keyed create, compiled once (src/db/prepared-query.ts).
const deleteExpired = preparedStatement<'teamId' | 'now', never>((db, p) =>
  db.deleteFrom('idempotency_keys').where('team_id', '=', p('teamId')).where('expires_at', '<', p('now')),
);
const recordCommittedStatement = preparedStatement<'teamId' | 'key' | 'claimedAt' | 'body' | 'status', never>((db, p) =>
  db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: p('status'), response_body: p('body') })
    .where('team_id', '=', p('teamId'))
    .where('idem_key', '=', p('key'))
    .where('state', '=', 'pending')
    .where('created_at', '=', p('claimedAt')),
);
const releaseClaimStatement = preparedStatement<'teamId' | 'key' | 'claimedAt', never>((db, p) =>
  db
    .deleteFrom('idempotency_keys')
    .where('team_id', '=', p('teamId'))
    .where('idem_key', '=', p('key'))
    .where('state', '=', 'pending')
    .where('created_at', '=', p('claimedAt')),
);
const recordFinalStatement = preparedStatement<'teamId' | 'key' | 'claimedAt' | 'body' | 'status', never>((db, p) =>
  db
    .updateTable('idempotency_keys')
    .set({ response_status: p('status'), response_body: p('body') })
    .where('team_id', '=', p('teamId'))
    .where('idem_key', '=', p('key'))
    .where('state', '=', 'done')
    .where('created_at', '=', p('claimedAt')),
);

export async function deleteExpiredKeys(db: Executor, teamId: string, now: string): Promise<void> {
  await deleteExpired(db, { teamId, now });
}

/** Throws a unique violation when the key exists. */
export async function insertClaim(db: Executor, teamId: string, key: string, hash: string, claimedAt: string, expiresAt: string): Promise<void> {
  await insertRows(db, 'idempotency_keys', [
    {
      team_id: teamId,
      idem_key: key,
      request_hash: hash,
      state: 'pending',
      response_status: null,
      response_body: null,
      created_at: claimedAt,
      expires_at: expiresAt,
    },
  ]);
}

const findKeyStatement = preparedQuery<'teamId' | 'key', Selectable<IdempotencyKeysTable>>((db, p) =>
  db.selectFrom('idempotency_keys').selectAll().where('team_id', '=', p('teamId')).where('idem_key', '=', p('key')),
);

export async function findKey(db: Executor, teamId: string, key: string): Promise<Selectable<IdempotencyKeysTable> | undefined> {
  return (await findKeyStatement(db, { teamId, key }))[0];
}

/** A lapsed pending claim (created at `lapsedAt`) taken over by this request; false when another took it. */
export async function takeOverLapsedClaim(
  db: Executor,
  teamId: string,
  key: string,
  lapsedAt: string,
  claim: { hash: string; claimedAt: string; expiresAt: string },
): Promise<boolean> {
  const taken = await db
    .updateTable('idempotency_keys')
    .set({ request_hash: claim.hash, created_at: claim.claimedAt, expires_at: claim.expiresAt })
    .where('team_id', '=', teamId)
    .where('idem_key', '=', key)
    .where('state', '=', 'pending')
    .where('created_at', '=', lapsedAt)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/**
 * Inside the write's transaction: the response as committed, with its status when it is already
 * final (null while an e-mail attempt follows). False when the claim is no longer ours.
 */
export async function recordCommitted(
  db: Executor,
  teamId: string,
  key: string,
  claimedAt: string,
  body: string,
  status: number | null = null,
): Promise<boolean> {
  const recorded = await recordCommittedStatement(db, { teamId, key, claimedAt, body, status });
  return Number(recorded.numAffectedRows ?? 0) === 1;
}

/** Nothing was stored: the key is released (if still ours) so a corrected retry can run. */
export async function releaseClaim(db: Executor, teamId: string, key: string, claimedAt: string): Promise<void> {
  await releaseClaimStatement(db, { teamId, key, claimedAt });
}

/** The final answer (after the delivery attempt) replaces the committed one. */
export async function recordFinal(db: Executor, teamId: string, key: string, claimedAt: string, status: number, body: string): Promise<void> {
  await recordFinalStatement(db, { teamId, key, claimedAt, body, status });
}
