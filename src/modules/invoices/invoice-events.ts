/**
 * The events a document write records, inside its transaction (issue 15): created or updated,
 * the seller status's move, and the document becoming restricted.
 */
import type { Executor } from '../../db/database.js';
import type { InvoiceRow } from '../../db/types.js';
import { recordEvent } from '../events/index.js';

export async function recordWriteEvents(trx: Executor, before: InvoiceRow | null, after: InvoiceRow, now: string): Promise<void> {
  const base = { teamId: after.team_id, now };
  const doc = { public_id: after.public_id, revision: after.revision };
  if (!before) {
    await recordEvent(trx, { ...base, type: 'invoice.created', data: { ...doc, seller_status: after.seller_status, number: after.number } });
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
  const doc = { public_id: after.public_id, revision: after.revision };
  if (after.service_status === 'restricted' && before?.service_status !== 'restricted') {
    await recordEvent(trx, { teamId: after.team_id, now, type: 'invoice.restricted', data: { ...doc, reason: after.service_status_reason || 'restricted' } });
  }
}
