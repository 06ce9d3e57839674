/**
 * The documents service: the rules of create, full update, read and list (spec 2–4,
 * contract 4). Owns the transactions; SQL lives in the repository, the response in the view.
 */
import type { Transaction } from 'kysely';
import { dialectOf, type Db } from '../../db/database.js';
import type { ReadThreads } from '../../db/read-threads.js';
import { isServerError, isUniqueViolation } from '../../db/errors.js';
import { groupCommitFor, type GroupCommit } from '../../db/group-commit.js';
import type { Database, InvoiceRevisionRow, InvoiceRow, ShareLinkRow } from '../../db/types.js';
import { ApiError } from '../../shared/errors.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { randomToken, sortableToken } from '../../shared/tokens.js';
import type { EdoService, EdoSync } from '../edo/index.js';
import type { DeliveryReport, NotificationService } from '../notifications/index.js';
import type { LinkBases } from '../links/index.js';
import type { AuthContext } from '../teams/index.js';
import { parseWriteEnvelope, type WriteEnvelope } from './rules/envelope.js';
import { requestHash } from '../../shared/request-hash.js';
import { IdempotencyStore, type ClaimInWrite } from './write/idempotency.js';
import type { InvoiceList, InvoiceRevisionDetail, InvoiceRevisionList, ListQuery, RevisionsQuery } from './invoice-requests.schemas.js';
import { WriteEffects, type AloneCreate, type QueuedEffects } from './write/write-effects.js';
import { newDocumentEvents, quietUpdateEvents, recordRestriction, recordWriteEvents } from './write/write-events.js';
import { DemoDocuments } from './read/read-views.js';
import type { InvoiceDetail, InvoiceWriteResponse } from './invoice.schemas.js';
import { buildInvoiceResponse, etagOf, totalsOf, type ViewContext } from './view/invoice-view.js';
import type { DocumentTotals } from './rules/totals.js';
import { InvoiceReader, viewContextFor, type ListSerializers, type ReadCacheBudget } from './read/invoice-reader.js';
import type { WriteOutcome } from './model/invoice.model.js';
import * as repo from './store/invoice-repository.js';
import { SellerReferences } from './write/seller-references.js';
import { canMoveSellerStatus, isLocked, type SellerStatus } from './rules/statuses.js';
import { planShareLinkSync, syncShareLinks, newShareLinks } from './write/share-links.js';
import { findTooDeepPath } from './rules/prohibited.js';
import { INVOICE_LIMITS, requisiteWarnings, toApiError, validateInvoice, type NormalizedInvoice, type ValidationIssue } from './rules/validation.js';

/** A document that passed validation, with its warnings. */
interface Validated {
  invoice: NormalizedInvoice;
  warnings: ValidationIssue[];
}
import {
  API_EDITOR,
  conflict,
  documentRowValues,
  editedBy,
  etagMatches,
  invoiceRow,
  lifeOf,
  itemRows,
  notFound,
  sameDocument,
  storedDocument,
  storedNotifications,
  storedValidation,
  type Editor,
  type PreparedWrite,
  type RequestInfo,
  type WriteValues,
} from './write/write-values.js';
import { extended } from '../../shared/objects.js';

export type { Editor, RequestInfo, WriteValues };

export type { WriteOutcome };

export interface InvoiceServiceDeps {
  db: Db;
  clock: Clock;
  bases: LinkBases;
  demoPublicId: string;
  notifications: NotificationService;
  edo: EdoService;
  /**
   * INVOICING_REVISIONS_KEEP: how many previous revisions each document keeps (older ones are
   * deleted in the update's transaction); 0 keeps every one.
   */
  revisionsKeep?: number;
  /** The read caches' byte budget and per-entry threshold (invoice.detail-cache.ts); 0 bytes turns them off. */
  readCache?: ReadCacheBudget;
  /** SQLite: the threads that run searches and deep pages (src/db/read-threads.ts). */
  heavyReads?: ReadThreads | null;
  /** The seller references' byte budget (seller.ts). */
  referenceCache?: ReadCacheBudget;
}

const MAX_UPDATE_ATTEMPTS = 5;

