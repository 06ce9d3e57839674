/**
 * SQL of the share links' own events: finding a link by its token and recording opens. The
 * document's status changes (viewed, "I have paid") are written by the invoices module
 * (`markDocumentViewed`, `markPaymentReported`), the one writer of `invoices`.
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
import type { Executor } from '../../db/database.js';
import type { ShareLinkRow } from '../../db/types.js';

/** The link with this token, in whichever team holds it. */
export async function findShareLink(db: Executor, token: string): Promise<ShareLinkRow | undefined> {
  return db.selectFrom('share_links').selectAll().where('token', '=', token).executeTakeFirst();
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

/**
 * An open of a link: when it was last opened (any kind, the colleague link too), unless it was
 * recorded at `notBefore` or later (another node recorded an open within the interval: the
 * statement then changes no row and writes nothing).
 */
export async function recordLinkOpened(
  db: Executor,
  link: Pick<ShareLinkRow, 'team_id' | 'public_id' | 'token'>,
  now: string,
  notBefore: string,
): Promise<void> {
  await db
    .updateTable('share_links')
    .set({ last_opened_at: now })
    .where('team_id', '=', link.team_id)
    .where('public_id', '=', link.public_id)
    .where('token', '=', link.token)
    .where((eb) => eb.or([eb('last_opened_at', 'is', null), eb('last_opened_at', '<', notBefore)]))
    .execute();
}

/** The document's revision and buyer status, read inside a view's or payment report's transaction. */
export async function findBuyerState(
  db: Executor,
  teamId: string,
  publicId: string,
): Promise<{ revision: number; buyer_status: string } | undefined> {
  return db.selectFrom('invoices').select(['revision', 'buyer_status']).where('team_id', '=', teamId).where('public_id', '=', publicId).executeTakeFirst();
}
