/**
 * The outcome of a document revision's e-mails, computed from its outbox rows (so the request,
 * the worker and a restart all report the same thing) or, when nothing is stored, directly.
 */
import type { OutboxRow } from '../../db/types.js';
import type { MailRuntime, NotificationFailure, Notifications } from './notification.schemas.js';
import { extended } from '../../shared/objects.js';

export type BlockReason = 'demo_mode' | 'tariff_external_share_disabled' | 'emails_per_day_exceeded';

/** Nothing planned: notification not requested, or nobody to send to. */
export function emptyOutcome(publicId: string, requested: boolean, transport: MailRuntime['transport'] = 'none'): Notifications {
  return {
    document_public_id: publicId,
    document_kind: 'invoice',
    requested,
    planned_count: 0,
    sent_count: 0,
    failed_count: 0,
    sent_to: [],
    failed: [],
    blocked_by_service_gate: false,
    block_reason: '',
    mail_runtime: { transport, duration_ms: 0, retry_queue: 0 },
  };
}

/** Every recipient stopped by one gate before anything was stored (demo mode). */
export function blockedOutcome(publicId: string, emails: string[], reason: BlockReason): Notifications {
  const failed = emails.map((email) => ({ email, error: reason, code: 'blocked', state: 'blocked', attempts: 0 }));
  const outcome = emptyOutcome(publicId, true);
  outcome.planned_count = emails.length;
  outcome.failed_count = failed.length;
  outcome.failed = failed;
  outcome.blocked_by_service_gate = emails.length > 0;
  outcome.block_reason = emails.length > 0 ? reason : '';
  return outcome;
}

/**
 * Written out, without spreading a shared part: on Node.js 20 a literal that spreads an object
 * and adds properties costs about 1 µs a property (src/shared/objects.ts); this runs for every
 * e-mail of every write.
 */
function failureOf(row: OutboxRow): NotificationFailure {
  const email = row.recipient;
  const attempts = row.attempts;
  switch (row.state) {
    case 'blocked':
      return { email, attempts, error: row.last_error ?? 'blocked', code: 'blocked', state: 'blocked' };
    case 'failed':
      return { email, attempts, error: row.last_error ?? 'failed', code: row.last_error_code ?? 'smtp_error', state: 'failed' };
    case 'pending':
      return {
        email,
        attempts,
        error: row.last_error ?? 'waiting for delivery',
        code: row.last_error_code ?? 'in_progress',
        state: 'retrying',
        next_attempt_at: row.next_attempt_at,
      };
    default:
      return { email, attempts, error: row.last_error ?? 'delivery in progress', code: row.last_error_code ?? 'in_progress', state: 'sending' };
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
    document_public_id: publicId,
    document_kind: 'invoice',
    requested: true,
    revision,
    planned_count: ordered.length,
    sent_count: sent.length,
    failed_count: failed.length,
    sent_to: sent.map((r) => r.recipient),
    failed,
    blocked_by_service_gate: blocked !== undefined,
    block_reason: blocked?.last_error ?? '',
    mail_runtime: extended(runtime, { retry_queue: ordered.filter((r) => r.state === 'pending' || r.state === 'sending').length }),
    updated_at: updatedAt,
  };
}
