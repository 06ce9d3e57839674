/**
 * The events a document write records, inside its transaction (the events module's log that
 * webhooks and the feed read): created or updated, the seller status's move, and the document
 * becoming restricted.
 */
import type { Executor } from '../../../db/database.js';
import type { InvoiceRow } from '../../../db/types.js';
import { recordEvent, type DocumentEventInput } from '../../events/index.js';

/** `invoice.created` of a new document. */
function createdEvent(row: InvoiceRow, now: string): DocumentEventInput<'invoice.created'> {
  return {
    teamId: row.team_id,
    now,
    type: 'invoice.created',
    data: { public_id: row.public_id, revision: row.revision, seller_status: row.seller_status, number: row.number },
  };
}

/** `invoice.restricted`: the document became restricted. */
function restrictedEvent(row: InvoiceRow, now: string): DocumentEventInput<'invoice.restricted'> {
  return {
    teamId: row.team_id,
    now,
    type: 'invoice.restricted',
    data: { public_id: row.public_id, revision: row.revision, reason: row.service_status_reason || 'restricted' },
  };
}

/**
 * The events of a new document, for writing them with its rows (`InvoiceStore.insertNewDocument`):
 * what `recordWriteEvents` writes for it and, with `restriction` (a document written alone: no
 * e-mail planned that could still restrict it), what `recordRestriction` would write after.
 */
export function newDocumentEvents(row: InvoiceRow, now: string, restriction: boolean): DocumentEventInput[] {
  const events: DocumentEventInput[] = [createdEvent(row, now)];
  if (restriction && row.service_status === 'restricted') events.push(restrictedEvent(row, now));
  return events;
}

/** The events of a write (`before` null: a create), in the order they are recorded. */
function writeEvents(before: InvoiceRow | null, after: InvoiceRow, now: string): DocumentEventInput[] {
  if (!before) return [createdEvent(after, now)];
  const teamId = after.team_id;
  const { public_id, revision } = after;
  const events: DocumentEventInput[] = [{ teamId, now, type: 'invoice.updated', data: { public_id, revision, previous_revision: before.revision } }];
  if (before.seller_status !== after.seller_status) {
    events.push({
      teamId,
      now,
      type: 'invoice.status_changed',
      data: { public_id, revision, status: 'seller_status', from: before.seller_status, to: after.seller_status },
    });
  }
  return events;
}

/** `invoice.restricted` when the document became restricted by this write. */
function restrictionEvents(before: InvoiceRow | null, after: InvoiceRow, now: string): DocumentEventInput[] {
  return after.service_status === 'restricted' && before?.service_status !== 'restricted' ? [restrictedEvent(after, now)] : [];
}

/**
 * The events of an update that plans no e-mail (so nothing can restrict it after), for writing
 * them with its rows (`InvoiceStore.updateDocumentAlone`): what `recordWriteEvents` and then
 * `recordRestriction` write for it.
 */
export function quietUpdateEvents(before: InvoiceRow, after: InvoiceRow, now: string): DocumentEventInput[] {
  return [...writeEvents(before, after, now), ...restrictionEvents(before, after, now)];
}

export async function recordWriteEvents(trx: Executor, before: InvoiceRow | null, after: InvoiceRow, now: string): Promise<void> {
  for (const event of writeEvents(before, after, now)) await recordEvent(trx, event);
}

/** After the write's e-mails were planned: the daily quota may have restricted the document. */
export async function recordRestriction(trx: Executor, before: InvoiceRow | null, after: InvoiceRow, now: string): Promise<void> {
  for (const event of restrictionEvents(before, after, now)) await recordEvent(trx, event);
}
