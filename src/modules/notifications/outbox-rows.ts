/**
 * A write's outbox rows of e-mail, one per recipient of the revision, each with its gate's
 * verdict (malformed address, tariff sharing, daily quota), and the outcome they give before
 * any attempt.
 */
import type { OutboxRow, OutboxTable } from '../../db/types.js';
import { extended } from '../../shared/objects.js';
import { messageIdFor } from './email-message.js';
import type { EmailPayload, PlanContext, PlannedNotifications } from './notification-model.js';
import type { MailRuntime } from './notification.schemas.js';
import { emptyOutcome, outcomeFromRows, type BlockReason } from './outcome.js';
import type { NotificationRequest } from './plan.js';

/** What every row of a node's e-mails carries besides the e-mail: its policy, host and transport. */
export interface RowRules {
maxAttempts: number;
/** The request's bounded attempt (reported as `attempt_timeout_ms`). */
requestTimeoutMs: number;
/** The Message-ID's host (INVOICING_MAIL_FROM's domain). */
host: string;
transport: MailRuntime['transport'];
}

/** The rows and outcome of `ctx`'s e-mails when the quota let `granted` of them through. */
export function buildEmailRows(request: NotificationRequest, ctx: PlanContext, granted: number, rules: RowRules): PlannedNotifications {
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
      message_id: messageIdFor(request.publicId, request.revision, lower, rules.host),
      payload: JSON.stringify(payload),
      state,
      attempts: leased ? 1 : 0,
      max_attempts: rules.maxAttempts,
      next_attempt_at: nowIso,
      locked_by: leased ? owner : null,
      locked_until: leased ? leaseUntil : null,
      last_error: gate?.error ?? null,
      last_error_code: gate?.code ?? null,
      sent_at: null,
      created_at: nowIso,
      updated_at: nowIso,
      traceparent: ctx.traceparent,
    });
  }
  const runtime = mailRuntime(rules, 0, rows as OutboxRow[], rules.requestTimeoutMs);
  const outcome =
    rows.length === 0
      ? extended(emptyOutcome(request.publicId, true, rules.transport), { revision: request.revision, updated_at: nowIso })
      : outcomeFromRows(request.publicId, request.revision, rows as OutboxRow[], runtime, nowIso);
  return { teamId: request.teamId, publicId: request.publicId, revision: request.revision, owner, rows, outcome, restricted, now: nowIso };
}

/** The mail runtime an outcome reports for `rows`. */
export function mailRuntime(rules: Pick<RowRules, 'transport' | 'maxAttempts'>, durationMs: number, rows: readonly Pick<OutboxRow, 'state'>[], attemptTimeoutMs: number): MailRuntime {
  return {
    transport: rules.transport,
    duration_ms: Math.max(0, Math.round(durationMs)),
    retry_queue: rows.filter((r) => r.state === 'pending' || r.state === 'sending').length,
    attempt_timeout_ms: attemptTimeoutMs,
    max_attempts: rules.maxAttempts,
  };
}

function blocked(reason: BlockReason): { state: 'blocked'; error: string; code: string } {
  return { state: 'blocked', error: reason, code: 'blocked' };
}
