/**
 * `metadata.edo` of a document as its row describes it, for the read and the write side. A
 * document whose send is still recorded in its row answers the state its job will be written
 * with, and a first revision without `buyer_edo_id` has none: no query for these.
 */
import type { Executor } from '../../../db/database.js';
import type { InvoiceRow } from '../../../db/types.js';
import type { EdoService, EdoSync } from '../../edo/index.js';

/** What the EDO module answers a document's state from. */
export type EdoStates = Pick<EdoService, 'recordedState' | 'stateOf'>;

export async function edoStateOf(edo: EdoStates, db: Executor, row: InvoiceRow): Promise<EdoSync | null> {
  // (A record on a later revision is stale, left by a previous-release update: write/recorded-sends.ts.)
  if (row.edo_pending_job && row.revision === 1 && row.buyer_edo_id) {
    const { team_id: teamId, public_id: publicId, seller_edo_id: sellerEdoId, buyer_edo_id: buyerEdoId, created_at: queuedAt } = row;
    return edo.recordedState({ teamId, publicId, revision: 1, sellerEdoId, buyerEdoId, jobId: row.edo_pending_job, queuedAt });
  }
  if (row.revision === 1 && !row.buyer_edo_id) return null;
  return edo.stateOf(db, row.team_id, row.public_id);
}
