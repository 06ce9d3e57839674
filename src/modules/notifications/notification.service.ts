/**
 * E-mail notifications of documents, through the outbox (CONVENTIONS rule 11):
 *
 * 1. `enqueue(trx, request)` inside the document's transaction: one outbox row per recipient
 *    of the revision, the gates decided (malformed address, tariff sharing, daily quota), the
 *    rows to send leased to this request, the preliminary outcome stored on the document.
 * 2. `deliverNow(pending)` after commit: one bounded attempt; failures are left to the worker
 *    with a retry time. Never throws: the document is saved whatever happens to the mail.
 * 3. `OutboxWorker` (worker.ts) retries due rows, and takes over rows whose lease lapsed
 *    (a process that died between commit and delivery).
 */
import type { Db, DatabaseHandle, Executor } from '../../db/database.js';
import { writeEachAlone } from '../../db/write-each.js';
import type { OutboxRow, OutboxTable } from '../../db/types.js';
import { forEachLimited, newLeaseOwner, postponementMs, SetAsideRecords, yieldToIo, type WorkLogger } from '../../shared/background-work.js';
import { BusyError } from '../../shared/busy-error.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import type { LinkBases } from '../links/index.js';
import { resolvePolicy, retryDelayMs, type DeliveryPolicy } from './delivery-policy.js';
import { buildInvoiceEmail, emailLocale, messageIdFor, messageIdHost, type EmailAttachment, type EmailLocale, type InvoiceEmailView } from './email-message.js';
import { recordEmailEvent, settleWithEvent } from './notification-events.js';
import { MailSendError, type MailTransport } from './mail-transport.js';
import type { MailRuntime, Notifications } from './notification.schemas.js';
import { blockedOutcome, emptyOutcome, outcomeFromRows, type BlockReason } from './outcome.js';
import * as outbox from '../../db/outbox.js';
import { planEmails, type NotifiableDocument, type NotificationRequest, type PlannedEmail } from './plan.js';
import { HeldQuota } from './held-quota.js';
import { PRUNE_BATCH, prunePastDays, reserveEmails, utcDay } from './quota.js';
import { resolveRecipients } from './recipients.js';
import { countDelivery } from '../../shared/delivery-metrics.js';
import { sortableToken } from '../../shared/tokens.js';
import { extended } from '../../shared/objects.js';

/** pino-compatible. */
export type NotificationLogger = WorkLogger;

/** Supplies attachments (the PDF) when a message is sent; called once per attempt. */
export type AttachmentProvider = (email: { teamId: string; publicId: string; revision: number; recipient: string }) => Promise<EmailAttachment[]>;

/**
 * The document columns delivery reports, written by the invoices module (the one writer of
 * `invoices`). A port: notifications never imports invoices; app.ts wires
 * `documentStatusPort` from the invoices module in.
 */
export interface DocumentStatusPort {
  /** An e-mail reached the buyer: buyer_status `not_sent` → `sent`. */
  onDelivered(db: Executor, teamId: string, publicId: string): Promise<void>;
  /** Stores the revision's outcome unless a later revision's is stored (compare-and-set). */
  storeNotificationOutcome(db: Executor, teamId: string, publicId: string, revision: number, outcome: Notifications): Promise<boolean>;
  /** service_status `active` → `restricted` with the tariff rule that stopped e-mail. */
  markRestricted(db: Executor, teamId: string, publicId: string, reason: string): Promise<void>;
  /** Moves the document's `changed_at` (an e-mail outcome is a change an integrator follows). */
  onChanged(db: Executor, teamId: string, publicId: string, now: string): Promise<void>;
  /**
   * Up to `limit` documents whose create recorded its e-mails in its row and whose outbox rows
   * are not written yet (a read: idle polling takes no write lock), in (team, document) order.
   */
  recordedEmails(db: Executor, limit: number): Promise<RecordedEmailsRef[]>;
  /**
   * Inside the transaction that writes them: clears the document's record `ref` if it is still
   * there and returns what the e-mails are rebuilt from; null when it was taken meanwhile, or
   * when its first revision is no longer kept (see docs/notifications.md, "Recorded e-mails").
   */
  takeRecordedEmails(db: Executor, ref: RecordedEmailsRef): Promise<RecordedEmails | null>;
}

