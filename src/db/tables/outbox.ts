/**
 * The outbox: shared infrastructure (src/db/outbox.ts), its rows written by notifications (e-mails)
 * and edo (sends). Conventions: src/db/types.ts.
 */
import type { Selectable } from 'kysely';

export type OutboxState = 'pending' | 'sending' | 'sent' | 'failed' | 'blocked' | 'superseded';

/**
 * A side effect written in the business transaction and delivered by a worker: today an
 * e-mail of one document revision to one recipient. `idem_key` is unique per team, so a
 * (revision, recipient) is never queued twice.
 */
export interface OutboxTable {
  team_id: string;
  id: string;
  kind: 'email' | 'edo_send';
  public_id: string;
  revision: number;
  /** Order of the recipient within the revision's e-mails. */
  position: number;
  /** The address as given (trimmed). */
  recipient: string;
  /** `${public_id}:${revision}:${recipient lower-cased}`. */
  idem_key: string;
  /** Fixed at enqueue time, so every attempt sends the same Message-ID. */
  message_id: string;
  /** Everything needed to send without re-reading the document (JSON). */
  payload: string;
  state: OutboxState;
  /** Attempts started (counted when claimed, so a crash mid-send still counts). */
  attempts: number;
  max_attempts: number;
  next_attempt_at: string;
  /** Lease: the claimer's token and when its claim lapses. */
  locked_by: string | null;
  locked_until: string | null;
  /** The last SMTP reply or error, or the gate / `invalid_address`. */
  last_error: string | null;
  last_error_code: string | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
  /** The W3C traceparent of the write that queued the row, when tracing is on: its delivery's span continues it. */
  traceparent: string | null;
}

export interface OutboxTables {
  outbox: OutboxTable;
}

export type OutboxRow = Selectable<OutboxTable>;
