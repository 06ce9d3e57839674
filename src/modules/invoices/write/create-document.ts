/**
 * A new document (spec 2, contract 4): its row, items, share links and events, its effects
 * (e-mails, EDO send) built before its transaction, and the answer.
 *
 * Two ways to write it, the store deciding which it has:
 * - alone: a document with nothing else to write (its effects, if any, recorded in its own row,
 *   the e-mails' quota taken from what the node holds), no Idempotency-Key: PostgreSQL writes
 *   it in one statement that commits alone, one round trip;
 * - in a transaction (every create on SQLite, in the group commit; on PostgreSQL any other):
 *   the Idempotency-Key's claim, the e-mails' quota, the document, the effects' rows and the
 *   idempotency record, committed together.
 */
import { isServerError, isUniqueViolation } from '../../../db/errors.js';
import { isoNow } from '../../../shared/clock.js';
import { extended } from '../../../shared/objects.js';
import { randomToken, sortableToken } from '../../../shared/tokens.js';
import type { AuthContext } from '../../teams/index.js';
import { conflict, documentRowValues, invoiceRow, itemRows, type RequestInfo } from '../model/document-row.js';
import type { WriteOutcome } from '../model/invoice.model.js';
import { newShareLinks } from '../model/share-links.js';
import type { WriteEnvelope } from '../rules/envelope.js';
import type { ClaimInWrite } from './idempotency.js';
import { prepareWrite, refuseOverStorage, writeOutcome, type OnCommit, type Validated, type WriteContext } from './write-context.js';
import type { AloneCreate, QueuedEffects } from './write-effects.js';
import { newDocumentEvents, recordRestriction } from './write-events.js';

type LiveAuth = Extract<AuthContext, { mode: 'live' }>;

export async function createDocument(
  ctx: WriteContext,
  auth: LiveAuth,
  envelope: WriteEnvelope,
  validated: Validated,
  info: RequestInfo,
  onCommit?: OnCommit,
  claim?: ClaimInWrite,
): Promise<WriteOutcome> {
  const { store, effects } = ctx;
  const { invoice } = validated;
  const prepared = await prepareWrite(ctx, auth, envelope, validated);
  const publicId = invoice.public_id ?? sortableToken();
  // Checked early to spare the write; with a claim in the write, its document insert checks it
  // after the claim instead (a retry of a create that took this id meanwhile gets the replay).
  if (invoice.public_id && !claim && (await store.publicIdTaken(publicId))) throw conflict(publicId);
  const now = isoNow(ctx.clock);
  const row = invoiceRow(documentRowValues(auth, prepared, publicId, now, invoice.seller_status ?? 'issued', info), {
    team_id: auth.teamId,
    public_id: publicId,
    revision: 1,
    link_epoch: 0,
    package_public_id: randomToken(16),
    buyer_status: 'not_sent',
    created_at: now,
    created_by_login: envelope.actorLogin ?? auth.keyName,
    api_created_at: now,
    api_updated_at: null,
    notifications: null,
    viewed_at: null,
    payment_reported_at: null,
    // Set by prepareCreate when the document is to be sent through EDO, or e-mailed by the workers.
    edo_pending_job: null,
    email_pending: null,
  });
  await refuseOverStorage(store, auth, row.document);
  const links = newShareLinks(auth.teamId, publicId, invoice.api_recipients, now);
  const items = itemRows(auth.teamId, publicId, prepared);
  let queued: QueuedEffects = { pending: null, edo: null };
  /** The answer recorded with the document (Idempotency-Key), when nothing happens after the commit. */
  let final: WriteOutcome | null = null;
  const doc = { row, items, links };
  // The effects built before the transaction, and the document made ready (SQLite: its
  // statements bound; the batch holds the write lock only to run them). The e-mails as the
  // daily quota lets them through: if it stops some, the row changes inside and is made ready
  // again there.
  const early = effects.prepareCreate(auth, row, prepared, links);
  const ready = store.prepareNewDocument(extended(doc, { events: newDocumentEvents(row, now, false) }));
  // No Idempotency-Key and nothing to write besides the document: the store may write it alone.
  const alone = onCommit ? null : effects.aloneCreate(auth, early);
  const writing = alone ? store.insertNewDocumentAlone(() => extended(doc, { events: newDocumentEvents(row, now, true) })) : null;
  // Not written alone: what the create took from what the node holds goes back.
  if (writing === null) alone?.undo();
  try {
    if (alone && writing) {
      await aloneWritten(writing, alone);
      queued = alone.queued;
    } else {
      await store.transaction(async (trx) => {
        // The Idempotency-Key's claim first (when the store claims in the write): the document only if it is this request's.
        if (claim) await claim(trx);
        // The e-mails' outcome (and a quota restriction) is written with the row itself.
        const planned = await effects.plan(trx, auth, row, prepared, links, early);
        const changed = effects.rowChanged(early, planned);
        await store.insertNewDocument(trx, changed ? store.prepareNewDocument(extended(doc, { events: newDocumentEvents(row, now, false) })) : ready);
        queued = await effects.enqueue(trx, auth, row, prepared, links, planned, early);
        await recordRestriction(trx, null, row, now);
        if (onCommit) {
          const report = effects.undelivered(row, queued.pending);
          const committed = writeOutcome(ctx, auth, row, links, info, report, await effects.edoState(trx, row, queued), { totals: prepared.totals });
          // No e-mail to attempt: the answer is already final, recorded as such and returned as is
          // (built once; the replay is byte for byte this answer).
          final = queued.pending === null ? committed : null;
          await onCommit(trx, committed, final !== null);
        }
      });
    }
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(publicId);
    throw err;
  }
  if (final !== null) {
    if (queued.edo?.jobId) ctx.edo.notifyQueued();
    return final;
  }
  const { report, edo } = await effects.afterCommit(store.db, row, queued);
  return writeOutcome(ctx, auth, row, links, info, report, edo, { totals: prepared.totals });
}

/**
 * A document written alone: a statement the server rejected gives back the e-mails its create
 * took from what the node holds (`AloneCreate.undo`); one whose outcome is unknown (the
 * connection was lost) does not.
 */
async function aloneWritten(writing: Promise<void>, alone: AloneCreate): Promise<void> {
  try {
    await writing;
  } catch (err) {
    if (isServerError(err)) alone.undo();
    throw err;
  }
}
