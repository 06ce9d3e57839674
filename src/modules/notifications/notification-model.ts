/**
 * The shapes the notifications service hands around: its ports (the documents it reports to,
 * the attachments it sends), the e-mails of a write from their planning to their attempt, and
 * the outcome a request answers.
 */
import type { Executor } from '../../db/database.js';
import type { OutboxTable } from '../../db/types.js';
import type { WorkLogger } from '../../shared/background-work.js';
import type { EmailAttachment, InvoiceEmailView } from './email-message.js';
import type { Notifications } from './notification.schemas.js';
import type { NotifiableDocument, NotificationRequest, PlannedEmail } from './plan.js';

/** pino-compatible. */
export type NotificationLogger = WorkLogger;

/** Supplies attachments (the PDF) when a message is sent; called once per attempt. */
export type AttachmentProvider = (email: { teamId: string; publicId: string; revision: number; recipient: string }) => Promise<EmailAttachment[]>;

/**
 * The document columns delivery reports, written by the invoices module (the one writer of
 * `invoices`). A port: notifications never imports invoices; the composition root wires
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
  /** The create's W3C traceparent (null when tracing was off): the e-mails' deliveries continue it. */
  traceparent: string | null;
}

/** What `prepare` works out before the document's transaction, for `plan` inside it. */
export interface PlanContext {
  planned: PlannedEmail[];
  /** The trace the rows' deliveries continue: the write's, or the recorded create's. */
  traceparent: string | null;
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

export interface EmailPayload {
  v: 1;
  view: InvoiceEmailView;
}

/** What `write` hands on for `planned` once its rows are written. */
export function pendingOf(planned: PlannedNotifications): PendingNotifications {
  const ids = planned.rows.filter((r) => r.state === 'sending').map((r) => r.id);
  return { teamId: planned.teamId, publicId: planned.publicId, revision: planned.revision, owner: planned.owner, ids, outcome: planned.outcome };
}

export function statusOf(outcome: Notifications): 200 | 207 {
  return outcome.sent_count < outcome.planned_count ? 207 : 200;
}

