/**
 * The status columns of `invoices` that delivery and buyer news move (portable SQL). The
 * invoices module is the one writer of the table: notifications and edo reach these through
 * `documentStatusPort` (write/status-port.ts), wired into them by the composition root; sharing
 * calls them through the module's index.
 *
 * E-mail delivery: `notifications` (the latest outcome, JSON), `buyer_status` moving from
 * `not_sent` to `sent` (e-mail or EDO delivery), and `service_status` becoming `restricted` when
 * the daily quota stopped the revision's e-mail. The share pages: the buyer's first view and
 * "I have paid". None of these is a document edit: `last_modified_at`, the revision and the
 * ETag stay (docs/api.md, section 8). Scoped by team.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { Notifications } from '../../notifications/index.js';

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

/**
 * The first open by the buyer or a recipient: `viewed_at` is set once, and `buyer_status`
 * moves to `viewed` from `not_sent` or `sent` (a reported payment is not taken back).
 * True when something changed.
 */
export async function markDocumentViewed(db: Executor, teamId: string, publicId: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('invoices')
    .set({
      viewed_at: sql<string>`coalesce(viewed_at, ${now})`,
      buyer_status: sql<string>`case when buyer_status in ('not_sent', 'sent') then 'viewed' else buyer_status end`,
    })
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where((eb) => eb.or([eb('viewed_at', 'is', null), eb('buyer_status', 'in', ['not_sent', 'sent'])]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The buyer pressed "I have paid": `payment_reported` with the time of the first report (a
 * report is also a view). Not for a paid or cancelled document, whose page has no button.
 * True when the status changed.
 */
export async function markPaymentReported(db: Executor, teamId: string, publicId: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('invoices')
    .set({
      buyer_status: 'payment_reported',
      payment_reported_at: sql<string>`coalesce(payment_reported_at, ${now})`,
      viewed_at: sql<string>`coalesce(viewed_at, ${now})`,
    })
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('seller_status', 'not in', ['paid', 'cancelled'])
    .where('buyer_status', '!=', 'payment_reported')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Moves `changed_at`, the instant of the document's latest change of any kind (the list's
 * `changed_since`): called with every event about the document that no write of this table
 * records already (e-mail outcomes, EDO news, views, payment reports).
 */
export async function touchDocument(db: Executor, teamId: string, publicId: string, now: string): Promise<void> {
  await db.updateTable('invoices').set({ changed_at: now }).where('team_id', '=', teamId).where('public_id', '=', publicId).execute();
}

/**
 * Locks the document's row for the rest of the transaction without changing it (a no-op update):
 * a background transaction that will move the document (EDO news) takes this first, so it locks
 * in the same order as a document update (the document, then its jobs and outbox rows) and the
 * two can never deadlock.
 */
export async function lockDocument(db: Executor, teamId: string, publicId: string): Promise<void> {
  await db
    .updateTable('invoices')
    .set((eb) => ({ changed_at: eb.ref('changed_at') }))
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .execute();
}
