/**
 * The built-in `sandbox` EDO operator: it plays the operator inside this service's own
 * database (sandbox.repository.ts), so its mailbox survives restarts and every node sharing
 * the database sees one operator, as with a real one.
 *
 * Outcomes depend only on the recipient id, the job id and the clock. Recipient ids,
 * case-insensitive:
 * - containing `NOTFOUND`: the send fails for good (`participant_not_found`);
 * - containing `FLAKY`: the first two send calls of each job id fail with a retryable
 *   `operator_unavailable`, the third goes through;
 * - containing `REJECT`: the buyer rejects the document;
 * - anything else: the buyer accepts it.
 *
 * A send that goes through schedules, in the same transaction that marks the job accepted,
 * `delivered` plus a receipt notice at now + deliveryDelayMs, then the decision (plus a
 * rejection notice) at now + max(decisionDelayMs, deliveryDelayMs). The feed hands out
 * events once they are due.
 *
 * Feed caveat: the cursor is a position (at, id) and events are written with `at` taken from
 * the sending node's clock plus the delivery delay. A reader whose clock runs ahead of a
 * sender's by more than the delivery delay (or a send transaction that takes longer than it)
 * may already have moved its cursor past the `at` of events committed afterwards, and those
 * are then never read. So on several nodes the cursor assumes their clocks agree to within
 * the delivery delay; keep deliveryDelayMs above the clock skew and never 0 there.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import {
  EdoOperatorError,
  type EdoErrorCode,
  type EdoEvent,
  type EdoFeedPage,
  type EdoOperator,
  type EdoOutgoingDocument,
  type EdoSendReceipt,
} from './edo-operator.js';
import {
  insertEvents,
  listDueEvents,
  markAccepted,
  recordSendAttempt,
  type NewSandboxEvent,
  type SandboxFeedPosition,
} from './sandbox.repository.js';

export interface SandboxEdoOperatorDeps {
  db: Db;
  clock: Clock;
  /** From a successful send to `delivered` and the receipt notice. */
  deliveryDelayMs: number;
  /** From a successful send to the buyer's decision (never before delivery). */
  decisionDelayMs: number;
}

export interface SandboxInjectedFailure {
  code?: EdoErrorCode;
  permanent?: boolean;
  message?: string;
}

export const SANDBOX_REJECTION_REASON = 'Покупатель отклонил документ (sandbox)';

/** Send calls of a FLAKY recipient's job that fail before one goes through. */
const FLAKY_FAILURES = 2;

// Column widths of edo_sandbox_documents: checked here so both databases answer alike
// (PostgreSQL would refuse a longer value, SQLite would store it).
const MAX_JOB_ID_LENGTH = 32;
const MAX_PARTICIPANT_ID_LENGTH = 46;

/** `SBX-` + the first 24 hex digits of sha256(jobId): the same document id for every retry. */
export function sandboxDocumentId(jobId: string): string {
  return `SBX-${createHash('sha256').update(jobId).digest('hex').slice(0, 24)}`;
}

export class SandboxEdoOperator implements EdoOperator {
  readonly kind = 'sandbox' as const;
  readonly feedName = 'sandbox';

  private readonly db: Db;
  private readonly clock: Clock;
  private readonly deliveryDelayMs: number;
  private readonly decisionDelayMs: number;

  // Test hooks, in memory: they model a misbehaving operator, not its mailbox.
  private sendFailuresLeft = 0;
  private sendFailure: Required<SandboxInjectedFailure> = defaultInjectedFailure();
  private feedFailuresLeft = 0;
  private sendDelayMs = 0;

  constructor(deps: SandboxEdoOperatorDeps) {
    if (!(deps.deliveryDelayMs >= 0) || !(deps.decisionDelayMs >= 0)) {
      throw new RangeError('sandbox: delays must be non-negative');
    }
    this.db = deps.db;
    this.clock = deps.clock;
    this.deliveryDelayMs = deps.deliveryDelayMs;
    this.decisionDelayMs = deps.decisionDelayMs;
  }

