/**
 * The buyer's first view and "I have paid": the status change and its event in one
 * transaction (issue 15).
 */
import type { Db } from '../../db/database.js';
import { recordEvent } from '../events/index.js';
import { markDocumentViewed, markPaymentReported } from '../invoices/index.js';

async function documentState(trx: Parameters<typeof markDocumentViewed>[0], teamId: string, publicId: string) {
  return trx.selectFrom('invoices').select(['revision', 'buyer_status']).where('team_id', '=', teamId).where('public_id', '=', publicId).executeTakeFirst();
}

export async function recordViewed(db: Db, teamId: string, publicId: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const before = await documentState(trx, teamId, publicId);
    if (!(await markDocumentViewed(trx, teamId, publicId, now)) || !before) return;
    const after = await documentState(trx, teamId, publicId);
    // Only the first view is news: a later open that changed nothing visible records nothing.
    if (before.buyer_status === after?.buyer_status && before.buyer_status !== 'not_sent' && before.buyer_status !== 'sent') return;
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
    await recordEvent(trx, { teamId, type: 'invoice.payment_reported', now, data: { public_id: publicId, revision: state.revision } });
  });
}
