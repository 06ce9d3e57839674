/**
 * EDO synchronization of documents (spec 1.7, docs/edo.md), through the outbox (CONVENTIONS
 * rule 11):
 *
 * 1. `planSync(trx, request)` inside the document's transaction: when the document carries
 *    `buyer_edo_id` and is issued (or paid), and what would be sent differs from the last job,
 *    one job: an `edo_jobs` row and an outbox row of kind `edo_send` with the same id.
 * 2. `EdoWorker` claims due sends with a lease, attempts each once through the operator port
 *    (idempotent by job id), and reschedules failures with exponential backoff.
 * 3. `pollFeed` reads the operator's change feed under a lease: delivery, acceptance, rejection
 *    and incoming links, applied idempotently; the cursor advances only after a page is applied.
 */
import type { Db, DatabaseHandle, Executor } from '../../db/database.js';
import { writeEachAlone } from '../../db/write-each.js';
import * as outbox from '../../db/outbox.js';
import type { EdoJobRow, OutboxRow } from '../../db/types.js';
import { postponementMs, retryDelayMs, SetAsideRecords, yieldToIo, type WorkLogger } from '../../shared/background-work.js';
import { BusyError } from '../../shared/busy-error.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { sortableToken } from '../../shared/tokens.js';
import { EdoOperatorError, type EdoEvent, type EdoOperator, type EdoOutgoingDocument } from './edo-operator.js';
import { resolveEdoPolicy, type EdoPolicy } from './edo-policy.js';
import { advanceJob, applyStatus, toEdoSync, type EdoDocumentPort } from './edo-jobs.js';
import type { EdoSync } from './edo.schemas.js';
import * as repo from './edo.repository.js';
import type { EdoSyncRequest, RecordedSend, RecordedSendRef } from './edo-request.js';
import { recordEdoStatusChange } from './edo-events.js';

/** The document's printable file now, with its revision; null when the document is gone. */
export type EdoFileProvider = (document: {
  teamId: string;
  publicId: string;
  jobId: string;
}) => Promise<{ revision: number; file: EdoOutgoingDocument['file'] } | null>;

/** What the EDO module stores per database (src/stores.ts builds it): claiming its due sends. */
export interface EdoStores {
  /** The outbox's claim of the database in use. */
  claimOutbox: (claim: Parameters<typeof outbox.claimDue>[2]) => Promise<OutboxRow[]>;
}

export interface EdoServiceDeps {
  database: Pick<DatabaseHandle, 'db'>;
  stores: EdoStores;
  clock: Clock;
  operator: EdoOperator;
  /** buyer_status → `sent` when the operator delivered (the invoices module's port). */
  /** The invoices module's writes of delivery news (`documentStatusPort`). */
  documents: EdoDocumentPort;
  policy?: Partial<EdoPolicy>;
  files?: EdoFileProvider;
  logger?: WorkLogger;
}

/** A job written by planSync. */
export interface PlannedSync {
  /** The job to send; null when it was recorded as failed at once (no seller participant id). */
  jobId: string | null;
  /** Its `metadata.edo` as written (no attempt, no links yet). */
  state: EdoSync;
}

/** A send's rows, built before they are written (`writeSend`). */
export interface NewSend {
  outboxRow: OutboxRow;
  job: EdoJobRow;
  planned: PlannedSync;
}

/** A first revision's send (`prepareFirstSync`). */
export interface FirstSync {
  planned: PlannedSync;
  /**
   * The rows to write with the document: a send refused at once (no seller participant id,
   * recorded as failed). Null for a send to make: its create records `planned.jobId` in the
   * document's row, and the worker writes the rows (`writeRecordedSends`).
   */
  send: NewSend | null;
}

/** What a send's rows and state are built from, besides its content. */
export interface SendIds {
  teamId: string;
  publicId: string;
  revision: number;
  sellerEdoId: string | null;
  buyerEdoId: string;
  jobId: string;
  queuedAt: string;
}

