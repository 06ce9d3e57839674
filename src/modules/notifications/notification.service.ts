/**
 * E-mail notifications of documents, through the outbox (CONVENTIONS rule 11):
 *
 * 1. `enqueue(trx, request)` inside the document's transaction: one outbox row per recipient
 *    of the revision, the gates decided (malformed address, tariff sharing, daily quota), the
 *    rows to send leased to this request, the preliminary outcome stored on the document. A
 *    create splits it: `prepare` before its transaction, `plan` and `write` inside it; on a
 *    node whose workers send, its e-mails are recorded in its document's row instead
 *    (email-records.ts) and written by the worker or the next update.
 * 2. `deliverNow(pending)` after commit: one bounded attempt (email-delivery.ts); failures are
 *    left to the worker with a retry time. Never throws: the document is saved whatever happens.
 * 3. `OutboxWorker` (worker.ts) retries due rows, and takes over rows whose lease lapsed
 *    (a process that died between commit and delivery).
 *
 * The daily quota is the `QuotaStore` of the database in use (store/), given by the
 * composition root with the outbox's claim.
 */
import type { Db, Executor } from '../../db/database.js';
import * as outbox from '../../db/outbox.js';
import { writeEachAlone } from '../../db/write-each.js';
import type { OutboxRow } from '../../db/types.js';
import { newLeaseOwner, SetAsideRecords } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import { sortableToken } from '../../shared/tokens.js';
import { currentTraceparent } from '../../shared/tracing.js';
import type { LinkBases } from '../links/index.js';
import { resolvePolicy, type DeliveryPolicy } from './delivery-policy.js';
import { EmailDelivery } from './email-delivery.js';
import { messageIdHost } from './email-message.js';
import { emailRecordFor, recordedPlan } from './email-records.js';
import type { MailTransport } from './mail-transport.js';
import {
  pendingOf,
  statusOf,
  type AttachmentProvider,
  type DeliveryReport,
  type DocumentStatusPort,
  type NotificationLogger,
  type PendingNotifications,
  type PlanContext,
  type PlannedNotifications,
  type PreparedNotifications,
  type RecordedEmailsRef,
  type RecordedTake,
} from './notification-model.js';
import { recordEmailEvent } from './notification-events.js';
import type { Notifications } from './notification.schemas.js';
import { buildEmailRows, type RowRules } from './outbox-rows.js';
import { blockedOutcome, emptyOutcome } from './outcome.js';
import { planEmails, type NotificationRequest } from './plan.js';
import { resolveRecipients } from './recipients.js';
import type { NotificationStores, QuotaStore } from './store/index.js';
import { PRUNE_BATCH, utcDay } from './store/portable.js';

export interface NotificationServiceDeps {
  db: Db;
  /** The quota and the outbox claim of the database in use (src/stores.ts). */
  stores: NotificationStores;
  clock: Clock;
  transport: MailTransport;
  documents: DocumentStatusPort;
  /** The share base builds each recipient's link. */
  bases: LinkBases;
  /** INVOICING_MAIL_FROM. */
  mailFrom: string;
  policy?: Partial<DeliveryPolicy>;
  /** Each message's attachments (the document's PDF: src/document-files.ts); none without. */
  attachments?: AttachmentProvider;
  logger?: NotificationLogger;
  /**
   * Whether a create/update makes its one bounded attempt after commit (default true). An API
   * node whose background work runs in `invoicing worker` (INVOICING_IN_PROCESS_WORKER=false)
   * sets false: its e-mails are queued due now and the workers send them, so the request
   * neither waits for SMTP nor renders the PDF; the answer is 207 with each e-mail `retrying`.
   */
  deliverInRequest?: boolean;
}

const noopLogger: NotificationLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A document's key among the records set aside. */
function recordKey(ref: { teamId: string; publicId: string }): string {
  return `${ref.teamId}\u0000${ref.publicId}`;
}

export class NotificationService {
  readonly policy: DeliveryPolicy;
  private readonly db: Db;
  private readonly logger: NotificationLogger;
  private readonly rules: RowRules;
  private readonly quota: QuotaStore;
  private readonly delivery: EmailDelivery;
  /** Recorded e-mails this process could not write, left out of its batches for a while. */
  private readonly setAside = new SetAsideRecords();

  constructor(private readonly deps: NotificationServiceDeps) {
    this.policy = resolvePolicy(deps.policy);
    this.db = deps.db;
    this.logger = deps.logger ?? noopLogger;
    this.rules = { maxAttempts: this.policy.maxAttempts, requestTimeoutMs: this.policy.requestTimeoutMs, host: messageIdHost(deps.mailFrom), transport: deps.transport.kind };
    this.quota = deps.stores.quota({ db: this.db, clock: deps.clock, onError: (err, what) => this.logger.error({ err }, `daily quota: could not ${what}`) });
    const { clock, transport, documents, mailFrom } = deps;
    const attachments = deps.attachments ?? null;
    this.delivery = new EmailDelivery({ db: this.db, clock, transport, documents, mailFrom, policy: this.policy, rules: this.rules, attachments, logger: this.logger });
  }

