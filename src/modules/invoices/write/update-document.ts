/**
 * A full update of a document (spec 3, contract 4): optimistic on its revision, the previous
 * document kept as a revision, the items and share links brought in line, its effects, and the
 * answer. Two ways to write it, the store deciding which it has:
 * - alone: an update that sends nothing (no e-mail asked, no EDO recipient) of a document
 *   without EDO jobs or records, where the store read what that needs with the row
 *   (`findForUpdate`'s `alone`, PostgreSQL): one statement, no transaction (PUT 178 → 489
 *   req/s, docs/performance.md);
 * - in a transaction (every update on SQLite, in the group commit; on PostgreSQL any other).
 */
import type { InvoiceRevisionRow, InvoiceRow, ShareLinkRow } from '../../../db/types.js';
import { ApiError } from '../../../shared/errors.js';
import { isoNow } from '../../../shared/clock.js';
import { extended } from '../../../shared/objects.js';
import type { AuthContext } from '../../teams/index.js';
import {
  documentRowValues,
  editedBy,
  etagMatches,
  invoiceRow,
  itemRows,
  lifeOf,
  notFound,
  sameDocument,
  storedNotifications,
  type Editor,
  type PreparedWrite,
  type RequestInfo,
} from '../model/document-row.js';
import type { WriteOutcome } from '../model/invoice.model.js';
import { planShareLinkSync } from '../model/share-links.js';
import type { WriteEnvelope } from '../rules/envelope.js';
import { canMoveSellerStatus, isLocked, type SellerStatus } from '../rules/statuses.js';
import type { UpdateAlone } from '../store/index.js';
import { etagOf } from '../view/invoice-view.js';
import { syncShareLinks } from './share-links.js';
import { prepareWrite, refuseOverStorage, writeOutcome, type Validated, type WriteContext } from './write-context.js';
import type { QueuedEffects } from './write-effects.js';
import { quietUpdateEvents, recordRestriction, recordWriteEvents } from './write-events.js';

type LiveAuth = Extract<AuthContext, { mode: 'live' }>;

const MAX_UPDATE_ATTEMPTS = 5;

/** `applyUpdate`'s answer when only the link epoch moved under an update written alone: read again and retry. */
const READ_AGAIN = Symbol('read again');

export async function updateDocument(
  ctx: WriteContext,
  auth: LiveAuth,
  publicId: string,
  envelope: WriteEnvelope,
  validated: Validated,
  info: RequestInfo & { ifMatch: string | null },
  editor: Editor,
): Promise<WriteOutcome> {
  const lostRace = () =>
    new ApiError('revision_conflict', {
      details: 'the document was changed by another request; read it again and retry',
      document_public_id: publicId,
      document_kind: 'invoice',
    });
  /** The revision the last attempt expected, when its statement alone did not apply (READ_AGAIN). */
  let retriedAt: number | null = null;
  for (let attempt = 1; ; attempt++) {
    const { row: current, alone } = await ctx.store.findForUpdate(auth.teamId, publicId);
    if (!current) throw notFound(publicId);
    // Another update won while the last attempt's statement ran: what the transaction's
    // optimistic check answers in that case.
    if (retriedAt !== null && current.revision !== retriedAt && (info.ifMatch || attempt > MAX_UPDATE_ATTEMPTS)) throw lostRace();
    if (info.ifMatch && info.ifMatch.trim() !== '*' && !etagMatches(info.ifMatch, current)) {
      throw new ApiError('revision_conflict', {
        details: `If-Match ${info.ifMatch} does not match the current revision ${etagOf(publicId, current.revision)}`,
        document_public_id: publicId,
        document_kind: 'invoice',
      });
    }
    const prepared = await prepareWrite(ctx, auth, envelope, validated);
    const outcome = await applyUpdate(ctx, auth, current, prepared, info, editor, alone);
    if (outcome === READ_AGAIN && attempt <= MAX_UPDATE_ATTEMPTS) {
      retriedAt = current.revision;
      continue;
    }
    if (outcome && outcome !== READ_AGAIN) return outcome;
    // Another update won the race: with If-Match that is a conflict, without it try again.
    if (info.ifMatch || attempt >= MAX_UPDATE_ATTEMPTS) throw lostRace();
  }
}

