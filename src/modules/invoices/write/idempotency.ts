/**
 * Idempotency-Key on POST: the first request with a key claims it (a `pending` row); its
 * response is recorded in the same transaction as the document, so a retry either replays
 * exactly that response or, while the first is still running, is told to wait. A key reused
 * with another body within 24 hours is refused.
 *
 * A claim is owned by its `created_at`. A `pending` claim older than the lease belongs to a
 * request that died (crash, restart): since the document and the `done` record commit together,
 * nothing was stored, so a retry takes the claim over, as after any failed attempt. The owner
 * records and releases only its own claim, so a slow first request that lost its claim rolls
 * back instead of creating a second document.
 *
 * When the write asks for no e-mail, its answer is known at commit: the record written with the
 * document is `done` with its `response_status`, and that is all (one write less per create).
 * Otherwise the record written with the document is `done` without a `response_status`: the
 * document is stored but the request is still making its bounded e-mail attempt, so its answer
 * is not known yet. A retry then is told to wait (409 `idempotency_request_in_progress`, Retry-After 1) and,
 * once the first request records its final answer, replays exactly that. If the first request
 * died in between, after `deliveryLeaseMs` (when the outbox worker takes its e-mails over) a retry
 * gets the answer as committed, its status following its notifications.
 *
 * SQLite: the claim is made in the document's own group-commit write (the `claim` hook `work`
 * runs first in it), not in a batch of its own before it: one batch and one COMMIT per keyed
 * create instead of two. The claim and the document then commit or roll back together, so a
 * claim is never seen `pending`: a concurrent request with the same key is told the answer
 * (found before its write, or by its own claim failing inside its write, after the first one's
 * write in the same or an earlier batch). A failed write leaves no claim to release.
 * PostgreSQL keeps the claim as a statement of its own before the document's transaction (a
 * uniqueness conflict inside that transaction would wait for the other one and abort this one):
 * one statement that sweeps the team's expired keys and inserts the claim, or replaces an expired
 * record of the key (`claimKey`).
 */
import type { Transaction } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { isUniqueViolation } from '../../../db/errors.js';
import type { Database } from '../../../db/types.js';
import { ApiError } from '../../../shared/errors.js';
import type { Clock } from '../../../shared/clock.js';
import type { InvoiceWriteResponse } from '../invoice.schemas.js';
import type { WriteOutcome } from '../model/invoice.model.js';
import type { IdempotencyKeyRow, IdempotencyKeys, InvoiceStore } from '../store/index.js';

const TTL_MS = 24 * 60 * 60 * 1000;
/** Far longer than any create takes; a claim this old has no live owner. */
export const PENDING_LEASE_MS = 5 * 60 * 1000;

export interface IdempotencyOptions {
  /** How long a committed request may take to record its final answer (its e-mail attempt). */
  deliveryLeaseMs?: number;
}

/** Thrown from the claim inside the document's write when the key already has an answer: the write is rolled back, the answer returned. */
class KeyAnswered extends Error {
  constructor(readonly outcome: WriteOutcome) {
    super('the Idempotency-Key already has an answer');
  }
}

/** The claim, made inside the document's own write (SQLite, see the top). */
export type ClaimInWrite = (trx: Transaction<Database>) => Promise<void>;

export class IdempotencyStore {
  private readonly deliveryLeaseMs: number;
  private readonly keys: IdempotencyKeys;

  /**
   * The release and the final answer are small durable writes of their own, through the store's
   * `transaction` (on SQLite they join the document writes' group commit instead of each paying
   * an fsync of its own).
   */
  constructor(
    private readonly store: InvoiceStore,
    private readonly clock: Clock,
    options: IdempotencyOptions = {},
  ) {
    this.deliveryLeaseMs = options.deliveryLeaseMs ?? PENDING_LEASE_MS;
    this.keys = store.keys;
  }