/** What an update read with the row on PostgreSQL: its share links and whether it has EDO jobs. */
interface ReadForUpdate {
  links: ShareLinkRow[];
  hasEdoJobs: boolean;
}

/** updateLive's answer when only the link epoch moved under a one-statement update: read again and retry. */
const READ_AGAIN = Symbol('read again');

/** The document sits at the root or in `invoice`: the body may nest one level more than a document. */
function refuseTooDeep(body: unknown): void {
  const path = findTooDeepPath(body, INVOICE_LIMITS.maxDepth + 1);
  if (path === null) return;
  const message = `${path} is nested deeper than ${INVOICE_LIMITS.maxDepth} levels`;
  throw new ApiError('validation_failed', {
    details: `1 field is invalid: ${message}`,
    missing_fields: [],
    errors: [{ field: path, code: 'too_deep', message }],
  });
}

export class InvoiceService {
  private readonly idempotency: IdempotencyStore;
  private readonly demo: DemoDocuments;
  private readonly effects: WriteEffects;
  /** Document transactions: shared by writes arriving together on SQLite (src/db/group-commit.ts). */
  private readonly commits: GroupCommit;
  private readonly reader: InvoiceReader;
  /** PostgreSQL writes a new document in one statement (repo.insertNewDocumentPg). */
  private readonly onPostgres: boolean;
  /** The teams' organizations and bank accounts, kept under their catalog version (seller.ts). */
  private readonly sellers: SellerReferences;

  constructor(private readonly deps: InvoiceServiceDeps) {
    this.sellers = new SellerReferences(deps.db, deps.referenceCache);
    this.onPostgres = dialectOf(deps.db) === 'postgres';
    this.commits = groupCommitFor(deps.db);
    // A request that died after commit has its e-mails taken over by the worker after the lease.
    this.idempotency = new IdempotencyStore(deps.db, deps.clock, { deliveryLeaseMs: deps.notifications.policy.leaseMs });
    this.demo = new DemoDocuments(deps.bases, deps.demoPublicId);
    this.effects = new WriteEffects({ notifications: deps.notifications, edo: deps.edo });
    this.reader = new InvoiceReader({ ...deps, demo: this.demo, effects: this.effects });
  }

  async create(auth: AuthContext, body: unknown, info: RequestInfo & { idempotencyKey: string | null }): Promise<WriteOutcome> {
    const envelope = parseWriteEnvelope(body, 'POST');
    if (auth.mode === 'demo') return this.demoWrite(auth, envelope, null, info);
    const live = auth;
    // Validated before the Idempotency-Key hash: a refused document is never hashed, and a body
    // nested too deep is refused before the hash walks it.
    const validated = this.validate(envelope);
    const run = (onCommit?: OnCommit, claim?: ClaimInWrite) => this.createLive(live, envelope, validated, info, onCommit, claim);
    if (!info.idempotencyKey) return run();
    refuseTooDeep(body);
    return this.idempotency.run(live.teamId, info.idempotencyKey, requestHash(body), run);
  }

  async update(
    auth: AuthContext,
    publicId: string,
    body: unknown,
    info: RequestInfo & { ifMatch: string | null },
    editor: Editor = API_EDITOR,
  ): Promise<WriteOutcome> {
    const envelope = parseWriteEnvelope(body, 'PUT');
    if (auth.mode === 'demo') {
      if (publicId !== this.deps.demoPublicId) throw this.demo.notFound(publicId);
      return this.demoWrite(auth, envelope, publicId, info);
    }
    const validated = this.validate(envelope);
    const { invoice } = validated;
    if (invoice.public_id !== undefined && invoice.public_id !== publicId) {
      throw new ApiError('public_id_mismatch', {
        details: `invoice.public_id "${invoice.public_id}" differs from the path "${publicId}"`,
        document_public_id: publicId,
        document_kind: 'invoice',
      });
    }
    const lostRace = () =>
      new ApiError('revision_conflict', {
        details: 'the document was changed by another request; read it again and retry',
        document_public_id: publicId,
        document_kind: 'invoice',
      });
    /** The revision the last attempt expected, when its one statement did not apply (READ_AGAIN). */
    let retriedAt: number | null = null;
    for (let attempt = 1; ; attempt++) {
      // PostgreSQL: the row with its links and whether it has EDO jobs, in one statement.
      const read = this.onPostgres ? await repo.findInvoiceForUpdatePg(this.deps.db, auth.teamId, publicId) : null;
      const current = read ? read.row : await repo.findInvoice(this.deps.db, auth.teamId, publicId);
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
      const prepared = await this.prepare(auth, envelope, validated);
      const outcome = await this.updateLive(auth, current, prepared, info, editor, read);
      if (outcome === READ_AGAIN && attempt <= MAX_UPDATE_ATTEMPTS) {
        retriedAt = current.revision;
        continue;
      }
      if (outcome && outcome !== READ_AGAIN) return outcome;
      // Another update won the race: with If-Match that is a conflict, without it try again.
      if (info.ifMatch || attempt >= MAX_UPDATE_ATTEMPTS) throw lostRace();
    }
  }