  get transportKind(): MailTransport['kind'] {
    return this.deps.transport.kind;
  }

  /** The outcome when notification was not asked for. */
  notRequested(publicId: string): Notifications {
    return emptyOutcome(publicId, false);
  }

  /** Demo mode: nothing stored, nothing sent; every recipient reported as blocked. */
  demoOutcome(publicId: string, document: NotificationRequest['document']): DeliveryReport {
    const emails = resolveRecipients(document).map((r) => r.email);
    const notifications = blockedOutcome(publicId, emails, 'demo_mode');
    return { notifications, status: statusOf(notifications), delivered: false };
  }

  /**
   * Inside the document's transaction, after the document row (insert or update) and its share
   * links are written. Writes the revision's outbox rows and the preliminary outcome.
   */
  async enqueue(trx: Executor, request: NotificationRequest): Promise<PendingNotifications> {
    const planned = await this.plan(trx, request);
    const pending = await this.write(trx, planned);
    await this.deps.documents.storeNotificationOutcome(trx, request.teamId, request.publicId, request.revision, planned.outcome);
    // The quota is the one tariff rule that stops e-mail alone: the document says so in service_status.
    if (planned.restricted) await this.deps.documents.markRestricted(trx, request.teamId, request.publicId, 'emails_per_day_exceeded');
    return pending;
  }

  /**
   * The first half of `enqueue`, for a document not written yet (a create): decides the gates
   * (taking the daily quota, the one statement it runs) and builds the outbox rows and the
   * preliminary outcome. The caller stores the outcome (and `restricted`) with the document
   * row itself, then calls `write` once the row exists. Inside the document's transaction;
   * `prepared` (from `prepare`, before it) leaves only the quota to it.
   */
  async plan(trx: Executor, request: NotificationRequest, prepared: PreparedNotifications = this.prepare(request)): Promise<PlannedNotifications> {
    const { ctx } = prepared;
    const granted = await this.quota.reserve(trx, request.teamId, ctx.day, request.tariff.emails_per_day, ctx.wanted, ctx.nowIso);
    return granted === ctx.wanted ? prepared.allGranted : buildEmailRows(request, ctx, granted, this.rules);
  }

  /**
   * What `plan` can build without the database, before the document's transaction: the e-mails,
   * their rows and outcome as they are when the daily quota lets every one of them through
   * (`allGranted`, what `plan` returns then; otherwise it builds them again with what was granted).
   */
  prepare(request: NotificationRequest): PreparedNotifications {
    const now = this.deps.clock.now();
    const planned = planEmails(request, this.deps.bases);
    // Every e-mail through the other gates takes one from the day's quota, in recipient order.
    const wanted = request.tariff.external_share ? planned.filter((p) => p.recipient.valid).length : 0;
    const attemptNow = this.deps.deliverInRequest ?? true;
    const ctx: PlanContext = {
      planned,
      traceparent: currentTraceparent(),
      wanted,
      day: utcDay(now),
      nowIso: now.toISOString(),
      attemptNow,
      // Only rows this request attempts itself are leased (to it).
      owner: attemptNow ? newLeaseOwner() : '',
      leaseUntil: new Date(now.getTime() + this.policy.leaseMs).toISOString(),
      // One base per write, in time order like the documents' ids (sortableToken: the outbox's
      // primary key then grows at its end) with 126 random bits; each row's id adds its position
      // (at most 32 characters). Ids are internal.
      idBase: sortableToken().slice(0, 30),
    };
    const allGranted = buildEmailRows(request, ctx, wanted, this.rules);
    return { ctx, allGranted, record: emailRecordFor(ctx, allGranted, request.teamLocale, request.revision) };
  }

  /**
   * A create whose e-mails are recorded in its row (`PreparedNotifications.record`): what
   * `write` would hand on, without writing the rows.
   */
  recordedPending(planned: PlannedNotifications): PendingNotifications {
    return pendingOf(planned);
  }

  /**
   * The second half: the planned outbox rows (one statement) and the events of malformed
   * addresses, once the document row exists. Its outcome is stored by the caller.
   */
  async write(trx: Executor, planned: PlannedNotifications): Promise<PendingNotifications> {
    const { rows } = planned;
    await outbox.insertOutboxRows(trx, rows);
    for (const r of rows) if (r.last_error_code === 'invalid_address') await recordEmailEvent(trx, r, { sent: false, code: 'invalid_address', reason: 'invalid_address' }, planned.now, this.deps.documents.onChanged);
    return pendingOf(planned);
  }