/** A document's recorded e-mails (`invoices.email_pending`: the record `prepare` made). */
export interface RecordedEmailsRef {
  teamId: string;
  publicId: string;
  record: string;
}

/** What a create's recorded e-mails (of the first revision) are rebuilt from: its record and that revision as stored. */
export interface RecordedEmails extends RecordedEmailsRef {
  document: NotifiableDocument;
  /** The revision's total (decimal text). */
  total: string;
  /** The document's share links. */
  links: NotificationRequest['links'];
}

/**
 * The record: what the e-mails' rows are rebuilt from besides the document and its links (the
 * rows' id base, their time, the team's e-mail locale at the create). Every e-mail of a recorded
 * create passed every gate (the quota granted all), so nothing else is needed for them.
 *
 * And what the create's outcome is answered from (`recordedOutcome`), which is therefore not
 * stored with the row until the rows are written: the addresses in order and the node's mail
 * settings the outcome reports. Records written before these were added come with a stored
 * outcome.
 */
interface EmailRecord {
  v: 1;
  id: string;
  at: string;
  locale: EmailLocale;
  to?: string[];
  transport?: MailRuntime['transport'];
  attempt_timeout_ms?: number;
  max_attempts?: number;
}

/**
 * The outcome a create whose e-mails are recorded answered (`PreparedNotifications.record`):
 * every e-mail due at the record's time, none attempted, as `outcomeFromRows` gives it for the
 * rows the worker writes. Null for a record that does not carry it (its outcome is stored).
 */
export function recordedOutcome(publicId: string, record: string): Notifications | null {
  const r = JSON.parse(record) as EmailRecord;
  if (r.v !== 1 || r.to === undefined || r.transport === undefined) return null;
  const rows = r.to.map((recipient, position) => ({ recipient, position, state: 'pending', attempts: 0, next_attempt_at: r.at, last_error: null, last_error_code: null }));
  const runtime: MailRuntime = { transport: r.transport, duration_ms: 0, retry_queue: rows.length, attempt_timeout_ms: r.attempt_timeout_ms, max_attempts: r.max_attempts };
  return outcomeFromRows(publicId, 1, rows as OutboxRow[], runtime, r.at);
}

export interface NotificationServiceDeps {
  database: Pick<DatabaseHandle, 'db' | 'dialect'>;
  clock: Clock;
  transport: MailTransport;
  documents: DocumentStatusPort;
  /** The share base builds each recipient's link. */
  bases: LinkBases;
  /** INVOICING_MAIL_FROM. */
  mailFrom: string;
  policy?: Partial<DeliveryPolicy>;
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

/** What `prepare` works out before the document's transaction, for `plan` inside it. */
interface PlanContext {
  planned: PlannedEmail[];
  /** E-mails through the other gates: what the quota is asked for. */
  wanted: number;
  day: string;
  nowIso: string;
  attemptNow: boolean;
  owner: string;
  leaseUntil: string;
  idBase: string;
}

/** `prepare`'s result: the context and the plan when the quota lets every e-mail through. */
export interface PreparedNotifications {
  ctx: PlanContext;
  allGranted: PlannedNotifications;
  /**
   * A create on a node whose e-mails the workers send, every e-mail through the gates but the
   * quota: the record its document's row stores (`invoices.email_pending`) instead of the
   * outbox rows, when the quota grants them all (`recordedPending`; the worker writes the rows:
   * `writeRecordedEmails`). Null otherwise: the rows are written with the document.
   */
  record: string | null;
}

/** What `plan` decided for a write's e-mails, handed to `write` once the document row exists. */
export interface PlannedNotifications {
  teamId: string;
  publicId: string;
  revision: number;
  /** The lease owner of the rows to attempt in the request ('' when none is). */
  owner: string;
  rows: OutboxTable[];
  /** The outcome as enqueued (nothing sent yet): stored on the document with its row. */
  outcome: Notifications;
  /** The daily quota stopped some e-mail: the document's service_status becomes `restricted`. */
  restricted: boolean;
  now: string;
}

/** `takeRecorded`: a recorded create's e-mails, their quota taken from what the node holds. */
export interface RecordedTake {
  /** What `write` would hand on. */
  pending: PendingNotifications;
  /** The document was not written: the e-mails taken are held again (once, whatever the calls). */
  undo(): void;
}

/** Handed from `enqueue` (inside the transaction) to `deliverNow` (after commit). */
export interface PendingNotifications {
  teamId: string;
  publicId: string;
  revision: number;
  /** The lease owner of the rows to send: this request. */
  owner: string;
  /** Rows to attempt now (the ones let through every gate). */
  ids: string[];
  /** The outcome as enqueued (nothing sent yet), also stored on the document. */
  outcome: Notifications;
}

export interface DeliveryReport {
  notifications: Notifications;
  /** 207 when an e-mail that was planned was not sent (failed, blocked or left for a retry). */
  status: 200 | 207;
  /** True when at least one e-mail of this revision has been delivered: buyer_status is `sent` now. */
  delivered: boolean;
}

interface EmailPayload {
  v: 1;
  view: InvoiceEmailView;
}

const noopLogger: NotificationLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** What `write` hands on for `planned` once its rows are written. */
function pendingOf(planned: PlannedNotifications): PendingNotifications {
  const ids = planned.rows.filter((r) => r.state === 'sending').map((r) => r.id);
  return { teamId: planned.teamId, publicId: planned.publicId, revision: planned.revision, owner: planned.owner, ids, outcome: planned.outcome };
}

export function statusOf(outcome: Notifications): 200 | 207 {
  return outcome.sent_count < outcome.planned_count ? 207 : 200;
}

export class NotificationService {
  readonly policy: DeliveryPolicy;
  private readonly db: Db;
  private readonly logger: NotificationLogger;
  private readonly host: string;
  /** PostgreSQL: the e-mails of the daily quotas this node holds (held-quota.ts). */
  private readonly held: HeldQuota | null;

