/**
 * Sending one document's e-mails: the request's one bounded attempt after its commit
 * (`deliverNow`), a worker's attempt of a claimed row (`attempt`), each recorded fenced by the
 * lease owner, and the outcome they give stored on the document.
 */
import type { Db } from '../../db/database.js';
import * as outbox from '../../db/outbox.js';
import type { OutboxRow } from '../../db/types.js';
import { forEachLimited, postponementMs, yieldToIo } from '../../shared/background-work.js';
import { BusyError } from '../../shared/busy-error.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { countDelivery } from '../../shared/delivery-metrics.js';
import { retryDelayMs, type DeliveryPolicy } from './delivery-policy.js';
import { buildInvoiceEmail, type EmailAttachment } from './email-message.js';
import { MailSendError, type MailTransport } from './mail-transport.js';
import { statusOf, type AttachmentProvider, type DeliveryReport, type DocumentStatusPort, type EmailPayload, type NotificationLogger, type PendingNotifications } from './notification-model.js';
import { settleWithEvent } from './notification-events.js';
import type { Notifications } from './notification.schemas.js';
import { outcomeFromRows } from './outcome.js';
import { mailRuntime, type RowRules } from './outbox-rows.js';
import { ATTR, inSpan, SPAN } from '../../shared/tracing.js';

export interface EmailDeliveryDeps {
  db: Db;
  clock: Clock;
  transport: MailTransport;
  documents: DocumentStatusPort;
  mailFrom: string;
  policy: DeliveryPolicy;
  rules: RowRules;
  /** The attachments of each message (the document's PDF); null: none. */
  attachments: AttachmentProvider | null;
  logger: NotificationLogger;
}

export class EmailDelivery {
  constructor(private readonly deps: EmailDeliveryDeps) {}

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
      const rows = await outbox.listLeasedRows(this.deps.db, pending.teamId, pending.ids, pending.owner);
      const signal = AbortSignal.timeout(this.deps.policy.requestTimeoutMs);
      await forEachLimited(rows, this.deps.policy.concurrency, async (row) => countDelivery('email', await this.attempt(row, pending.owner, signal)));
      const notifications = await this.refreshOutcome(pending.teamId, pending.publicId, pending.revision, Date.now() - started, this.deps.policy.requestTimeoutMs);
      return { notifications, status: statusOf(notifications), delivered: notifications.sent_count > 0 };
    } catch (err) {
      // The rows stay leased; the worker takes them over when the lease lapses.
      this.deps.logger.error({ err, public_id: pending.publicId, revision: pending.revision }, 'notification delivery could not be recorded');
      const notifications = { ...pending.outcome, mail_runtime: { ...pending.outcome.mail_runtime, duration_ms: Date.now() - started } };
      return { notifications, status: statusOf(notifications), delivered: false };
    }
  }
  /**
   * One attempt of one claimed row: send, then record sent / retry / failed, fenced by `owner`.
   * Returns the new state, or null when the lease was lost meanwhile. Traced as a child of the
   * write that queued the row (`row.traceparent`), in the request or in a worker.
   */
  attempt(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | null> {
    const attributes = { [ATTR.teamId]: row.team_id, [ATTR.publicId]: row.public_id };
    return inSpan(SPAN.emailDelivery, { attributes, traceparent: row.traceparent }, async (span) => {
      const outcome = await this.attemptRow(row, owner, signal);
      span?.setAttribute(ATTR.outcome, outcome ?? 'lease_lost');
      return outcome;
    });
  }

  private async attemptRow(row: OutboxRow, owner: string, signal: AbortSignal): Promise<'sent' | 'pending' | 'failed' | null> {
    const fence = { teamId: row.team_id, id: row.id, owner };
    // A fresh full lease right before sending (longer than any attempt), checked in the
    // database: a claimer that was paused until its lease lapsed and the row was taken over
    // finds out here instead of sending it a second time.
    const renewedAt = this.deps.clock.now();
    const leaseUntil = new Date(renewedAt.getTime() + this.deps.policy.leaseMs).toISOString();
    if (!(await outbox.renewLease(this.deps.db, fence, renewedAt.toISOString(), leaseUntil))) return null;
    if (row.attempts > row.max_attempts) {
      // A claim that lapsed during the last attempt (its process died): give up, visibly.
      const error = row.last_error ?? 'the last delivery attempt was interrupted';
      const code = row.last_error_code ?? 'smtp_error';
      const at = isoNow(this.deps.clock);
      const settled = await settleWithEvent(this.deps.db, this.deps.documents.onChanged, row, { sent: false, code, reason: error }, at, (trx) => outbox.markFailed(trx, fence, at, error, code));
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
    if (!failure) return (await settleWithEvent(this.deps.db, this.deps.documents.onChanged, row, { sent: true }, nowIso, (trx) => outbox.markSent(trx, fence, nowIso))) ? 'sent' : null;
    const final = failure.permanent || row.attempts >= row.max_attempts;
    this.deps.logger.warn(
      { public_id: row.public_id, revision: row.revision, attempts: row.attempts, code: failure.code, final },
      `e-mail delivery failed: ${failure.message}`,
    );
    if (final) {
      const outcome = { sent: false as const, code: failure.code, reason: failure.message };
      const settled = await settleWithEvent(this.deps.db, this.deps.documents.onChanged, row, outcome, nowIso, (trx) => outbox.markFailed(trx, fence, nowIso, failure.message, failure.code));
      return settled ? 'failed' : null;
    }
    const next = new Date(now.getTime() + retryDelayMs(row.attempts, this.deps.policy)).toISOString();
    return (await outbox.markRetry(this.deps.db, fence, nowIso, next, failure.message, failure.code)) ? 'pending' : null;
  }
  /**
   * The attachment could not be rendered now (every PDF renderer busy): nothing was sent and
   * the e-mail is due again after the renderer's wait, its attempt not counted.
   */
  private async postpone(row: OutboxRow, fence: outbox.Fence, busy: BusyError): Promise<'pending' | null> {
    const now = this.deps.clock.now();
    const next = new Date(now.getTime() + postponementMs(busy)).toISOString();
    this.deps.logger.info({ public_id: row.public_id, revision: row.revision, next_attempt_at: next }, `e-mail postponed: ${busy.message}`);
    return (await outbox.markPostponed(this.deps.db, fence, now.toISOString(), next)) ? 'pending' : null;
  }

  /** Recomputes a revision's outcome from its rows and stores it on the document. */
  async refreshOutcome(teamId: string, publicId: string, revision: number, durationMs: number, attemptTimeoutMs: number): Promise<Notifications> {
    const rows = await outbox.listRevisionRows(this.deps.db, teamId, publicId, revision, 'email');
    const outcome = outcomeFromRows(publicId, revision, rows, mailRuntime(this.deps.rules, durationMs, rows, attemptTimeoutMs), isoNow(this.deps.clock));
    // buyer_status first: whoever sees a delivery in the outcome also sees `sent`.
    if (outcome.sent_count > 0) await this.deps.documents.onDelivered(this.deps.db, teamId, publicId);
    await this.deps.documents.storeNotificationOutcome(this.deps.db, teamId, publicId, revision, outcome);
    return outcome;
  }

  /** The message of a claimed row, with its attachments. */
  private async messageFor(row: OutboxRow) {
    const payload = JSON.parse(row.payload) as EmailPayload;
    let attachments: EmailAttachment[] = [];
    const provider = this.deps.attachments;
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
}