  async run(
    teamId: string,
    key: string,
    hash: string,
    work: (
      onCommit: (trx: Transaction<Database>, outcome: WriteOutcome, final: boolean) => Promise<void>,
      claim?: ClaimInWrite,
    ) => Promise<WriteOutcome>,
  ): Promise<WriteOutcome> {
    const now = this.clock.now();
    const claimedAt = now.toISOString();
    const expiresAt = new Date(now.getTime() + TTL_MS).toISOString();
    const db = this.store.db;
    let claimInWrite: ClaimInWrite | undefined;
    const alone = await this.keys.claimAlone(teamId, key, hash, claimedAt, expiresAt);
    if (alone === null) {
      // A key already answered (or in use) is told without a write; otherwise the claim rides in the document's write.
      const row = await this.keys.findKey(db, teamId, key);
      const answer = row && row.expires_at >= claimedAt ? await this.answerFor(db, row, hash, now) : null;
      if (answer !== null && answer !== 'claimed') return answer;
      if (answer === null) {
        claimInWrite = async (trx) => {
          await this.keys.deleteExpiredKeys(trx, teamId, claimedAt);
          try {
            await this.keys.insertClaim(trx, teamId, key, hash, claimedAt, expiresAt);
          } catch (err) {
            if (!isUniqueViolation(err)) throw err;
            // Claimed meanwhile by a write before this one (committed, or earlier in this batch).
            const taken = await this.answerFor(trx, await this.keys.findKey(trx, teamId, key), hash, now);
            if (taken !== 'claimed') throw new KeyAnswered(taken);
          }
        };
      }
    } else if (!alone) {
      // Another request's key: its answer, or a lapsed claim this request takes over.
      const answer = await this.answerFor(db, await this.keys.findKey(db, teamId, key), hash, now);
      if (answer !== 'claimed') return answer;
    }
    let outcome: WriteOutcome;
    /** The answer recorded as final with the document (no e-mail attempt after the commit). */
    let recordedFinal: WriteOutcome | null = null;
    try {
      outcome = await work(async (trx, outcome, final) => {
        const status = final ? outcome.status : null;
        // The claim lapsed and a retry took it over: roll this document back, the retry stands.
        if (!(await this.keys.recordCommitted(trx, teamId, key, claimedAt, JSON.stringify(outcome.body), status))) throw inProgress();
        recordedFinal = final ? outcome : null;
      }, claimInWrite);
    } catch (err) {
      if (err instanceof KeyAnswered) return err.outcome;
      // Nothing was stored: release the key (if still ours) so a corrected retry can run. A claim
      // made in the write went with its rollback (or was never made: the error came before it).
      if (claimInWrite === undefined) await this.store.transaction((trx) => this.keys.releaseClaim(trx, teamId, key, claimedAt));
      throw err;
    }
    // Recorded final with the document: nothing more to write.
    if (outcome === recordedFinal) return outcome;
    // The transaction recorded the response as committed (e-mails not yet attempted, no status);
    // the final one, after the bounded delivery attempt, replaces it so replays match the first answer.
    await this.store.transaction((trx) => this.keys.recordFinal(trx, teamId, key, claimedAt, outcome.status, JSON.stringify(outcome.body)));
    return outcome;
  }

  /**
   * What a request with `hash` gets for the key's `row` (another request's): its replay, or
   * 'claimed' when the row was a lapsed claim this request took over; throws while it is in use,
   * or for another body.
   */
  private async answerFor(db: Executor, row: IdempotencyKeyRow | undefined, hash: string, now: Date): Promise<WriteOutcome | 'claimed'> {
    if (!row) throw inProgress();
    const nowIso = now.toISOString();
    if (row.state === 'pending' && row.created_at < new Date(now.getTime() - PENDING_LEASE_MS).toISOString()) {
      const expiresAt = new Date(now.getTime() + TTL_MS).toISOString();
      if (await this.keys.takeOverLapsedClaim(db, row.team_id, row.idem_key, row.created_at, { hash, claimedAt: nowIso, expiresAt })) return 'claimed';
      throw inProgress();
    }
    if (row.request_hash !== hash) {
      throw new ApiError('idempotency_key_reused', {
        details: 'this Idempotency-Key was used within 24 hours with a different request body',
      });
    }
    if (row.state !== 'done' || row.response_body === null) throw inProgress();
    const body = JSON.parse(row.response_body) as InvoiceWriteResponse;
    if (row.response_status === null) {
      // Stored, but the first request is still attempting its e-mails: wait for its answer.
      if (row.created_at >= new Date(now.getTime() - this.deliveryLeaseMs).toISOString()) throw inProgress();
      const n = body.notifications;
      return { status: n.sent_count < n.planned_count ? 207 : 200, body, etag: body.api.etag, replayed: true };
    }
    return { status: row.response_status === 207 ? 207 : 200, body, etag: body.api.etag, replayed: true };
  }
}

function inProgress(): ApiError {
  return new ApiError(
    'idempotency_request_in_progress',
    { details: 'a request with this Idempotency-Key is still being processed; retry in a moment' },
    { 'retry-after': '1' },
  );
}