function sendOf(request: EdoSyncRequest, jobId: string, queuedAt: string): SendIds {
  const { teamId, publicId, revision, sellerEdoId } = request;
  return { teamId, publicId, revision, sellerEdoId, buyerEdoId: request.buyerEdoId as string, jobId, queuedAt };
}

/** Rows built for their state alone (`sendRows`), never written. */
const NO_CONTENT = Object.freeze({ payload: '', contentHash: '' });

interface SendPayload {
  v: 1;
  sender: string;
  recipient: string;
  document: EdoOutgoingDocument['document'];
}

/** Sync runs for documents that are out to the buyer: drafts wait, cancelled ones stop it. */
const SYNCED_SELLER_STATUSES = new Set(['issued', 'paid']);

const LINKS_SHOWN = 100;

const noopLogger: WorkLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export class EdoService {
  readonly policy: EdoPolicy;
  private readonly db: Db;
  private readonly logger: WorkLogger;
  private files: EdoFileProvider | undefined;
  private readonly queuedListeners: (() => void)[] = [];
  /** Recorded sends this process could not write, left out of its batches for a while. */
  private readonly setAside = new SetAsideRecords();

  constructor(private readonly deps: EdoServiceDeps) {
    this.policy = resolveEdoPolicy(deps.policy);
    this.db = deps.database.db;
    this.logger = deps.logger ?? noopLogger;
    this.files = deps.files;
  }

  get operator(): EdoOperator {
    return this.deps.operator;
  }

  /**
   * Sets the file source after construction: the PDF comes from the pages module, which is
   * built on top of the documents service that in turn needs this one.
   */
  useFiles(provider: EdoFileProvider): void {
    this.files = provider;
  }

  /** Calls `listener` whenever a job was queued and committed (the worker sends it at once). */
  onQueued(listener: () => void): void {
    this.queuedListeners.push(listener);
  }

  /** After the commit of a transaction whose planSync queued a job. */
  notifyQueued(): void {
    for (const listener of this.queuedListeners) listener();
  }

  /**
   * Inside the document's transaction, after the document row is written. Returns the id of the
   * job queued, or null when nothing is to be sent.
   */
  async planSync(trx: Executor, request: EdoSyncRequest): Promise<PlannedSync | null> {
    const now = isoNow(this.deps.clock);
    const { teamId, publicId } = request;
    const buyer = request.buyerEdoId;
    const wanted = buyer !== null && SYNCED_SELLER_STATUSES.has(request.sellerStatus);
    // A new document has no earlier job: nothing to supersede, nothing to compare with.
    if (!wanted && request.revision === 1) return null;
    if (!buyer || !wanted) {
      // Nothing to send any more: sends still waiting are dropped (a send under way finishes).
      await repo.supersedeWaitingJobs(trx, teamId, publicId, now);
      return null;
    }
    if (request.revision > 1) {
      const latest = (await repo.listDocumentJobs(trx, teamId, publicId)).find((j) => j.status !== 'superseded');
      if (latest && latest.content_hash === request.contentHash && latest.status !== 'failed') return null;
      await repo.supersedeWaitingJobs(trx, teamId, publicId, now);
    }

    return this.writeSend(trx, this.newSend(request, now));
  }

  /**
   * For a document's first revision, before its transaction: the send `planSync` would write
   * (built without the database: a first revision has no earlier job), queued at `now` (the
   * document's `created_at`), or null when there is none. A send to make comes without rows:
   * its create records `planned.jobId` in the document's row, for `writeRecordedSends` or the
   * next update (`writeRecordedSend`) to write; a send refused at once (no seller participant
   * id) comes with the rows to write with the document (`writeSend`).
   */
  prepareFirstSync(request: EdoSyncRequest, now: string): FirstSync | null {
    if (request.revision !== 1) throw new Error('prepareFirstSync is for a first revision');
    const wanted = request.buyerEdoId !== null && SYNCED_SELLER_STATUSES.has(request.sellerStatus);
    if (!wanted) return null;
    if (!request.sellerEdoId) {
      const send = this.newSend(request, now);
      return { planned: send.planned, send };
    }
    // Recorded: neither the payload nor the content hash is needed before the worker writes it.
    return { planned: this.sendRows(sendOf(request, sortableToken(), now), NO_CONTENT).planned, send: null };
  }

  /**
   * `metadata.edo` of a document whose send is recorded, not written yet: the state its job is
   * written with (`writeRecordedSends`), from the document row's columns alone.
   */
  recordedState(send: SendIds): EdoSync {
    return this.sendRows(send, NO_CONTENT).planned.state;
  }

  /**
   * Inside the transaction of a document's update, before `planSync`: the send its create
   * recorded, written as its job and outbox row (as the worker would have), so that the update
   * compares with it and supersedes it like any job. Nothing when the worker wrote it already.
   */
  async writeRecordedSend(trx: Executor, ref: RecordedSendRef): Promise<boolean> {
    const recorded = await this.deps.documents.takeRecordedSend(trx, ref);
    if (!recorded) return false;
    await this.writeSend(trx, this.newSend(recorded.request, recorded.queuedAt, recorded.jobId));
    return true;
  }

  /**
   * The worker: writes up to `limit` recorded sends (their jobs and outbox rows, in one
   * transaction, each document's record cleared in it), so that `claimDue` finds them. Returns
   * how many it wrote. Each is written once: a record is taken by a conditional update, so
   * another worker or an update that took it first leaves nothing to write. A record that
   * cannot be written is undone alone, logged, and set aside (`SetAsideRecords`).
   */
  async writeRecordedSends(limit: number): Promise<number> {
    const now = this.deps.clock.now().getTime();
    const key = (ref: RecordedSendRef) => `${ref.teamId}\u0000${ref.publicId}`;
    const found = await this.deps.documents.recordedSends(this.db, limit + this.setAside.count(now));
    const refs = found.filter((ref) => !this.setAside.has(key(ref), now)).slice(0, limit);
    return writeEachAlone(this.db, refs, (trx, ref) => this.writeRecordedSend(trx, ref), (ref, err) => {
      this.setAside.add(key(ref), now);
      this.logger.error({ err, team_id: ref.teamId, public_id: ref.publicId, job_id: ref.jobId }, 'recorded EDO send could not be written; set aside for 10 minutes');
    });
  }

  /** Inside the document's transaction: writes the send's outbox row and job. */
  async writeSend(trx: Executor, send: NewSend): Promise<PlannedSync> {
    await outbox.insertOutboxRows(trx, [send.outboxRow]);
    await repo.insertJob(trx, send.job);
    return send.planned;
  }

  /** The rows of a send of `request` to its buyer, queued at `now` (pure but for a new job id). */
  private newSend(request: EdoSyncRequest, now: string, jobId: string = sortableToken()): NewSend {
    const payload: SendPayload = { v: 1, sender: request.sellerEdoId ?? '', recipient: request.buyerEdoId as string, document: request.document };
    return this.sendRows(sendOf(request, jobId, now), { payload: JSON.stringify(payload), contentHash: request.contentHash });
  }

  /**
   * The rows of `send` with `content` (the outbox payload and the job's content hash). Their
   * state (`planned`) does not depend on the content: built with NO_CONTENT, the rows serve for
   * it alone and are never written.
   */
  private sendRows(send: SendIds, content: { payload: string; contentHash: string }): NewSend {
    const { teamId, publicId, jobId, queuedAt: now } = send;
    const buyer = send.buyerEdoId;
    const seller = send.sellerEdoId;
    const refused = seller ? null : { code: 'seller_edo_id_missing', error: 'the seller organization has no EDO participant id (edo_id)' };
    const outboxRow: OutboxRow = {
      team_id: teamId,
      id: jobId,
      kind: 'edo_send',
      public_id: publicId,
      revision: send.revision,
      position: 0,
      recipient: buyer,
      idem_key: `edo:${publicId}:${send.revision}`,
      message_id: jobId,
      payload: content.payload,
      state: refused ? 'failed' : 'pending',
      attempts: 0,
      max_attempts: this.policy.maxAttempts,
      next_attempt_at: now,
      locked_by: null,
      locked_until: null,
      last_error: refused?.error ?? null,
      last_error_code: refused?.code ?? null,
      sent_at: null,
      created_at: now,
      updated_at: now,
    };
    const job: EdoJobRow = {
      team_id: teamId,
      job_id: jobId,
      public_id: publicId,
      revision: send.revision,
      operator: this.deps.operator.kind,
      seller_edo_id: seller,
      buyer_edo_id: buyer,
      content_hash: content.contentHash,
      status: refused ? 'failed' : 'queued',
      operator_document_id: null,
      rejection_reason: null,
      queued_at: now,
      sent_at: null,
      delivered_at: null,
      accepted_at: null,
      rejected_at: null,
      failed_at: refused ? now : null,
      updated_at: now,
    };
    return { outboxRow, job, planned: { jobId: refused ? null : jobId, state: toEdoSync(job, outboxRow, []) } };
  }

  /** `metadata.edo`: the newest job's state and the incoming links; null when sync never started. */
  async stateOf(db: Executor, teamId: string, publicId: string): Promise<EdoSync | null> {
    const current = await repo.findCurrentJob(db, teamId, publicId);
    if (!current) return null;
    const links = await repo.listLinks(db, teamId, publicId, LINKS_SHOWN);
    return toEdoSync(current.job, current.outbox, links);
  }

  // --- sending ------------------------------------------------------------------------------

  /** Claims up to `limit` due sends (retries due, leases lapsed) for `owner`. */
  async claimDue(owner: string, limit: number): Promise<OutboxRow[]> {
    const claim = { kind: 'edo_send' as const, owner, limit, now: this.deps.clock.now(), leaseMs: this.policy.leaseMs };
    return this.deps.stores.claimOutbox(claim);
  }

  /**
   * One attempt of one claimed send, recorded fenced by `owner`. Returns the job's new state,
   * or null when the lease was lost meanwhile.
   */
  async attempt(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | 'superseded' | null> {
    const fence = { teamId: row.team_id, id: row.id, owner };
    const renewedAt = this.deps.clock.now();
    const leaseUntil = new Date(renewedAt.getTime() + this.policy.leaseMs).toISOString();
    if (!(await outbox.renewLease(this.db, fence, renewedAt.toISOString(), leaseUntil))) return null;
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
      this.logger.warn(
        { public_id: row.public_id, revision: row.revision, job_id: row.id, attempts: row.attempts, code: failure.code, final },
        `EDO send failed: ${failure.message}`,
      );
      return this.recordFailure(row, fence, failure, final);
    }
    const now = isoNow(this.deps.clock);
    const recorded = await this.db.transaction().execute(async (trx) => {
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
      await applyStatus(this.db, this.deps.documents, { teamId: row.team_id, jobId: row.id, status: 'delivered', at: now, reason: null, operatorDocumentId, now });
    }
    this.logger.info(
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
      const newer = (await repo.listDocumentJobs(this.db, row.team_id, row.public_id)).some(
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
      const recorded = await this.db.transaction().execute(async (trx) => {
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
    const delay = Math.max(retryDelayMs(row.attempts, this.policy), failure.retryAfterMs ?? 0);
    const next = new Date(now.getTime() + delay).toISOString();
    return (await outbox.markRetry(this.db, fence, nowIso, next, failure.message, failure.code)) ? 'pending' : null;
  }

  /**
   * The file could not be rendered now (every PDF renderer busy): nothing was sent and the send
   * is due again after the renderer's wait, its attempt not counted.
   */
  private async postpone(row: OutboxRow, fence: outbox.Fence, busy: BusyError): Promise<'pending' | null> {
    const now = this.deps.clock.now();
    const next = new Date(now.getTime() + postponementMs(busy)).toISOString();
    this.logger.info({ public_id: row.public_id, revision: row.revision, job_id: row.id, next_attempt_at: next }, `EDO send postponed: ${busy.message}`);
    return (await outbox.markPostponed(this.db, fence, now.toISOString(), next)) ? 'pending' : null;
  }

  private async recordSuperseded(row: OutboxRow, fence: outbox.Fence): Promise<'superseded' | null> {
    const now = isoNow(this.deps.clock);
    return this.db.transaction().execute(async (trx) => {
      if (!(await outbox.markSuperseded(trx, fence, now))) return null;
      await repo.updateJobIf(trx, row.team_id, row.id, 'queued', { status: 'superseded', updated_at: now });
      return 'superseded' as const;
    });
  }

  // --- the change feed ----------------------------------------------------------------------

  /**
   * Reads the operator's change feed under the feed's lease (one reader at a time across every
   * node) and applies it. Returns the events applied and whether more are ready now.
   */
  async pollFeed(owner: string, signal: AbortSignal): Promise<{ applied: number; more: boolean }> {
    const feed = this.deps.operator.feedName;
    const leaseFor = () => new Date(this.deps.clock.now().getTime() + this.policy.feedLeaseMs).toISOString();
    const lease = await repo.claimFeed(this.db, feed, owner, isoNow(this.deps.clock), leaseFor());
    if (!lease) return { applied: 0, more: false };
    let cursor = lease.cursor;
    let applied = 0;
    let more = false;
    try {
      for (let page = 0; page < this.policy.feedPagesPerPoll; page++) {
        const result = await this.deps.operator.fetchEvents(cursor, this.policy.feedPageSize, signal);
        for (const event of result.events) await this.applyEvent(event);
        // Advanced only now that every event of the page is applied: a crash re-reads the page,
        // and applying an event twice changes nothing.
        if (result.nextCursor !== null) cursor = result.nextCursor;
        const kept = await repo.advanceFeed(this.db, feed, owner, {
          cursor,
          applied: result.events.length,
          now: isoNow(this.deps.clock),
          leaseUntil: leaseFor(),
        });
        applied += result.events.length;
        if (!kept) return { applied, more: false };
        more = result.hasMore;
        if (!more) break;
      }
      await repo.releaseFeed(this.db, feed, owner, isoNow(this.deps.clock), null);
      return { applied, more };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.logger.warn({ feed, code: err instanceof EdoOperatorError ? err.code : undefined }, `EDO feed read failed: ${message}`);
      await repo.releaseFeed(this.db, feed, owner, isoNow(this.deps.clock), message.slice(0, 500));
      return { applied, more: false };
    }
  }

  /** Applies one operator event; false when it is about no job of ours (ignored). */
  async applyEvent(event: EdoEvent): Promise<boolean> {
    const job = await repo.findJobForEvent(this.db, event.jobId, event.operatorDocumentId);
    if (!job) {
      this.logger.debug?.({ event_id: event.eventId, operator_document_id: event.operatorDocumentId }, 'EDO event about an unknown document skipped');
      return false;
    }
    if (event.type === 'link') {
      await repo.insertLink(this.db, {
        team_id: job.team_id,
        public_id: job.public_id,
        link_document_id: event.link.operatorDocumentId,
        job_id: job.job_id,
        kind: event.link.kind,
        title: event.link.title,
        number: event.link.number,
        date: event.link.date,
        linked_at: new Date(event.at).toISOString(),
        received_at: isoNow(this.deps.clock),
      });
      return true;
    }
    await applyStatus(this.db, this.deps.documents, {
      teamId: job.team_id,
      jobId: job.job_id,
      status: event.status,
      at: event.at,
      reason: event.reason,
      operatorDocumentId: event.operatorDocumentId,
      now: isoNow(this.deps.clock),
    });
    return true;
  }
}