  /** Reads (get, list, revisions) are the reader's: invoice.reader.ts. */
  get(auth: AuthContext, publicId: string, info: RequestInfo): Promise<{ body: InvoiceDetail; etag: string }> {
    return this.reader.get(auth, publicId, info);
  }

  getJson(auth: AuthContext, publicId: string, info: RequestInfo, serialize: (body: InvoiceDetail) => string): Promise<{ json: string | Buffer; etag: string }> {
    return this.reader.getJson(auth, publicId, info, serialize);
  }

  /** PostgreSQL: the seller reference rows served from this node's cache (tests, diagnostics). */
  sellerReferenceStats(): ReturnType<SellerReferences['stats']> {
    return this.sellers.stats();
  }

  detailCacheStats(): ReturnType<InvoiceReader['detailCacheStats']> {
    return this.reader.detailCacheStats();
  }

  listJson(auth: AuthContext, query: ListQuery, info: RequestInfo, serialize: ListSerializers): Promise<string | Buffer> {
    return this.reader.listJson(auth, query, info, serialize);
  }

  revisions(auth: AuthContext, publicId: string, query: RevisionsQuery = {}): Promise<InvoiceRevisionList> {
    return this.reader.revisions(auth, publicId, query);
  }

  revision(auth: AuthContext, publicId: string, revision: number): Promise<InvoiceRevisionDetail> {
    return this.reader.revision(auth, publicId, revision);
  }

  // ---------------------------------------------------------------------------------------

  private validate(envelope: WriteEnvelope): Validated {
    const result = validateInvoice(envelope.document);
    if (!result.ok) throw toApiError(result);
    return { invoice: result.invoice, warnings: result.warnings };
  }

  private async prepare(auth: AuthContext, envelope: WriteEnvelope, validated: Validated): Promise<PreparedWrite> {
    const { invoice } = validated;
    const resolved =
      auth.mode === 'demo'
        ? this.demo.resolveSeller(invoice.seller, auth.tariff.max_organizations)
        : await this.sellers.resolve(auth.team, invoice.seller, auth.tariff.max_organizations);
    if (envelope.notify && invoice.public_share_enabled === false) {
      throw new ApiError('sending_restricted', {
        details: 'notifications need the share links, but public_share_enabled is false; nothing was saved',
      });
    }
    const filled: NormalizedInvoice = { ...invoice, seller: resolved.seller };
    // Seller warnings describe the requisites as filled in, i.e. as they will be printed; the
    // others do not depend on the seller, so the first validation's stand.
    const others = validated.warnings.filter((w) => !w.field.startsWith('seller.'));
    const warnings = [...others, ...requisiteWarnings(resolved.seller, 'seller')];
    if (invoice.buyer_edo_id !== undefined && !resolved.organization.edo_id) {
      warnings.push({
        field: 'buyer_edo_id',
        code: 'seller_edo_id_missing',
        message: 'the seller organization has no EDO participant id (edo_id), so the document cannot be sent through EDO',
      });
    }
    return { envelope, invoice: filled, resolved, warnings, totals: totalsOf(filled) };
  }

