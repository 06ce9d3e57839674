/**
 * Sending a claimed EDO job (docs/edo.md): one attempt through the operator port, idempotent
 * by job id, the document's current PDF attached; failures rescheduled with exponential backoff
 * or recorded as failed, each result fenced by the lease owner.
 */
import * as outbox from '../../db/outbox.js';
import type { OutboxRow } from '../../db/types.js';
import { postponementMs, retryDelayMs, yieldToIo } from '../../shared/background-work.js';
import { BusyError } from '../../shared/busy-error.js';
import { isoNow } from '../../shared/clock.js';
import { EdoOperatorError, type EdoOutgoingDocument } from './edo-operator.js';
import { advanceJob, applyStatus } from './edo-jobs.js';
import { recordEdoStatusChange } from './edo-events.js';
import * as repo from './edo.repository.js';
import type { Db } from '../../db/database.js';
import type { WorkLogger } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import type { EdoOperator } from './edo-operator.js';
import type { EdoPolicy } from './edo-policy.js';
import type { EdoDocumentPort } from './edo-jobs.js';

/** The document's printable file now, with its revision; null when the document is gone. */
export type EdoFileProvider = (document: {
  teamId: string;
  publicId: string;
  jobId: string;
}) => Promise<{ revision: number; file: EdoOutgoingDocument['file'] } | null>;

/** What sending and the feed share with the service. */
export interface EdoWorkDeps {
  db: Db;
  clock: Clock;
  operator: EdoOperator;
  documents: EdoDocumentPort;
  policy: EdoPolicy;
  logger: WorkLogger;
}

/** A send's outbox payload: who sends what to whom (the file is attached at the attempt). */
export interface SendPayload {
  v: 1;
  sender: string;
  recipient: string;
  document: EdoOutgoingDocument['document'];
}

export class EdoSender {
  constructor(
    private readonly deps: EdoWorkDeps,
    /** The document's file of each send (its PDF: src/document-files.ts); null: none. */
    private readonly files: EdoFileProvider | null,
  ) {}

