/**
 * EDO synchronization of documents (spec 1.7, docs/edo.md), through the outbox (CONVENTIONS
 * rule 11):
 *
 * 1. `planSync(trx, request)` inside the document's transaction: when the document carries
 *    `buyer_edo_id` and is issued (or paid), and what would be sent differs from the last job,
 *    one job: an `edo_jobs` row and an outbox row of kind `edo_send` with the same id.
 * 2. `EdoWorker` claims due sends with a lease, attempts each once through the operator port
 *    (idempotent by job id; edo-sending.ts), and reschedules failures with exponential backoff.
 * 3. `pollFeed` reads the operator's change feed under a lease (edo-feed.ts): delivery,
 *    acceptance, rejection and incoming links, applied idempotently; the cursor advances only
 *    after a page is applied.
 */
import type { Db, DatabaseHandle, Executor } from '../../db/database.js';
import { writeEachAlone } from '../../db/write-each.js';
import * as outbox from '../../db/outbox.js';
import type { EdoJobRow, OutboxRow } from '../../db/types.js';
import { SetAsideRecords, type WorkLogger } from '../../shared/background-work.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { sortableToken } from '../../shared/tokens.js';
import { EdoFeed } from './edo-feed.js';
import type { EdoEvent, EdoOperator } from './edo-operator.js';
import { resolveEdoPolicy, type EdoPolicy } from './edo-policy.js';
import { toEdoSync, type EdoDocumentPort } from './edo-jobs.js';
import { EdoSender, type EdoFileProvider, type SendPayload } from './edo-sending.js';
import type { EdoSync } from './edo.schemas.js';
import * as repo from './edo.repository.js';
import type { EdoSyncRequest, RecordedSendRef } from './edo-request.js';
import { ATTR, currentTraceparent, inSpan, SPAN } from '../../shared/tracing.js';

export type { EdoFileProvider };

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
  /** The trace the send continues (a recorded create's); the active one when absent. */
  traceparent?: string | null;
}

function sendOf(request: EdoSyncRequest, jobId: string, queuedAt: string): SendIds {
  const { teamId, publicId, revision, sellerEdoId } = request;
  return { teamId, publicId, revision, sellerEdoId, buyerEdoId: request.buyerEdoId as string, jobId, queuedAt };
}

/** Rows built for their state alone (`sendRows`), never written. */
const NO_CONTENT = Object.freeze({ payload: '', contentHash: '' });

/** Sync runs for documents that are out to the buyer: drafts wait, cancelled ones stop it. */
const SYNCED_SELLER_STATUSES = new Set(['issued', 'paid']);

const LINKS_SHOWN = 100;

const noopLogger: WorkLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export class EdoService {
  readonly policy: EdoPolicy;
  private readonly db: Db;
  private readonly logger: WorkLogger;
  private readonly sender: EdoSender;
  private readonly feed: EdoFeed;
  private readonly queuedListeners: (() => void)[] = [];
  /** Recorded sends this process could not write, left out of its batches for a while. */
  private readonly setAside = new SetAsideRecords();

  constructor(private readonly deps: EdoServiceDeps) {
    this.policy = resolveEdoPolicy(deps.policy);
    this.db = deps.database.db;
    this.logger = deps.logger ?? noopLogger;
    const work = { db: this.db, clock: deps.clock, operator: deps.operator, documents: deps.documents, policy: this.policy, logger: this.logger };
    this.sender = new EdoSender(work, deps.files ?? null);
    this.feed = new EdoFeed(work);
  }

  get operator(): EdoOperator {
    return this.deps.operator;
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
    await this.writeSend(trx, this.newSend(recorded.request, recorded.queuedAt, recorded.jobId, recorded.traceparent));
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
  private newSend(request: EdoSyncRequest, now: string, jobId: string = sortableToken(), traceparent: string | null = currentTraceparent()): NewSend {
    const payload: SendPayload = { v: 1, sender: request.sellerEdoId ?? '', recipient: request.buyerEdoId as string, document: request.document };
    return this.sendRows({ ...sendOf(request, jobId, now), traceparent }, { payload: JSON.stringify(payload), contentHash: request.contentHash });
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
      traceparent: send.traceparent ?? null,
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
   * One attempt of one claimed send, recorded fenced by `owner` (edo-sending.ts). Returns the
   * job's new state, or null when the lease was lost meanwhile.
   */
  attempt(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | 'superseded' | null> {
    const attributes = { [ATTR.teamId]: row.team_id, [ATTR.publicId]: row.public_id };
    return inSpan(SPAN.edoDelivery, { attributes, traceparent: row.traceparent }, async (span) => {
      const outcome = await this.sender.attempt(row, owner, signal);
      span?.setAttribute(ATTR.outcome, outcome ?? 'lease_lost');
      return outcome;
    });
  }

  /**
   * Reads the operator's change feed under the feed's lease (one reader at a time across every
   * node) and applies it (edo-feed.ts). Returns the events applied and whether more are ready now.
   */
  pollFeed(owner: string, signal: AbortSignal): Promise<{ applied: number; more: boolean }> {
    return this.feed.poll(owner, signal);
  }

  /** Applies one operator event; false when it is about no job of ours (ignored). */
  applyEvent(event: EdoEvent): Promise<boolean> {
    return this.feed.applyEvent(event);
  }
}
