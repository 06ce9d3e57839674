/**
 * Revoking a document's share links by rotation: every link of the document (buyer, colleague,
 * each recipient) gets a new random token in one transaction, so the old URLs answer 404 at once
 * and the next API response carries the new ones. The document itself is not edited (no new
 * revision, `last_modified_at` unchanged). Portal links are not stored: the document's link
 * epoch moves on in the same transaction, which ends every portal link signed before (the
 * next API response carries new ones). Rotating INVOICING_SECRET ends all of them at once.
 */
import type { Db } from '../../../db/database.js';
import type { ShareLinkRow } from '../../../db/types.js';
import { sortableToken } from '../../../shared/tokens.js';
import * as repo from '../store/portable-documents.js';

export interface RotatedLinks {
  teamId: string;
  publicId: string;
  /** The document's links with their new tokens, in display order. */
  links: ShareLinkRow[];
}

/** Null when no team holds a document with this public id. */
export async function rotateShareLinks(db: Db, publicId: string): Promise<RotatedLinks | null> {
  const teamId = await repo.findDocumentTeam(db, publicId);
  if (teamId === undefined) return null;
  const links = await db.transaction().execute(async (trx) => {
    const current = await repo.listShareLinks(trx, teamId, publicId);
    const rotated: ShareLinkRow[] = [];
    for (const link of current) {
      const token = sortableToken();
      await repo.replaceLinkToken(trx, link, token);
      rotated.push({ ...link, token, last_opened_at: null });
    }
    await repo.advanceLinkEpoch(trx, teamId, publicId);
    return rotated;
  });
  return { teamId, publicId, links };
}