/** Applies the update if the stored revision is still `current`'s; null when another update won. */
async function applyUpdate(
  ctx: WriteContext,
  auth: LiveAuth,
  current: InvoiceRow,
  prepared: PreparedWrite,
  info: RequestInfo,
  editor: Editor,
  alone: UpdateAlone | null,
): Promise<WriteOutcome | null | typeof READ_AGAIN> {
  const { store, effects } = ctx;
  const publicId = current.public_id;
  const from = current.seller_status as SellerStatus;
  const to = prepared.invoice.seller_status ?? from;
  const now = isoNow(ctx.clock);
  const values = editedBy(documentRowValues(auth, prepared, publicId, now, to, info), editor, current);
  const apiUpdatedAt = editor.mode === 'api' ? now : current.api_updated_at;
  if (isLocked(from)) {
    if (to !== from || !sameDocument(values.document, current.document)) {
      throw new ApiError('document_locked', {
        details: `the document is ${from} and accepts no other change`,
        document_public_id: publicId,
        document_kind: 'invoice',
      });
    }
    // The same document again: nothing to change, and a locked document takes no new revision
    // (nor a new modifier), so the answer is the document as it is.
    const links = await store.listShareLinks(store.db, auth.teamId, publicId);
    const edo = await effects.edoState(store.db, current);
    return writeOutcome(ctx, auth, current, links, info, { notifications: storedNotifications(current), status: 200, delivered: false }, edo);
  }
  if (!canMoveSellerStatus(from, to)) {
    throw new ApiError('invalid_status_transition', {
      details: `seller_status cannot move from ${from} to ${to}`,
      document_public_id: publicId,
      document_kind: 'invoice',
    });
  }
  // What its create recorded (an EDO send, e-mails) is written in the update's transaction below.
  const next = invoiceRow(values, { ...lifeOf(current), revision: current.revision + 1, api_updated_at: apiUpdatedAt, edo_pending_job: null, email_pending: null });
  // The previous document stays as a revision: the new one adds its whole size.
  await refuseOverStorage(store, auth, next.document);
  const set = extended(values, {
    // An unchanged date is left out of the SET: SQLite then leaves the list index
    // (team_id, date, created_at, public_id) and the month-count trigger alone.
    date: values.date === current.date ? undefined : values.date,
    revision: next.revision,
    api_updated_at: apiUpdatedAt,
  });
  // The document as it was, kept as a revision.
  const superseded: InvoiceRevisionRow = {
    team_id: auth.teamId,
    public_id: publicId,
    revision: current.revision,
    document: current.document,
    seller_status: current.seller_status,
    total: current.total,
    editor_mode: current.editor_mode,
    modified_at: current.last_modified_at,
    modified_by_login: current.last_modified_by_login,
    api_key_id: current.api_key_id,
    superseded_at: now,
  };
  // Nothing to send and no EDO state before or after: one statement, where the store writes so.
  if (alone && !alone.hasEdoJobs && !current.edo_pending_job && !current.email_pending && !prepared.envelope.notify && next.buyer_edo_id === null) {
    return updateAlone(ctx, auth, current, next, { set, superseded, prepared, info, now, linksRead: alone.links });
  }
  let links: ShareLinkRow[] = [];
  let queued: QueuedEffects = { pending: null, edo: null };
  const applied = await store.transaction(async (trx) => {
    // First, while the row is still the revision its create recorded the send with.
    await effects.writeRecorded(trx, current);
    const ok = await store.updateInvoice(trx, auth.teamId, publicId, current.revision, set);
    if (!ok) return false;
    await store.insertRevision(trx, superseded);
    if (ctx.revisionsKeep > 0) await store.pruneRevisions(trx, auth.teamId, publicId, current.revision, ctx.revisionsKeep);
    await store.rewriteItems(trx, auth.teamId, publicId, itemRows(auth.teamId, publicId, prepared));
    links = await syncShareLinks(store, trx, auth.teamId, publicId, prepared.invoice.api_recipients, now);
    await recordWriteEvents(trx, current, next, now);
    queued = await effects.enqueue(trx, auth, next, prepared, links);
    await recordRestriction(trx, current, next, now);
    return true;
  });
  if (!applied) return null;
  const { report, edo } = await effects.afterCommit(store.db, next, queued);
  return writeOutcome(ctx, auth, next, links, info, report, edo, { totals: prepared.totals });
}

/**
 * An update that sends nothing, written alone (`InvoiceStore.updateDocumentAlone`): the same
 * rows the transaction of `applyUpdate` writes, and the same answer (no EDO state, no e-mail
 * outcome). Null when another update won; READ_AGAIN when only the links moved (a rotation)
 * since they were read.
 */
async function updateAlone(
  ctx: WriteContext,
  auth: LiveAuth,
  current: InvoiceRow,
  next: InvoiceRow,
  w: { set: Partial<InvoiceRow>; superseded: InvoiceRevisionRow; prepared: PreparedWrite; info: RequestInfo; now: string; linksRead: ShareLinkRow[] },
): Promise<WriteOutcome | null | typeof READ_AGAIN> {
  const { prepared, now } = w;
  const publicId = current.public_id;
  const links = planShareLinkSync(w.linksRead, auth.teamId, publicId, prepared.invoice.api_recipients, now);
  const result = await ctx.store.updateDocumentAlone({
    teamId: auth.teamId,
    publicId,
    expectedRevision: current.revision,
    expectedLinkEpoch: current.link_epoch,
    set: w.set,
    revision: w.superseded,
    pruneUpTo: ctx.revisionsKeep > 0 ? current.revision - ctx.revisionsKeep : 0,
    items: itemRows(auth.teamId, publicId, prepared),
    links,
    events: quietUpdateEvents(current, next, now),
  });
  if (result !== 'applied') return result.revision === current.revision ? READ_AGAIN : null;
  return writeOutcome(ctx, auth, next, links.result, w.info, ctx.effects.undelivered(next, null), null, { totals: prepared.totals });
}
