/**
 * The buyer's first view and "I have paid": the status change and its event in one
 * transaction (issue 15).
 */
import type { Db } from '../../db/database.js';
import { recordEvent } from '../events/index.js';
import { findBuyerState as documentState } from './sharing.repository.js';
import { markDocumentViewed, markPaymentReported, touchDocument } from '../invoices/index.js';


export async function recordViewed(db: Db, teamId: string, publicId: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const before = await documentState(trx, teamId, publicId);
    if (!(await markDocumentViewed(trx, teamId, publicId, now)) || !before) return;
    const after = await documentState(trx, teamId, publicId);
    // Only the first view is news: a later open that changed nothing visible records nothing.
    if (before.buyer_status === after?.buyer_status && before.buyer_status !== 'not_sent' && before.buyer_status !== 'sent') return;
    await touchDocument(trx, teamId, publicId, now);
    await recordEvent(trx, {
      teamId,
      type: 'invoice.viewed',
      now,
      data: { public_id: publicId, revision: before.revision, buyer_status: after?.buyer_status ?? 'viewed' },
    });
  });
}

export async function recordPaymentReported(db: Db, teamId: string, publicId: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await markPaymentReported(trx, teamId, publicId, now))) return;
    const state = await documentState(trx, teamId, publicId);
    if (!state) return;
    await touchDocument(trx, teamId, publicId, now);
    await recordEvent(trx, { teamId, type: 'invoice.payment_reported', now, data: { public_id: publicId, revision: state.revision } });
  });
}
