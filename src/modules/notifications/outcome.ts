/**
 * The outcome of a document revision's e-mails, computed from its outbox rows (so the request,
 * the worker and a restart all report the same thing) or, when nothing is stored, directly.
 */
import type { OutboxRow } from '../../db/types.js';
import type { MailRuntime, NotificationFailure, Notifications } from './notification.schemas.js';

export type BlockReason = 'demo_mode' | 'tariff_external_share_disabled' | 'emails_per_day_exceeded';

const kind = (publicId: string) => ({ document_public_id: publicId, document_kind: 'invoice' });

/** Nothing planned: notification not requested, or nobody to send to. */
export function emptyOutcome(publicId: string, requested: boolean, runtime?: Partial<MailRuntime>): Notifications {
  return {
    ...kind(publicId),
    requested,
    planned_count: 0,
    sent_count: 0,
    failed_count: 0,
    sent_to: [],
    failed: [],
    blocked_by_service_gate: false,
    block_reason: '',
    mail_runtime: { transport: 'none', duration_ms: 0, retry_queue: 0, ...runtime },
  };
}

/** Every recipient stopped by one gate before anything was stored (demo mode). */
export function blockedOutcome(publicId: string, emails: string[], reason: BlockReason): Notifications {
  const failed = emails.map((email) => ({ email, error: reason, code: 'blocked', state: 'blocked', attempts: 0 }));
  return {
    ...emptyOutcome(publicId, true),
    planned_count: emails.length,
    failed_count: failed.length,
    failed,
    blocked_by_service_gate: emails.length > 0,
    block_reason: emails.length > 0 ? reason : '',
  };
}

function failureOf(row: OutboxRow): NotificationFailure {
  const base = { email: row.recipient, attempts: row.attempts };
  switch (row.state) {
    case 'blocked':
      return { ...base, error: row.last_error ?? 'blocked', code: 'blocked', state: 'blocked' };
    case 'failed':
      return { ...base, error: row.last_error ?? 'failed', code: row.last_error_code ?? 'smtp_error', state: 'failed' };
    case 'pending':
      return {
        ...base,
        error: row.last_error ?? 'waiting for delivery',
        code: row.last_error_code ?? 'in_progress',
        state: 'retrying',
        next_attempt_at: row.next_attempt_at,
      };
    default:
      return { ...base, error: row.last_error ?? 'delivery in progress', code: row.last_error_code ?? 'in_progress', state: 'sending' };
  }
}

/** The outcome of one revision's rows (any order; reported in recipient order). */
export function outcomeFromRows(
  publicId: string,
  revision: number,
  rows: readonly OutboxRow[],
  runtime: MailRuntime,
  updatedAt: string,
): Notifications {
  const ordered = [...rows].sort((a, b) => a.position - b.position);
  const sent = ordered.filter((r) => r.state === 'sent');
  const failed = ordered.filter((r) => r.state !== 'sent').map(failureOf);
  const blocked = ordered.find((r) => r.state === 'blocked');
  return {
    ...kind(publicId),
    requested: true,
    revision,
    planned_count: ordered.length,
    sent_count: sent.length,
    failed_count: failed.length,
    sent_to: sent.map((r) => r.recipient),
    failed,
    blocked_by_service_gate: blocked !== undefined,
    block_reason: blocked?.last_error ?? '',
    mail_runtime: { ...runtime, retry_queue: ordered.filter((r) => r.state === 'pending' || r.state === 'sending').length },
    updated_at: updatedAt,
  };
}
