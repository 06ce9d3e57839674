/**
 * SQL of the share links' own events: finding a link by its token, recording opens, the
 * buyer's "I have paid", and rotating a document's tokens.
 *
 * A share token is the only thing the caller presents, so `findShareLink` is the one query
 * that is not scoped by team up front: the token is unique across teams, and every query after
 * it is scoped by the link's own `team_id`.
 *
 * None of these writes is a document edit: they do not touch `last_modified_at` (what the list's
 * `updated_since` compares), the revision or the ETag, the same as e-mail delivery moving
 * `buyer_status` to `sent`. `last_modified_at` stays "the time of the last write through the API
 * or the portal's edit page" (docs/api.md, section 8).
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { ShareLinkRow } from '../../db/types.js';

/** The link with this token, in whichever team holds it. */
export async function findShareLink(db: Executor, token: string): Promise<ShareLinkRow | undefined> {
  return db.selectFrom('share_links').selectAll().where('token', '=', token).executeTakeFirst();
}

/** The team of the document with this public id (ids are unique across teams), for operator commands. */
export async function findDocumentTeam(db: Executor, publicId: string): Promise<string | undefined> {
  const row = await db.selectFrom('invoices').select('team_id').where('public_id', '=', publicId).executeTakeFirst();
  return row?.team_id;
}

/** The document's link epoch (portal tokens of an older one are refused); undefined when there is no such document. */
export async function findLinkEpoch(db: Executor, teamId: string, publicId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('invoices')
    .select('link_epoch')
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
  return row ? Number(row.link_epoch) : undefined;
}

/** Ends every portal link of the document signed so far (`links rotate`). */
export async function advanceLinkEpoch(db: Executor, teamId: string, publicId: string): Promise<void> {
  await db
    .updateTable('invoices')
    .set((eb) => ({ link_epoch: eb('link_epoch', '+', 1) }))
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .execute();
}

/** Every open of a link: when it was last opened (any kind, the colleague link too). */
export async function recordLinkOpened(db: Executor, link: Pick<ShareLinkRow, 'team_id' | 'public_id' | 'token'>, now: string): Promise<void> {
  await db
    .updateTable('share_links')
    .set({ last_opened_at: now })
    .where('team_id', '=', link.team_id)
    .where('public_id', '=', link.public_id)
    .where('token', '=', link.token)
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

/** Gives one link a new token; the old token then finds nothing. */
export async function replaceLinkToken(db: Executor, link: Pick<ShareLinkRow, 'team_id' | 'public_id' | 'token'>, token: string): Promise<void> {
  await db
    .updateTable('share_links')
    .set({ token, last_opened_at: null })
    .where('team_id', '=', link.team_id)
    .where('public_id', '=', link.public_id)
    .where('token', '=', link.token)
    .execute();
}