  constructor(private readonly deps: NotificationServiceDeps) {
    this.policy = resolvePolicy(deps.policy);
    this.db = deps.database.db;
    this.logger = deps.logger ?? noopLogger;
    this.host = messageIdHost(deps.mailFrom);
    this.held =
      deps.database.dialect === 'postgres'
        ? new HeldQuota(this.db, deps.clock, (err, what) => this.logger.error({ err }, `daily quota: could not ${what}`))
        : null;
  }

  private attachmentProvider: AttachmentProvider | undefined;
  /** Recorded e-mails this process could not write, left out of its batches for a while. */
  private readonly setAside = new SetAsideRecords();

  /**
   * Sets the attachment source after construction: the PDF comes from the pages module, which
   * is built on top of the documents service that in turn needs this one.
   */
  useAttachments(provider: AttachmentProvider): void {
    this.attachmentProvider = provider;
  }

  get dialect(): 'sqlite' | 'postgres' {
    return this.deps.database.dialect;
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
    const granted = await reserveEmails(trx, request.teamId, ctx.day, request.tariff.emails_per_day, ctx.wanted, ctx.nowIso);
    return granted === ctx.wanted ? prepared.allGranted : this.build(request, ctx, granted);
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
    const allGranted = this.build(request, ctx, wanted);
    const recordable = !attemptNow && request.revision === 1 && allGranted.rows.length > 0 && allGranted.rows.every((r) => r.state === 'pending');
    const record: EmailRecord | null = recordable
      ? {
          v: 1,
          id: ctx.idBase,
          at: ctx.nowIso,
          locale: emailLocale(request.teamLocale),
          to: allGranted.rows.map((r) => r.recipient),
          transport: allGranted.outcome.mail_runtime.transport,
          attempt_timeout_ms: allGranted.outcome.mail_runtime.attempt_timeout_ms,
          max_attempts: allGranted.outcome.mail_runtime.max_attempts,
        }
      : null;
    return { ctx, allGranted, record: record && JSON.stringify(record) };
  }

  /**
   * A create whose e-mails are recorded in its row (`PreparedNotifications.record`): what
   * `write` would hand on, without writing the rows.
   */
  recordedPending(planned: PlannedNotifications): PendingNotifications {
    return pendingOf(planned);
  }