  /** The next `count` send calls throw this failure (default: retryable `operator_unavailable`). */
  injectSendFailures(count: number, failure: SandboxInjectedFailure = {}): void {
    this.sendFailuresLeft = count;
    this.sendFailure = { ...defaultInjectedFailure(), ...failure };
  }

  /** The next `count` feed reads throw a retryable `operator_unavailable`. */
  injectFeedFailures(count: number): void {
    this.feedFailuresLeft = count;
  }

  /** Every send waits `ms` before answering (0: answer at once); an abort ends the wait. */
  delaySends(ms: number): void {
    this.sendDelayMs = ms;
  }

  async send(doc: EdoOutgoingDocument, signal: AbortSignal): Promise<EdoSendReceipt> {
    if (this.sendFailuresLeft > 0) {
      this.sendFailuresLeft -= 1;
      const { message, code, permanent } = this.sendFailure;
      throw new EdoOperatorError(message, code, permanent);
    }
    if (this.sendDelayMs > 0) await waitUnlessAborted(this.sendDelayMs, signal);
    if (signal.aborted) throw sendTimeout();

    checkLengths(doc);
    const recipient = doc.recipient.toUpperCase();
    if (recipient.includes('NOTFOUND')) {
      throw new EdoOperatorError(`sandbox: no participant ${doc.recipient}`, 'participant_not_found', true);
    }

    const documentId = sandboxDocumentId(doc.jobId);
    const now = this.clock.now();
    const outcome = await this.db.transaction().execute(async (trx) => {
      const row = await recordSendAttempt(trx, {
        jobId: doc.jobId,
        documentId,
        sender: doc.sender,
        recipient: doc.recipient,
        now: now.toISOString(),
      });
      // Thrown inside: the rollback leaves no trace of the refused call.
      if (row.sender !== doc.sender || row.recipient !== doc.recipient) {
        throw new EdoOperatorError('sandbox: job id reused for another document', 'operator_rejected', true);
      }
      if (row.accepted === 1) return { kind: 'accepted' as const, documentId: row.document_id };
      if (recipient.includes('FLAKY') && row.send_attempts <= FLAKY_FAILURES) {
        // Returned, not thrown: the attempt count must commit for the third call to succeed.
        return { kind: 'flaky' as const, attempt: row.send_attempts };
      }
      await markAccepted(trx, doc.jobId);
      const events = scheduleEvents({
        jobId: doc.jobId,
        documentId: row.document_id,
        rejects: recipient.includes('REJECT'),
        sentAt: now,
        deliveryDelayMs: this.deliveryDelayMs,
        decisionDelayMs: this.decisionDelayMs,
      });
      await insertEvents(trx, events.map(toEventRow));
      return { kind: 'accepted' as const, documentId: row.document_id };
    });

    if (outcome.kind === 'flaky') {
      throw new EdoOperatorError(
        `sandbox: operator unavailable (FLAKY recipient, attempt ${outcome.attempt} of ${FLAKY_FAILURES + 1})`,
        'operator_unavailable',
        false,
      );
    }
    return { operatorDocumentId: outcome.documentId, status: 'sent' };
  }

  async fetchEvents(cursor: string | null, limit: number, signal: AbortSignal): Promise<EdoFeedPage> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('sandbox: limit must be a positive integer');
    if (this.feedFailuresLeft > 0) {
      this.feedFailuresLeft -= 1;
      throw new EdoOperatorError('sandbox: injected failure', 'operator_unavailable', false);
    }
    if (signal.aborted) throw new EdoOperatorError('sandbox: the feed read timed out', 'operator_timeout', false);
    const after = cursor === null ? null : parseCursor(cursor);
    // One row beyond the page tells whether more are due now.
    const rows = await listDueEvents(this.db, after, this.clock.now().toISOString(), limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map((row) => JSON.parse(row.body) as EdoEvent),
      nextCursor: last === undefined ? cursor : formatCursor(last),
      hasMore: rows.length > limit,
    };
  }
}