  /**
   * A new document whose e-mails are recorded in its row (`prepared.record`): their quota taken
   * from what this node holds, so that nothing but the document is written. Null when they are
   * not recorded (their rows are written with the document) or the node does not hold enough of
   * the team's quota for the day: then `plan` and `write` in the document's transaction.
   */
  takeRecorded(prepared: PreparedNotifications, limit: number): RecordedTake | null {
    const { ctx, allGranted } = prepared;
    if (prepared.record === null) return null;
    let held = this.quota.takeHeld(allGranted.teamId, ctx.day, limit, ctx.wanted);
    if (held === null) return null;
    return {
      pending: pendingOf(allGranted),
      undo: () => {
        if (held !== null) this.quota.giveBack(held);
        held = null;
      },
    };
  }

  /**
   * Inside the transaction of a document's update, first: the e-mails its create recorded are
   * written as outbox rows (as the worker would have). Nothing when the worker wrote them already.
   */
  async writeRecordedEmail(trx: Executor, ref: RecordedEmailsRef): Promise<boolean> {
    const recorded = await this.deps.documents.takeRecordedEmails(trx, ref);
    if (!recorded) return false;
    const { request, ctx } = recordedPlan(recorded, this.deps.bases);
    await outbox.insertOutboxRows(trx, buildEmailRows(request, ctx, ctx.wanted, this.rules).rows);
    return true;
  }

  /**
   * The worker: writes the outbox rows of up to `limit` documents whose creates recorded their
   * e-mails, in one transaction, each record taken (a conditional update) in it, so each e-mail
   * is written once whichever worker or update takes it. How many documents it wrote. A record
   * that cannot be written is undone alone, logged, and set aside (`SetAsideRecords`): the
   * others are written, and the e-mails due are claimed after them as ever.
   */
  async writeRecordedEmails(limit: number): Promise<number> {
    const now = this.deps.clock.now().getTime();
    const found = await this.deps.documents.recordedEmails(this.db, limit + this.setAside.count(now));
    const refs = found.filter((ref) => !this.setAside.has(recordKey(ref), now)).slice(0, limit);
    return writeEachAlone(this.db, refs, (trx, ref) => this.writeRecordedEmail(trx, ref), (ref, err) => {
      this.setAside.add(recordKey(ref), now);
      this.logger.error({ err, team_id: ref.teamId, public_id: ref.publicId }, 'recorded e-mails could not be written; set aside for 10 minutes');
    });
  }

  /** E-mails of `teamId`'s quota for `day` this node holds unused (store/postgres-held-quota.ts). */
  heldFor(teamId: string, day: string): number {
    return this.quota.heldFor(teamId, day);
  }

  /** Gives back what this node holds of the daily quotas; before the database closes. */
  async close(): Promise<void> {
    await this.quota.close();
  }

  /** After commit: the request's one bounded attempt (email-delivery.ts). Never throws. */
  deliverNow(pending: PendingNotifications): Promise<DeliveryReport> {
    return this.delivery.deliverNow(pending);
  }

  /**
   * Deletes a batch of daily-quota rows of days before yesterday (UTC): today's and yesterday's
   * stay, whatever a node's clock is off by. The number deleted (`PRUNE_BATCH` at most).
   */
  async pruneQuota(): Promise<number> {
    const yesterday = new Date(this.deps.clock.now().getTime() - 24 * 60 * 60 * 1000);
    return this.quota.prunePastDays(this.db, utcDay(yesterday));
  }

  /**
   * Retention (INVOICING_DELIVERY_RETENTION_DAYS): deletes a batch of e-mails that finished more
   * than `days` days ago; the number deleted (`PRUNE_BATCH` at most). The document keeps its
   * e-mails' outcome (`metadata.notifications`) in its own row, and a revision's rows are written
   * once, so nothing reads a finished row that old.
   */
  async pruneFinishedEmails(days: number): Promise<number> {
    const before = new Date(this.deps.clock.now().getTime() - days * 86_400_000).toISOString();
    return outbox.pruneFinishedRows(this.db, 'email', before, PRUNE_BATCH);
  }

  /** Claims up to `limit` due e-mails (retries due, leases lapsed) for `owner`. */
  async claimDue(owner: string, limit: number): Promise<OutboxRow[]> {
    return this.deps.stores.claimOutbox({ kind: 'email', owner, limit, now: this.deps.clock.now(), leaseMs: this.policy.leaseMs });
  }

  /** One attempt of one claimed row, fenced by `owner` (email-delivery.ts); null when the lease was lost. */
  attempt(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | null> {
    return this.delivery.attempt(row, owner, signal);
  }

  /** Recomputes a revision's outcome from its rows and stores it on the document. */
  refreshOutcome(teamId: string, publicId: string, revision: number, durationMs: number, attemptTimeoutMs: number): Promise<Notifications> {
    return this.delivery.refreshOutcome(teamId, publicId, revision, durationMs, attemptTimeoutMs);
  }
}