  /**
   * Inside the transaction of a document's update, first: the e-mails its create recorded are
   * written as outbox rows (as the worker would have). Nothing when the worker wrote them already.
   */
  async writeRecordedEmail(trx: Executor, ref: RecordedEmailsRef): Promise<boolean> {
    const recorded = await this.deps.documents.takeRecordedEmails(trx, ref);
    if (!recorded) return false;
    await outbox.insertOutboxRows(trx, this.recordedRows(recorded));
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

  /**
   * The rows `prepare` built for the recorded create (every e-mail let through, due at the
   * create's time, none leased), rebuilt from the stored document, its links and the record.
   */
  private recordedRows(recorded: RecordedEmails): OutboxTable[] {
    const record = JSON.parse(recorded.record) as EmailRecord;
    if (record.v !== 1) throw new Error(`unknown e-mail record version ${String(record.v)}`);
    const request: NotificationRequest = {
      teamId: recorded.teamId,
      teamLocale: record.locale,
      tariff: { emails_per_day: 0, external_share: true },
      publicId: recorded.publicId,
      // Only a create records its e-mails: they announce the first revision.
      revision: 1,
      document: recorded.document,
      totals: { total: recorded.total },
      links: recorded.links,
    };
    const planned = planEmails(request, this.deps.bases);
    const wanted = planned.filter((p) => p.recipient.valid).length;
    const ctx: PlanContext = { planned, wanted, day: utcDay(new Date(record.at)), nowIso: record.at, attemptNow: false, owner: '', leaseUntil: record.at, idBase: record.id };
    return this.build(request, ctx, wanted).rows;
  }

  /** The rows and outcome of `ctx`'s e-mails when the quota let `granted` of them through. */
  private build(request: NotificationRequest, ctx: PlanContext, granted: number): PlannedNotifications {
    const { planned, nowIso, attemptNow, owner, leaseUntil, idBase } = ctx;
    const rows: OutboxTable[] = [];
    let taken = 0;
    let restricted = false;
    for (const [position, { recipient, view }] of planned.entries()) {
      let gate: { state: 'failed' | 'blocked'; error: string; code: string } | null = null;
      if (!recipient.valid) {
        gate = { state: 'failed', error: 'invalid_address', code: 'invalid_address' };
      } else if (!request.tariff.external_share) {
        gate = blocked('tariff_external_share_disabled');
      } else if (taken < granted) {
        taken++;
      } else {
        restricted = true;
        gate = blocked('emails_per_day_exceeded');
      }
      const lower = recipient.email.toLowerCase();
      const payload: EmailPayload = { v: 1, view };
      // Leased to this request for its attempt, or left due now for the workers.
      const state = gate ? gate.state : attemptNow ? 'sending' : 'pending';
      const leased = state === 'sending';
      rows.push({
        team_id: request.teamId,
        id: `${idBase}${position.toString(36)}`,
        kind: 'email',
        public_id: request.publicId,
        revision: request.revision,
        position,
        recipient: recipient.email,
        idem_key: `${request.publicId}:${request.revision}:${lower}`,
        message_id: messageIdFor(request.publicId, request.revision, lower, this.host),
        payload: JSON.stringify(payload),
        state,
        attempts: leased ? 1 : 0,
        max_attempts: this.policy.maxAttempts,
        next_attempt_at: nowIso,
        locked_by: leased ? owner : null,
        locked_until: leased ? leaseUntil : null,
        last_error: gate?.error ?? null,
        last_error_code: gate?.code ?? null,
        sent_at: null,
        created_at: nowIso,
        updated_at: nowIso,
      });
    }
    const runtime = this.runtime(0, rows as OutboxRow[], this.policy.requestTimeoutMs);
    const outcome =
      rows.length === 0
        ? extended(emptyOutcome(request.publicId, true, this.transportKind), { revision: request.revision, updated_at: nowIso })
        : outcomeFromRows(request.publicId, request.revision, rows as OutboxRow[], runtime, nowIso);
    return { teamId: request.teamId, publicId: request.publicId, revision: request.revision, owner, rows, outcome, restricted, now: nowIso };
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
   * from what this node holds (held-quota.ts), so that nothing but the document is written.
   * Null when they are not recorded (their rows are written with the document) or the node
   * does not hold enough of the team's quota for the day: then `plan` and `write` in the
   * document's transaction, the quota reserved on its rows.
   */
  takeRecorded(prepared: PreparedNotifications, limit: number): RecordedTake | null {
    const { ctx, allGranted } = prepared;
    if (prepared.record === null) return null;
    let held = this.held?.take(allGranted.teamId, ctx.day, limit, ctx.wanted) ?? null;
    if (held === null) return null;
    return {
      pending: pendingOf(allGranted),
      undo: () => {
        if (held !== null) this.held?.giveBack(held);
        held = null;
      },
    };
  }

  /** E-mails of `teamId`'s quota for `day` this node holds unused (PostgreSQL; held-quota.ts). */
  heldFor(teamId: string, day: string): number {
    return this.held?.heldFor(teamId, day) ?? 0;
  }

  /** Gives back what this node holds of the daily quotas (held-quota.ts); before the database closes. */
  async close(): Promise<void> {
    await this.held?.close();
  }

  /**
   * After commit: the request's one bounded attempt (`policy.requestTimeoutMs` for all its
   * e-mails together). Records each result, stores the outcome on the document, moves
   * buyer_status to `sent` after a delivery. Never throws.
   */
  async deliverNow(pending: PendingNotifications): Promise<DeliveryReport> {
    if (pending.ids.length === 0) {
      return { notifications: pending.outcome, status: statusOf(pending.outcome), delivered: pending.outcome.sent_count > 0 };
    }
    const started = Date.now();
    try {
      const rows = await outbox.listLeasedRows(this.db, pending.teamId, pending.ids, pending.owner);
      const signal = AbortSignal.timeout(this.policy.requestTimeoutMs);
      await forEachLimited(rows, this.policy.concurrency, async (row) => countDelivery('email', await this.attempt(row, pending.owner, signal)));
      const notifications = await this.refreshOutcome(pending.teamId, pending.publicId, pending.revision, Date.now() - started, this.policy.requestTimeoutMs);
      return { notifications, status: statusOf(notifications), delivered: notifications.sent_count > 0 };
    } catch (err) {
      // The rows stay leased; the worker takes them over when the lease lapses.
      this.logger.error({ err, public_id: pending.publicId, revision: pending.revision }, 'notification delivery could not be recorded');
      const notifications = { ...pending.outcome, mail_runtime: { ...pending.outcome.mail_runtime, duration_ms: Date.now() - started } };
      return { notifications, status: statusOf(notifications), delivered: false };
    }
  }

  /**
   * Deletes a batch of daily-quota rows of days before yesterday (UTC): today's and yesterday's
   * stay, whatever a node's clock is off by. The number deleted (`PRUNE_BATCH` at most).
   */
  async pruneQuota(): Promise<number> {
    const yesterday = new Date(this.deps.clock.now().getTime() - 24 * 60 * 60 * 1000);
    return prunePastDays(this.db, utcDay(yesterday));
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
    return outbox.claimDue(this.db, this.dialect, { kind: 'email', owner, limit, now: this.deps.clock.now(), leaseMs: this.policy.leaseMs });
  }

  /**
   * One attempt of one claimed row: send, then record sent / retry / failed, fenced by `owner`.
   * Returns the new state, or null when the lease was lost meanwhile.
   */
  async attempt(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | null> {
    const fence = { teamId: row.team_id, id: row.id, owner };
    // A fresh full lease right before sending (longer than any attempt), checked in the
    // database: a claimer that was paused until its lease lapsed and the row was taken over
    // finds out here instead of sending it a second time.
    const renewedAt = this.deps.clock.now();
    const leaseUntil = new Date(renewedAt.getTime() + this.policy.leaseMs).toISOString();
    if (!(await outbox.renewLease(this.db, fence, renewedAt.toISOString(), leaseUntil))) return null;
    if (row.attempts > row.max_attempts) {
      // A claim that lapsed during the last attempt (its process died): give up, visibly.
      const error = row.last_error ?? 'the last delivery attempt was interrupted';
      const code = row.last_error_code ?? 'smtp_error';
      const at = isoNow(this.deps.clock);
      const settled = await settleWithEvent(this.db, this.deps.documents.onChanged, row, { sent: false, code, reason: error }, at, (trx) => outbox.markFailed(trx, fence, at, error, code));
      return settled ? 'failed' : null;
    }
    let failure: MailSendError | null = null;
    try {
      // The PDF attachment is CPU work in this process: let the node's requests through first.
      await yieldToIo();
      const message = await this.messageFor(row);
      await this.deps.transport.send(message, signal);
    } catch (err) {
      if (err instanceof BusyError) return this.postpone(row, fence, err);
      failure = err instanceof MailSendError ? err : new MailSendError((err as Error).message ?? String(err), 'smtp_error', false);
    }
    const now = this.deps.clock.now();
    const nowIso = now.toISOString();
    if (!failure) return (await settleWithEvent(this.db, this.deps.documents.onChanged, row, { sent: true }, nowIso, (trx) => outbox.markSent(trx, fence, nowIso))) ? 'sent' : null;
    const final = failure.permanent || row.attempts >= row.max_attempts;
    this.logger.warn(
      { public_id: row.public_id, revision: row.revision, attempts: row.attempts, code: failure.code, final },
      `e-mail delivery failed: ${failure.message}`,
    );
    if (final) {
      const outcome = { sent: false as const, code: failure.code, reason: failure.message };
      const settled = await settleWithEvent(this.db, this.deps.documents.onChanged, row, outcome, nowIso, (trx) => outbox.markFailed(trx, fence, nowIso, failure.message, failure.code));
      return settled ? 'failed' : null;
    }
    const next = new Date(now.getTime() + retryDelayMs(row.attempts, this.policy)).toISOString();
    return (await outbox.markRetry(this.db, fence, nowIso, next, failure.message, failure.code)) ? 'pending' : null;
  }

  /**
   * The attachment could not be rendered now (every PDF renderer busy): nothing was sent and
   * the e-mail is due again after the renderer's wait, its attempt not counted.
   */
  private async postpone(row: OutboxRow, fence: outbox.Fence, busy: BusyError): Promise<'pending' | null> {
    const now = this.deps.clock.now();
    const next = new Date(now.getTime() + postponementMs(busy)).toISOString();
    this.logger.info({ public_id: row.public_id, revision: row.revision, next_attempt_at: next }, `e-mail postponed: ${busy.message}`);
    return (await outbox.markPostponed(this.db, fence, now.toISOString(), next)) ? 'pending' : null;
  }

  /** Recomputes a revision's outcome from its rows and stores it on the document. */
  async refreshOutcome(teamId: string, publicId: string, revision: number, durationMs: number, attemptTimeoutMs: number): Promise<Notifications> {
    const rows = await outbox.listRevisionRows(this.db, teamId, publicId, revision, 'email');
    const outcome = outcomeFromRows(publicId, revision, rows, this.runtime(durationMs, rows, attemptTimeoutMs), isoNow(this.deps.clock));
    // buyer_status first: whoever sees a delivery in the outcome also sees `sent`.
    if (outcome.sent_count > 0) await this.deps.documents.onDelivered(this.db, teamId, publicId);
    await this.deps.documents.storeNotificationOutcome(this.db, teamId, publicId, revision, outcome);
    return outcome;
  }

  private async messageFor(row: OutboxRow) {
    const payload = JSON.parse(row.payload) as EmailPayload;
    let attachments: EmailAttachment[] = [];
    const provider = this.attachmentProvider ?? this.deps.attachments;
    if (provider) {
      try {
        attachments = await provider({ teamId: row.team_id, publicId: row.public_id, revision: row.revision, recipient: row.recipient });
      } catch (err) {
        if (err instanceof BusyError) throw err;
        throw new MailSendError(`could not prepare the attachments: ${(err as Error).message}`, 'smtp_error', false);
      }
    }
    return buildInvoiceEmail(payload.view, { from: this.deps.mailFrom, to: row.recipient, messageId: row.message_id }, attachments);
  }

  private runtime(durationMs: number, rows: readonly Pick<OutboxRow, 'state'>[], attemptTimeoutMs: number): MailRuntime {
    return {
      transport: this.transportKind,
      duration_ms: Math.max(0, Math.round(durationMs)),
      retry_queue: rows.filter((r) => r.state === 'pending' || r.state === 'sending').length,
      attempt_timeout_ms: attemptTimeoutMs,
      max_attempts: this.policy.maxAttempts,
    };
  }
}

/** A document's key among the records set aside. */
function recordKey(ref: { teamId: string; publicId: string }): string {
  return `${ref.teamId}\u0000${ref.publicId}`;
}

function blocked(reason: BlockReason): { state: 'blocked'; error: string; code: string } {
  return { state: 'blocked', error: reason, code: 'blocked' };
}
