/**
 * An update's share links brought in line with its recipients (model/share-links.ts decides
 * which; this writes them in the update's transaction).
 */
import type { Executor } from '../../../db/database.js';
import type { ShareLinkRow } from '../../../db/types.js';
import type { ApiRecipient } from '../model/invoice.model.js';
import { planShareLinkSync } from '../model/share-links.js';
import type { InvoiceStore } from '../store/index.js';

/** Brings the recipient links in line with `recipients`; returns every link of the document. */
export async function syncShareLinks(
  store: InvoiceStore,
  trx: Executor,
  teamId: string,
  publicId: string,
  recipients: readonly ApiRecipient[],
  now: string,
): Promise<ShareLinkRow[]> {
  const existing = await store.listShareLinks(trx, teamId, publicId);
  const plan = planShareLinkSync(existing, teamId, publicId, recipients, now);
  // A kept recipient whose order, name and position are unchanged is not written.
  for (const l of plan.moved) {
    await store.updateShareLinkOrder(trx, teamId, l.token, { sort_order: l.sort_order, name: l.name, position: l.position });
  }
  await store.deleteShareLinks(trx, teamId, publicId, plan.removed);
  await store.insertShareLinks(trx, plan.fresh);
  return plan.result;
}