  /**
   * One attempt of one claimed send, recorded fenced by `owner`. Returns the job's new state,
   * or null when the lease was lost meanwhile.
   */
  async attempt(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | 'superseded' | null> {
    const fence = { teamId: row.team_id, id: row.id, owner };
    const renewedAt = this.deps.clock.now();
    const leaseUntil = new Date(renewedAt.getTime() + this.deps.policy.leaseMs).toISOString();
    if (!(await outbox.renewLease(this.deps.db, fence, renewedAt.toISOString(), leaseUntil))) return null;
    if (row.attempts > row.max_attempts) {
      // A claim that lapsed during the last attempt (its process died): give up, visibly.
      const error = new EdoOperatorError(row.last_error ?? 'the last send attempt was interrupted', 'operator_unreachable', true);
      return this.recordFailure(row, fence, error, true);
    }
    let receipt;
    try {
      // The PDF is CPU work in this process: let the node's requests through before and after it.
      await yieldToIo();
      const document = await this.documentFor(row);
      await yieldToIo();
      if (document === 'superseded') return this.recordSuperseded(row, fence);
      receipt = await this.deps.operator.send(document, signal);
    } catch (err) {
      if (err instanceof BusyError) return this.postpone(row, fence, err);
      const failure =
        err instanceof EdoOperatorError
          ? err
          : new EdoOperatorError(`could not send: ${(err as Error).message ?? String(err)}`, 'operator_unreachable', false);
      const final = failure.permanent || row.attempts >= row.max_attempts;
      this.deps.logger.warn(
        { public_id: row.public_id, revision: row.revision, job_id: row.id, attempts: row.attempts, code: failure.code, final },
        `EDO send failed: ${failure.message}`,
      );
      return this.recordFailure(row, fence, failure, final);
    }
    const now = isoNow(this.deps.clock);
    const recorded = await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.documents.lock(trx, row.team_id, row.public_id);
      if (!(await outbox.markSent(trx, fence, now))) return false;
      // The operator that actually took it (every node should share one EDO configuration).
      const operator = this.deps.operator.kind;
      await advanceJob(trx, this.deps.documents, row.team_id, row.id, 'sent', now, {
        operator_document_id: receipt.operatorDocumentId,
        sent_at: now,
        operator,
      });
      return true;
    });
    if (!recorded) return null;
    const operatorDocumentId = receipt.operatorDocumentId;
    if (receipt.status === 'delivered') {
      await applyStatus(this.deps.db, this.deps.documents, { teamId: row.team_id, jobId: row.id, status: 'delivered', at: now, reason: null, operatorDocumentId, now });
    }
    this.deps.logger.info(
      { public_id: row.public_id, revision: row.revision, job_id: row.id, operator_document_id: operatorDocumentId },
      'EDO document sent',
    );
    return 'sent';
  }

  private async documentFor(row: OutboxRow): Promise<EdoOutgoingDocument | 'superseded'> {
    const payload = JSON.parse(row.payload) as SendPayload;
    if (!this.files) throw new EdoOperatorError('no document file source is configured', 'operator_unreachable', false);
    let current;
    try {
      current = await this.files({ teamId: row.team_id, publicId: row.public_id, jobId: row.id });
    } catch (err) {
      if (err instanceof BusyError) throw err;
      throw new EdoOperatorError(`could not prepare the document file: ${(err as Error).message}`, 'document_unavailable', false);
    }
    if (!current) throw new EdoOperatorError('the document no longer exists', 'document_unavailable', true);
    if (current.revision !== row.revision) {
      // A later revision was saved. It either queued its own job (this one is superseded) or
      // changed nothing that is sent (seller_status only): then this job sends the same content.
      const newer = (await repo.listDocumentJobs(this.deps.db, row.team_id, row.public_id)).some(
        (j) => j.revision > row.revision && j.status !== 'superseded',
      );
      if (newer) return 'superseded';
    }
    return { jobId: row.id, sender: payload.sender, recipient: payload.recipient, document: payload.document, file: current.file };
  }

  private async recordFailure(
    row: OutboxRow,
    fence: outbox.Fence,
    failure: EdoOperatorError,
    final: boolean,
  ): Promise<'pending' | 'failed' | null> {
    const now = this.deps.clock.now();
    const nowIso = now.toISOString();
    if (final) {
      const recorded = await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.documents.lock(trx, row.team_id, row.public_id);
        if (!(await outbox.markFailed(trx, fence, nowIso, failure.message, failure.code))) return false;
        const job = await repo.findJob(trx, row.team_id, row.id);
        if (await repo.updateJobIf(trx, row.team_id, row.id, 'queued', { status: 'failed', failed_at: nowIso, updated_at: nowIso })) {
          if (job) await recordEdoStatusChange(trx, this.deps.documents, job, 'failed', {}, nowIso);
        }
        return true;
      });
      return recorded ? 'failed' : null;
    }
    const delay = Math.max(retryDelayMs(row.attempts, this.deps.policy), failure.retryAfterMs ?? 0);
    const next = new Date(now.getTime() + delay).toISOString();
    return (await outbox.markRetry(this.deps.db, fence, nowIso, next, failure.message, failure.code)) ? 'pending' : null;
  }

  /**
   * The file could not be rendered now (every PDF renderer busy): nothing was sent and the send
   * is due again after the renderer's wait, its attempt not counted.
   */
  private async postpone(row: OutboxRow, fence: outbox.Fence, busy: BusyError): Promise<'pending' | null> {
    const now = this.deps.clock.now();
    const next = new Date(now.getTime() + postponementMs(busy)).toISOString();
    this.deps.logger.info({ public_id: row.public_id, revision: row.revision, job_id: row.id, next_attempt_at: next }, `EDO send postponed: ${busy.message}`);
    return (await outbox.markPostponed(this.deps.db, fence, now.toISOString(), next)) ? 'pending' : null;
  }

  private async recordSuperseded(row: OutboxRow, fence: outbox.Fence): Promise<'superseded' | null> {
    const now = isoNow(this.deps.clock);
    return this.deps.db.transaction().execute(async (trx) => {
      if (!(await outbox.markSuperseded(trx, fence, now))) return null;
      await repo.updateJobIf(trx, row.team_id, row.id, 'queued', { status: 'superseded', updated_at: now });
      return 'superseded' as const;
    });
  }
}
