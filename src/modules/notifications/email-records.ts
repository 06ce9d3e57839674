/**
 * E-mails recorded in a create's document row (`invoices.email_pending`, docs/notifications.md
 * "Recorded e-mails"): a node whose e-mails the workers send (INVOICING_IN_PROCESS_WORKER=false)
 * stores with the document what its e-mails are built from, instead of their outbox rows; the
 * worker or the document's next update writes the rows from it.
 */
import type { OutboxRow } from '../../db/types.js';
import { emailLocale, type EmailLocale } from './email-message.js';
import type { PlanContext, PlannedNotifications, RecordedEmails } from './notification-model.js';
import type { MailRuntime, Notifications } from './notification.schemas.js';
import { outcomeFromRows } from './outcome.js';
import { planEmails, type NotificationRequest } from './plan.js';
import type { LinkBases } from '../links/index.js';
import { utcDay } from './store/portable.js';

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

/**
 * The record of a create whose e-mails all passed every gate but the quota, on a node that does
 * not attempt them in the request (`allGranted`: them when the quota lets all through); null
 * when they cannot be recorded (then the rows are written with the document).
 */
export function emailRecordFor(ctx: PlanContext, allGranted: PlannedNotifications, teamLocale: string, revision: number): string | null {
  const recordable = !ctx.attemptNow && revision === 1 && allGranted.rows.length > 0 && allGranted.rows.every((r) => r.state === 'pending');
  if (!recordable) return null;
  const record: EmailRecord = {
    v: 1,
    id: ctx.idBase,
    at: ctx.nowIso,
    locale: emailLocale(teamLocale),
    to: allGranted.rows.map((r) => r.recipient),
    transport: allGranted.outcome.mail_runtime.transport,
    attempt_timeout_ms: allGranted.outcome.mail_runtime.attempt_timeout_ms,
    max_attempts: allGranted.outcome.mail_runtime.max_attempts,
  };
  return JSON.stringify(record);
}

/**
 * What `prepare` built for the recorded create (every e-mail let through, due at the create's
 * time, none leased), rebuilt from the stored document, its links and the record: the request
 * and the context whose rows (all granted) are the ones to write.
 */
export function recordedPlan(recorded: RecordedEmails, bases: LinkBases): { request: NotificationRequest; ctx: PlanContext } {
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
  const planned = planEmails(request, bases);
  const wanted = planned.filter((p) => p.recipient.valid).length;
  const ctx: PlanContext = { planned, traceparent: recorded.traceparent, wanted, day: utcDay(new Date(record.at)), nowIso: record.at, attemptNow: false, owner: '', leaseUntil: record.at, idBase: record.id };
  return { request, ctx };
}
