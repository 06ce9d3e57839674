/**
 * The events a document write records, inside its transaction (issue 15): created or updated,
 * the seller status's move, and the document becoming restricted.
 */
import type { Executor } from '../../db/database.js';
import type { InvoiceRow } from '../../db/types.js';
import { recordEvent, type DocumentEventInput } from '../events/index.js';

/** `invoice.created` of a new document. */
function createdEvent(row: InvoiceRow, now: string): DocumentEventInput<'invoice.created'> {
  const doc = { public_id: row.public_id, revision: row.revision };
  return { teamId: row.team_id, now, type: 'invoice.created', data: { ...doc, seller_status: row.seller_status, number: row.number } };
}

/** `invoice.restricted`: the document became restricted. */
function restrictedEvent(row: InvoiceRow, now: string): DocumentEventInput<'invoice.restricted'> {
  const doc = { public_id: row.public_id, revision: row.revision };
  return { teamId: row.team_id, now, type: 'invoice.restricted', data: { ...doc, reason: row.service_status_reason || 'restricted' } };
}

/**
 * The events of a new document, for writing them in the document's own statement (PostgreSQL,
 * insertNewDocumentPg): what `recordWriteEvents` writes for it and, with `restriction` (no
 * e-mail planned that could still restrict it), what `recordRestriction` would write after.
 */
export function newDocumentEvents(row: InvoiceRow, now: string, restriction: boolean): DocumentEventInput[] {
  const events: DocumentEventInput[] = [createdEvent(row, now)];
  if (restriction && row.service_status === 'restricted') events.push(restrictedEvent(row, now));
  return events;
}

export async function recordWriteEvents(trx: Executor, before: InvoiceRow | null, after: InvoiceRow, now: string): Promise<void> {
  const base = { teamId: after.team_id, now };
  const doc = { public_id: after.public_id, revision: after.revision };
  if (!before) {
    await recordEvent(trx, createdEvent(after, now));
  } else {
    await recordEvent(trx, { ...base, type: 'invoice.updated', data: { ...doc, previous_revision: before.revision } });
    if (before.seller_status !== after.seller_status) {
      await recordEvent(trx, {
        ...base,
        type: 'invoice.status_changed',
        data: { ...doc, status: 'seller_status', from: before.seller_status, to: after.seller_status },
      });
    }
  }
}

/** After the write's e-mails were planned: the daily quota may have restricted the document. */
export async function recordRestriction(trx: Executor, before: InvoiceRow | null, after: InvoiceRow, now: string): Promise<void> {
  if (after.service_status === 'restricted' && before?.service_status !== 'restricted') {
    await recordEvent(trx, restrictedEvent(after, now));
  }
}