  private async createLive(
    auth: Extract<AuthContext, { mode: 'live' }>,
    envelope: WriteEnvelope,
    validated: Validated,
    info: RequestInfo,
    onCommit?: OnCommit,
    claim?: ClaimInWrite,
  ): Promise<WriteOutcome> {
    const { invoice } = validated;
    const prepared = await this.prepare(auth, envelope, validated);
    const publicId = invoice.public_id ?? sortableToken();
    // Checked early to spare the write; with a claim in the write, its document insert checks it
    // after the claim instead (a retry of a create that took this id meanwhile gets the replay).
    if (invoice.public_id && !claim && (await repo.publicIdTaken(this.deps.db, publicId))) throw conflict(publicId);
    const now = isoNow(this.deps.clock);
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
    await this.refuseOverStorage(auth, row.document);
    const links = newShareLinks(auth.teamId, publicId, invoice.api_recipients, now);
    const items = itemRows(auth.teamId, publicId, prepared);
    // The response is built from these objects rather than from parsing row.document back.
    const stored = {
      document: storedDocument(prepared.invoice, publicId, row.seller_status as SellerStatus),
      validation: storedValidation(prepared.warnings),
    };
    let queued: QueuedEffects = { pending: null, edo: null };
    /** The answer recorded with the document (Idempotency-Key), when nothing happens after the commit. */
    let final: WriteOutcome | null = null;
    const doc = { row, items, links };
    // The effects built before the transaction. SQLite: and the document's statements (the batch
    // holds the write lock only to run them; work inside it costs the writers' turns, measured in
    // docs/performance.md "Session 8"). The e-mails as the daily quota lets them through: if it
    // stops some, the row changes inside and its statements are bound again there.
    const early = this.effects.prepareCreate(auth, row, prepared, links);
    const statements = this.onPostgres ? null : repo.newDocumentStatements(this.deps.db, extended(doc, { events: newDocumentEvents(row, now, false) }));
    // PostgreSQL, no Idempotency-Key, nothing to write besides the document (its effects in its row).
    const alone = this.onPostgres && !onCommit ? this.effects.aloneCreate(auth, early) : null;
    try {
      if (alone && (await this.insertAlone(doc, now, alone))) {
        // One statement that commits alone, one round trip.
        queued = alone.queued;
      } else {
        await this.commits.run(async (trx) => {
          // The Idempotency-Key's claim first (SQLite, idempotency.ts): the document only if it is this request's.
          if (claim) await claim(trx);
          // The e-mails' outcome (and a quota restriction) is written with the row itself.
          const planned = await this.effects.plan(trx, auth, row, prepared, links, early);
          if (this.onPostgres) {
            await repo.insertNewDocumentPg(trx, extended(doc, { events: newDocumentEvents(row, now, false) }));
          } else {
            const bound = statements !== null && !(early && this.effects.rowChanged(early, planned));
            await repo.insertNewDocument(trx, bound ? statements : repo.newDocumentStatements(trx, extended(doc, { events: newDocumentEvents(row, now, false) })));
          }
          queued = await this.effects.enqueue(trx, auth, row, prepared, links, planned, early);
          await recordRestriction(trx, null, row, now);
          if (onCommit) {
            const report = this.effects.undelivered(row, queued.pending);
            const committed = this.outcome(auth, row, links, info, report, await this.effects.edoState(trx, row, queued), { totals: prepared.totals, stored });
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
      if (queued.edo?.jobId) this.deps.edo.notifyQueued();
      return final;
    }
    const { report, edo } = await this.effects.afterCommit(this.deps.db, row, queued);
    return this.outcome(auth, row, links, info, report, edo, { totals: prepared.totals, stored });
  }

  /**
   * PostgreSQL: a new document whose effects are in its row, in its one statement. A statement
   * the server rejected gives back the e-mails its create took from what the node holds
   * (`AloneCreate.undo`); one whose outcome is unknown (the connection was lost) does not.
   */
  private async insertAlone(doc: Omit<repo.NewDocumentRows, 'row' | 'events'> & { row: InvoiceRow }, now: string, alone: AloneCreate): Promise<boolean> {
    try {
      await repo.insertNewDocumentPg(this.deps.db, extended(doc, { events: newDocumentEvents(doc.row, now, true) }));
    } catch (err) {
      if (isServerError(err)) alone.undo();
      throw err;
    }
    return true;
  }

  /**
   * Applies the update if the stored revision is still `current`; null when another update won.
   * `read` (PostgreSQL): the links and EDO jobs read with `current`.
   */
  private async updateLive(
    auth: Extract<AuthContext, { mode: 'live' }>,
    current: InvoiceRow,
    prepared: PreparedWrite,
    info: RequestInfo,
    editor: Editor,
    read: ReadForUpdate | null = null,
  ): Promise<WriteOutcome | null | typeof READ_AGAIN> {
    const publicId = current.public_id;
    const from = current.seller_status as SellerStatus;
    const to = prepared.invoice.seller_status ?? from;
    const now = isoNow(this.deps.clock);
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
      const links = await repo.listShareLinks(this.deps.db, auth.teamId, publicId);
      const edo = await this.effects.edoState(this.deps.db, current);
      return this.outcome(auth, current, links, info, { notifications: storedNotifications(current), status: 200, delivered: false }, edo);
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
    await this.refuseOverStorage(auth, next.document);
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
    // PostgreSQL, nothing to send and no EDO state before or after: one statement, no transaction.
    if (read && !read.hasEdoJobs && !current.edo_pending_job && !current.email_pending && !prepared.envelope.notify && next.buyer_edo_id === null) {
      return this.updateQuietPg(auth, current, next, { set, superseded, prepared, info, now, linksRead: read.links });
    }
    let links: ShareLinkRow[] = [];
    let queued: QueuedEffects = { pending: null, edo: null };
    const applied = await this.commits.run(async (trx) => {
      // First, while the row is still the revision its create recorded the send with.
      await this.effects.writeRecorded(trx, current);
      const ok = await repo.updateInvoice(trx, auth.teamId, publicId, current.revision, set);
      if (!ok) return false;
      await repo.insertRevision(trx, superseded);
      const keep = this.deps.revisionsKeep ?? 0;
      if (keep > 0) await repo.pruneRevisions(trx, auth.teamId, publicId, current.revision, keep);
      const items = itemRows(auth.teamId, publicId, prepared);
      // SQLite: unchanged items are not rewritten (their pages stay out of the WAL). PostgreSQL
      // keeps the DELETE + INSERT here: comparing would cost a round trip more when they changed
      // (its one-statement update compares in SQL).
      if (this.onPostgres) await repo.replaceItems(trx, auth.teamId, publicId, items);
      else await repo.replaceItemsIfChanged(trx, auth.teamId, publicId, items);
      links = await syncShareLinks(trx, auth.teamId, publicId, prepared.invoice.api_recipients, now);
      await recordWriteEvents(trx, current, next, now);
      queued = await this.effects.enqueue(trx, auth, next, prepared, links);
      await recordRestriction(trx, current, next, now);
      return true;
    });
    if (!applied) return null;
    const { report, edo } = await this.effects.afterCommit(this.deps.db, next, queued);
    return this.outcome(auth, next, links, info, report, edo, { totals: prepared.totals });
  }

  /**
   * PostgreSQL: an update that sends nothing (no e-mail asked, no EDO recipient) of a document
   * without EDO jobs, written in one statement outside any transaction (repo.updateDocumentPg):
   * the same rows the transaction of `updateLive` writes, and the same answer (no EDO state,
   * no e-mail outcome). Null when another update won; READ_AGAIN when only the links moved
   * (a rotation) since they were read.
   */
  private async updateQuietPg(
    auth: Extract<AuthContext, { mode: 'live' }>,
    current: InvoiceRow,
    next: InvoiceRow,
    w: {
      set: Partial<InvoiceRow>;
      superseded: InvoiceRevisionRow;
      prepared: PreparedWrite;
      info: RequestInfo;
      now: string;
      linksRead: ShareLinkRow[];
    },
  ): Promise<WriteOutcome | null | typeof READ_AGAIN> {
    const { prepared, now } = w;
    const publicId = current.public_id;
    const links = planShareLinkSync(w.linksRead, auth.teamId, publicId, prepared.invoice.api_recipients, now);
    const keep = this.deps.revisionsKeep ?? 0;
    const result = await repo.updateDocumentPg(this.deps.db, {
      teamId: auth.teamId,
      publicId,
      expectedRevision: current.revision,
      expectedLinkEpoch: current.link_epoch,
      set: w.set,
      revision: w.superseded,
      pruneUpTo: keep > 0 ? current.revision - keep : 0,
      items: itemRows(auth.teamId, publicId, prepared),
      links,
      events: quietUpdateEvents(current, next, now),
    });
    if (result !== 'applied') return result.revision === current.revision ? READ_AGAIN : null;
    return this.outcome(auth, next, links.result, w.info, this.effects.undelivered(next, null), null, { totals: prepared.totals });
  }

  /**
   * Tariff `max_storage_mb`: the team's documents and kept revisions (their stored bytes, kept by
   * database triggers, read with the key) plus this document may not pass it. Checked before the
   * write, so writes running at the same moment may together pass it by their own sizes (at most
   * a few documents); nothing is ever saved past it by one write alone.
   */
  private async refuseOverStorage(auth: Extract<AuthContext, { mode: 'live' }>, document: string): Promise<void> {
    const limit = auth.tariff.max_storage_mb * 1024 * 1024;
    const used = (auth.listState ?? (await repo.listState(this.deps.db, auth.teamId))).storedBytes;
    const adding = Buffer.byteLength(document);
    if (used + adding <= limit) return;
    throw new ApiError('storage_over_tariff_limit', {
      details: `the team's documents and kept revisions take ${used} bytes; this document (${adding} bytes) would pass the tariff's ${auth.tariff.max_storage_mb} MB; nothing was saved`,
    });
  }

  private async demoWrite(
    auth: Extract<AuthContext, { mode: 'demo' }>,
    envelope: WriteEnvelope,
    pathId: string | null,
    info: RequestInfo,
  ): Promise<WriteOutcome> {
    const validated = this.validate(envelope);
    const { invoice } = validated;
    if (pathId !== null && invoice.public_id !== undefined && invoice.public_id !== pathId) {
      throw new ApiError('public_id_mismatch', { details: `invoice.public_id differs from the path "${pathId}"` });
    }
    const prepared = await this.prepare(auth, envelope, validated);
    const now = isoNow(this.deps.clock);
    const publicId = pathId ?? invoice.public_id ?? sortableToken();
    const base = documentRowValues(auth, prepared, publicId, now, invoice.seller_status ?? 'issued', info);
    const { row, links } = this.demo.dryRunRow(base, publicId, now, invoice.api_recipients);
    // Demo mode sends nothing: every planned e-mail is reported blocked (207).
    const report = envelope.notify
      ? this.deps.notifications.demoOutcome(publicId, prepared.invoice)
      : this.effects.undelivered(row, null);
    return this.outcome(auth, row, links, info, report, null, {
      demoGuids: { public_id: publicId, package_public_id: row.package_public_id },
      totals: prepared.totals,
    });
  }

  private outcome(
    auth: AuthContext,
    row: InvoiceRow,
    links: ShareLinkRow[],
    info: RequestInfo,
    report: DeliveryReport,
    edo: EdoSync | null,
    written: { demoGuids?: Record<string, string>; totals?: DocumentTotals; stored?: ViewContext['stored'] } = {},
  ): WriteOutcome {
    // viewContext builds a new object: no copy (a spread copy with properties added afterwards
    // takes V8 11.3's slow path, ~2 µs here; docs/performance.md, "Session 13").
    const ctx: ViewContext = this.viewContext(auth, info, report.notifications, edo, written.demoGuids);
    if (written.totals) ctx.totals = written.totals;
    if (written.stored) ctx.stored = written.stored;
    const body = buildInvoiceResponse(row, links, ctx);
    return { status: report.status, body, etag: etagOf(row.public_id, row.revision), replayed: false };
  }

  private viewContext(
    auth: AuthContext,
    info: RequestInfo,
    notifications: InvoiceWriteResponse['notifications'],
    edo: EdoSync | null,
    demoGuids?: Record<string, string>,
  ): ViewContext {
    return viewContextFor(this.deps.bases, this.deps.clock, auth, info, notifications, edo, demoGuids);
  }
}

/**
 * Work done inside the document's transaction (the idempotency record). `final`: the answer is
 * already the one the request returns (no e-mail attempt follows the commit).
 */
export type OnCommit = (trx: Transaction<Database>, outcome: WriteOutcome, final: boolean) => Promise<void>;