interface ScheduleInput {
  jobId: string;
  documentId: string;
  rejects: boolean;
  sentAt: Date;
  deliveryDelayMs: number;
  decisionDelayMs: number;
}

/**
 * The events a send schedules. Ids are fixed by the document id, so a repeated insert is a
 * no-op, and their `:n:` part keeps the intended order among events with the same `at`.
 */
export function scheduleEvents(input: ScheduleInput): EdoEvent[] {
  const { jobId, documentId } = input;
  const deliveredAt = new Date(input.sentAt.getTime() + input.deliveryDelayMs).toISOString();
  const decidedAt = new Date(
    input.sentAt.getTime() + Math.max(input.decisionDelayMs, input.deliveryDelayMs),
  ).toISOString();
  const base = (eventId: string, at: string) => ({ eventId, jobId, operatorDocumentId: documentId, at });

  const events: EdoEvent[] = [
    { ...base(`${documentId}:1:delivered`, deliveredAt), type: 'status', status: 'delivered', reason: null },
    {
      ...base(`${documentId}:2:receipt`, deliveredAt),
      type: 'link',
      link: {
        operatorDocumentId: `${documentId}-IOP`,
        kind: 'receipt_notice',
        title: 'Извещение о получении',
        number: null,
        date: deliveredAt.slice(0, 10),
      },
    },
  ];
  if (input.rejects) {
    events.push(
      { ...base(`${documentId}:3:decision`, decidedAt), type: 'status', status: 'rejected', reason: SANDBOX_REJECTION_REASON },
      {
        ...base(`${documentId}:4:rejection`, decidedAt),
        type: 'link',
        link: {
          operatorDocumentId: `${documentId}-UOU`,
          kind: 'rejection_notice',
          title: 'Уведомление об уточнении',
          number: null,
          date: decidedAt.slice(0, 10),
        },
      },
    );
  } else {
    events.push({ ...base(`${documentId}:3:decision`, decidedAt), type: 'status', status: 'accepted', reason: null });
  }
  return events;
}

function toEventRow(event: EdoEvent): NewSandboxEvent {
  return {
    id: event.eventId,
    at: event.at,
    job_id: event.jobId ?? '',
    document_id: event.operatorDocumentId,
    body: JSON.stringify(event),
  };
}

/** `${at}|${id}`: opaque to callers. `at` never contains `|`. */
function formatCursor(position: SandboxFeedPosition): string {
  return `${position.at}|${position.id}`;
}

function parseCursor(cursor: string): SandboxFeedPosition {
  const bar = cursor.indexOf('|');
  if (bar <= 0 || bar === cursor.length - 1) {
    throw new EdoOperatorError('sandbox: malformed feed cursor', 'operator_protocol_error', true);
  }
  return { at: cursor.slice(0, bar), id: cursor.slice(bar + 1) };
}

function checkLengths(doc: EdoOutgoingDocument): void {
  const tooLong =
    doc.jobId.length === 0 ||
    doc.jobId.length > MAX_JOB_ID_LENGTH ||
    doc.sender.length === 0 ||
    doc.sender.length > MAX_PARTICIPANT_ID_LENGTH ||
    doc.recipient.length === 0 ||
    doc.recipient.length > MAX_PARTICIPANT_ID_LENGTH;
  if (tooLong) {
    throw new EdoOperatorError(
      `sandbox: job id must have 1–${MAX_JOB_ID_LENGTH} characters and participant ids 1–${MAX_PARTICIPANT_ID_LENGTH}`,
      'operator_rejected',
      true,
    );
  }
}

function defaultInjectedFailure(): Required<SandboxInjectedFailure> {
  return { code: 'operator_unavailable', permanent: false, message: 'sandbox: injected failure' };
}

function sendTimeout(): EdoOperatorError {
  return new EdoOperatorError('sandbox: the send timed out', 'operator_timeout', false);
}

function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(sendTimeout());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(sendTimeout());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
