/**
 * The columns of `invoices` that e-mail delivery owns: `notifications` (the latest outcome,
 * JSON), `buyer_status` moving from `not_sent` to `sent`, and `service_status` becoming
 * `restricted` when the daily quota stopped the revision's e-mail. Scoped by team.
 */
import type { Executor } from '../../db/database.js';
import type { Notifications } from '../notifications/notification.schemas.js';

const MAX_TRIES = 5;

/**
 * Stores `outcome` unless the stored one describes a later revision. A compare-and-set on the
 * stored text, so the request and workers updating the same document never lose a newer outcome.
 * False when the document is missing or a later revision's outcome is stored.
 */
export async function storeNotificationOutcome(
  db: Executor,
  teamId: string,
  publicId: string,
  revision: number,
  outcome: Notifications,
): Promise<boolean> {
  const next = JSON.stringify(outcome);
  for (let i = 0; i < MAX_TRIES; i++) {
    const current = await db
      .selectFrom('invoices')
      .select('notifications')
      .where('team_id', '=', teamId)
      .where('public_id', '=', publicId)
      .executeTakeFirst();
    if (!current) return false;
    const stored = current.notifications;
    if (stored !== null && storedRevision(stored) > revision) return false;
    if (stored === next) return true;
    let q = db.updateTable('invoices').set({ notifications: next }).where('team_id', '=', teamId).where('public_id', '=', publicId);
    q = stored === null ? q.where('notifications', 'is', null) : q.where('notifications', '=', stored);
    const result = await q.executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) return true;
  }
  return false;
}

function storedRevision(json: string): number {
  try {
    const value = (JSON.parse(json) as { revision?: unknown }).revision;
    return typeof value === 'number' ? value : 0;
  } catch {
    return 0;
  }
}

/** `not_sent` → `sent` after a delivery; a document already viewed or paid keeps its status. */
export async function markBuyerSent(db: Executor, teamId: string, publicId: string): Promise<void> {
  await db
    .updateTable('invoices')
    .set({ buyer_status: 'sent' })
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('buyer_status', '=', 'not_sent')
    .execute();
}

/**
 * `active` → `restricted` with `reason` (operating contract 4, "Statuses": the tariff rule that
 * stopped e-mail). Inside the write's transaction; the next write sets the status afresh.
 */
export async function markRestricted(db: Executor, teamId: string, publicId: string, reason: string): Promise<void> {
  await db
    .updateTable('invoices')
    .set({ service_status: 'restricted', service_status_reason: reason })
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('service_status', '=', 'active')
    .execute();
}
