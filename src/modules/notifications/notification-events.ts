/**
 * `notification.sent` / `notification.failed`, recorded in the transaction that settles the
 * outbox row, so an event exists exactly when the outcome was recorded.
 */
import type { Db, Executor } from '../../db/database.js';
import type { OutboxRow } from '../../db/types.js';
import { recordEvent } from '../events/index.js';

export type EmailSettlement = { sent: true } | { sent: false; code: string; reason: string };

/** Moves the document's `changed_at`: the invoices module's `documentStatusPort.onChanged`. */
export type OnDocumentChanged = (db: Executor, teamId: string, publicId: string, now: string) => Promise<void>;

export async function recordEmailEvent(
  trx: Executor,
  row: Pick<OutboxRow, 'team_id' | 'public_id' | 'revision' | 'recipient'>,
  outcome: EmailSettlement,
  now: string,
  onChanged: OnDocumentChanged,
): Promise<void> {
  await onChanged(trx, row.team_id, row.public_id, now);
  const doc = { public_id: row.public_id, revision: row.revision, recipient: row.recipient.slice(0, 320) };
  if (outcome.sent) await recordEvent(trx, { teamId: row.team_id, type: 'notification.sent', now, data: doc });
  else
    await recordEvent(trx, {
      teamId: row.team_id,
      type: 'notification.failed',
      now,
      data: { ...doc, code: outcome.code.slice(0, 40), reason: outcome.reason.slice(0, 1000) },
    });
}

/** Runs `settle` (a fenced outbox update) and records the event in the same transaction when it applied. */
export async function settleWithEvent(
  db: Db,
  onChanged: OnDocumentChanged,
  row: OutboxRow,
  outcome: EmailSettlement,
  now: string,
  settle: (trx: Executor) => Promise<boolean>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await settle(trx))) return false;
    await recordEmailEvent(trx, row, outcome, now, onChanged);
    return true;
  });
}
