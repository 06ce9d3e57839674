/**
 * The documents service: the rules of create, full update, read and list (spec 2–4,
 * contract 4). Owns the transactions; SQL lives in the repository, the response in the view.
 */
import type { Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { groupCommitFor, type GroupCommit } from '../../db/group-commit.js';
import type { Database, InvoiceRow, ShareLinkRow } from '../../db/types.js';
import { ApiError } from '../../shared/errors.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { randomToken } from '../../shared/tokens.js';
import type { EdoService, EdoSync } from '../edo/index.js';
import type { DeliveryReport, NotificationService } from '../notifications/index.js';
import type { LinkBases } from '../links/index.js';
import type { AuthContext } from '../teams/index.js';
import { parseWriteEnvelope, type WriteEnvelope } from './envelope.js';
import { requestHash } from '../../shared/request-hash.js';
import { IdempotencyStore } from './idempotency.js';
import type { InvoiceList, InvoiceRevisionDetail, InvoiceRevisionList, ListQuery, RevisionsQuery } from './invoice-requests.schemas.js';
import { WriteEffects, type QueuedEffects } from './invoice.effects.js';
import { recordRestriction, recordWriteEvents } from './invoice-events.js';
import { buildListItem, buildRevisionDetail, buildRevisionList, DemoDocuments } from './invoice.read.js';
import type { InvoiceDetail, InvoiceWriteResponse } from './invoice.schemas.js';
import { buildInvoiceResponse, etagOf, totalsOf, type ViewContext } from './invoice.view.js';
import type { DocumentTotals } from './totals.js';
import { DetailCache, ListItemCache, type DetailInputs } from './invoice.detail-cache.js';
import { portalExpiry } from '../links/index.js';
import type { WriteOutcome } from './invoice.model.js';
import * as repo from './invoice.repository.js';
import { resolveSeller } from './seller.js';
import { canMoveSellerStatus, isLocked, type SellerStatus } from './statuses.js';
import { syncShareLinks, newShareLinks } from './share-links.js';
import { findTooDeepPath } from './prohibited.js';
import { INVOICE_LIMITS, requisiteWarnings, toApiError, validateInvoice, type NormalizedInvoice, type ValidationIssue } from './validation.js';

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
  itemRows,
  notFound,
  sameDocument,
  storedNotifications,
  type Editor,
  type PreparedWrite,
  type RequestInfo,
  type WriteValues,
} from './invoice.write.js';

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
  /**
   * How many documents keep their serialized GET response (invoice.detail-cache.ts); 0 turns
   * the cache off (every GET builds and serializes afresh). Default 1,000.
   */
  detailCacheSize?: number;
}

const MAX_UPDATE_ATTEMPTS = 5;

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
  private readonly detailCache: DetailCache;
  private readonly listItems: ListItemCache;

  constructor(private readonly deps: InvoiceServiceDeps) {
    this.commits = groupCommitFor(deps.db);
    // A request that died after commit has its e-mails taken over by the worker after the lease.
    this.idempotency = new IdempotencyStore(deps.db, deps.clock, { deliveryLeaseMs: deps.notifications.policy.leaseMs });
    this.demo = new DemoDocuments(deps.bases, deps.demoPublicId);
    this.effects = new WriteEffects({ notifications: deps.notifications, edo: deps.edo });
    this.detailCache = new DetailCache(deps.detailCacheSize ?? 1000);
    // List items are small and many per page: ten per detail entry.
    this.listItems = new ListItemCache((deps.detailCacheSize ?? 1000) * 10);
  }

  async create(auth: AuthContext, body: unknown, info: RequestInfo & { idempotencyKey: string | null }): Promise<WriteOutcome> {
    const envelope = parseWriteEnvelope(body, 'POST');
    if (auth.mode === 'demo') return this.demoWrite(auth, envelope, null, info);
    const live = auth;
    // Validated before the Idempotency-Key hash: a refused document is never hashed, and a body
    // nested too deep is refused before the hash walks it.
    const validated = this.validate(envelope);
    const run = (onCommit?: OnCommit) => this.createLive(live, envelope, validated, info, onCommit);
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
    for (let attempt = 1; ; attempt++) {
      const current = await repo.findInvoice(this.deps.db, auth.teamId, publicId);
      if (!current) throw notFound(publicId);
      if (info.ifMatch && info.ifMatch.trim() !== '*' && !etagMatches(info.ifMatch, current)) {
        throw new ApiError('revision_conflict', {
          details: `If-Match ${info.ifMatch} does not match the current revision ${etagOf(publicId, current.revision)}`,
          document_public_id: publicId,
          document_kind: 'invoice',
        });
      }
      const prepared = await this.prepare(auth, envelope, validated);
      const outcome = await this.updateLive(auth, current, prepared, info, editor);
      if (outcome) return outcome;
      // Another update won the race: with If-Match that is a conflict, without it try again.
      if (info.ifMatch || attempt >= MAX_UPDATE_ATTEMPTS) {
        throw new ApiError('revision_conflict', {
          details: 'the document was changed by another request; read it again and retry',
          document_public_id: publicId,
          document_kind: 'invoice',
        });
      }
    }
  }

  async get(auth: AuthContext, publicId: string, info: RequestInfo): Promise<{ body: InvoiceDetail; etag: string }> {
    if (auth.mode === 'demo') return this.demo.get(auth, publicId, info, this.deps.clock.now());
    const row = await repo.findInvoice(this.deps.db, auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    const links = await repo.listShareLinks(this.deps.db, auth.teamId, publicId);
    const edo = await this.effects.edoState(this.deps.db, row);
    const body = buildInvoiceResponse(row, links, this.viewContext(auth, info, storedNotifications(row), edo));
    return { body, etag: etagOf(publicId, row.revision) };
  }

  /** The detail cache's counters (hits, misses, documents kept). */
  detailCacheStats(): { hits: number; misses: number; size: number; listItemHits: number } {
    return { hits: this.detailCache.hits, misses: this.detailCache.misses, size: this.detailCache.size, listItemHits: this.listItems.hits };
  }

  /**
   * GET detail as JSON text, `serialize` being the route's response serializer: the same bytes
   * as `serialize(get(...).body)`, taken from the detail cache when every input read from the
   * database is what the cached text was built from.
   */
  async getJson(
    auth: AuthContext,
    publicId: string,
    info: RequestInfo,
    serialize: (body: InvoiceDetail) => string,
  ): Promise<{ json: string; etag: string }> {
    if (auth.mode === 'demo') {
      const detail = await this.get(auth, publicId, info);
      return { json: serialize(detail.body), etag: detail.etag };
    }
    // Both reads at once: on PostgreSQL two connections, one round trip of latency.
    const [row, links] = await Promise.all([
      repo.findInvoice(this.deps.db, auth.teamId, publicId),
      repo.listShareLinks(this.deps.db, auth.teamId, publicId),
    ]);
    if (!row) throw notFound(publicId);
    const edo = await this.effects.edoState(this.deps.db, row);
    const etag = etagOf(publicId, row.revision);
    const cache = this.detailCache;
    const now = this.deps.clock.now();
    const inputs: DetailInputs = {
      row,
      links,
      edo,
      keyId: auth.keyId,
      keyName: auth.keyName,
      externalShare: auth.tariff.external_share,
      portalExp: `${portalExpiry('view', now)}/${portalExpiry('edit', now)}`,
    };
    const hit = cache.lookup(inputs, info.host, info.requestId);
    if (hit !== null) return { json: hit, etag };
    const build = (request: RequestInfo) =>
      serialize(buildInvoiceResponse(row, links, { ...this.viewContext(auth, request, storedNotifications(row), edo), now }));
    if (cache.splices(info.host, info.requestId)) {
      const json = cache.store(inputs, build({ host: cache.hostMark, requestId: cache.idMark }), info.host, info.requestId);
      if (json !== null) return { json, etag };
    }
    return { json: build(info), etag };
  }

  async list(auth: AuthContext, query: ListQuery, info: RequestInfo): Promise<InvoiceList> {
    const page = await this.listPage(auth, query, info);
    if ('items' in page) return page;
    return { ...page.envelope, items: page.rows.map((r) => buildListItem(r, this.deps.bases, auth.tariff)) };
  }

  /**
   * The list as JSON text: the same bytes as `serialize.list(list(...))`, with each item's text
   * reused from the list-item cache while the columns read for it are unchanged.
   */
  async listJson(
    auth: AuthContext,
    query: ListQuery,
    info: RequestInfo,
    serialize: { list: (body: InvoiceList) => string; item: (item: InvoiceList['items'][number]) => string },
  ): Promise<string> {
    const page = await this.listPage(auth, query, info);
    if ('items' in page) return serialize.list(page);
    const build = (r: repo.InvoiceListRow) => buildListItem(r, this.deps.bases, auth.tariff);
    const cache = this.listItems;
    const envelope = serialize.list({ ...page.envelope, items: [] });
    const slot = '"items":[]';
    const at = envelope.indexOf(slot);
    if (!cache.enabled || at < 0 || envelope.indexOf(slot, at + 1) >= 0) {
      return serialize.list({ ...page.envelope, items: page.rows.map(build) });
    }
    const teamId = auth.mode === 'live' ? auth.teamId : '';
    const external = auth.tariff.external_share;
    const items = page.rows.map((r) => {
      const row = r as unknown as Record<string, unknown>;
      const hit = cache.get(teamId, row, external);
      if (hit !== null) return hit;
      const json = serialize.item(build(r));
      cache.set(teamId, row, external, json);
      return json;
    });
    return `${envelope.slice(0, at)}"items":[${items.join(',')}]${envelope.slice(at + slot.length)}`;
  }

  /** The list's checks and its rows (or the whole demo list). */
  private async listPage(
    auth: AuthContext,
    query: ListQuery,
    info: RequestInfo,
  ): Promise<InvoiceList | { envelope: Omit<InvoiceList, 'items'>; rows: repo.InvoiceListRow[] }> {
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    // The date-time format admits instants Date cannot hold (a leap second :60).
    if (query.updated_since !== undefined && Number.isNaN(Date.parse(query.updated_since))) {
      throw new ApiError('invalid_query', { details: 'updated_since is not a valid instant' });
    }
    if (query.changed_since !== undefined && Number.isNaN(Date.parse(query.changed_since))) {
      throw new ApiError('invalid_query', { details: 'changed_since is not a valid instant' });
    }
    if (query.date_from && query.date_to && query.date_from > query.date_to) {
      throw new ApiError('invalid_query', { details: 'date_from is after date_to' });
    }
    if (auth.mode === 'demo') return this.demo.list(auth, info, this.deps.clock.now(), { limit, offset });
    const q = query.q?.trim();
    const { rows, total } = await repo.listInvoices(this.deps.db, auth.teamId, {
      q: q === '' ? undefined : q,
      dateFrom: query.date_from,
      dateTo: query.date_to,
      updatedSince: query.updated_since ? new Date(query.updated_since).toISOString() : undefined,
      changedSince: query.changed_since ? new Date(query.changed_since).toISOString() : undefined,
      limit,
      offset,
    });
    return { envelope: { ok: true, total, limit, offset }, rows };
  }

  /** A page of the previous revisions, newest first, without their documents. */
  async revisions(auth: AuthContext, publicId: string, query: RevisionsQuery = {}): Promise<InvoiceRevisionList> {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    if (auth.mode === 'demo') {
      if (publicId !== this.deps.demoPublicId) throw this.demo.notFound(publicId);
      return { ok: true, public_id: publicId, current_revision: 1, total: 0, limit, offset, revisions: [] };
    }
    const row = await repo.findInvoice(this.deps.db, auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    return buildRevisionList(row, await repo.listRevisions(this.deps.db, auth.teamId, publicId, { limit, offset }), limit, offset);
  }

  /** One revision with its document (the current one too); 404 revision_not_found otherwise. */
  async revision(auth: AuthContext, publicId: string, revision: number): Promise<InvoiceRevisionDetail> {
    const unknown = () => new ApiError('revision_not_found', { details: `document ${publicId} has no revision ${revision} (or it is past the retention rule)` });
    if (auth.mode === 'demo') {
      if (publicId !== this.deps.demoPublicId) throw this.demo.notFound(publicId);
      if (revision !== 1) throw unknown();
      return buildRevisionDetail(this.demo.sampleRow().row, null);
    }
    const row = await repo.findInvoice(this.deps.db, auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    if (revision === row.revision) return buildRevisionDetail(row, null);
    const stored = revision < row.revision ? await repo.findRevision(this.deps.db, auth.teamId, publicId, revision) : undefined;
    if (!stored) throw unknown();
    return buildRevisionDetail(row, stored);
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
        : await resolveSeller(this.deps.db, auth.teamId, invoice.seller, auth.tariff.max_organizations);
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
  ): Promise<WriteOutcome> {
    const { invoice } = validated;
    const prepared = await this.prepare(auth, envelope, validated);
    const publicId = invoice.public_id ?? randomToken(16);
    if (invoice.public_id && (await repo.publicIdTaken(this.deps.db, publicId))) throw conflict(publicId);
    const now = isoNow(this.deps.clock);
    const row: InvoiceRow = {
      ...documentRowValues(auth, prepared, publicId, now, invoice.seller_status ?? 'issued', info),
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
    } as InvoiceRow;
    const links = newShareLinks(auth.teamId, publicId, invoice.api_recipients, now);
    let queued: QueuedEffects = { pending: null, edo: null };
    try {
      await this.commits.run(async (trx) => {
        await repo.insertInvoice(trx, row);
        await repo.insertItems(trx, itemRows(auth.teamId, publicId, prepared));
        await repo.insertShareLinks(trx, links);
        await recordWriteEvents(trx, null, row, now);
        queued = await this.effects.enqueue(trx, auth, row, prepared, links);
        await recordRestriction(trx, null, row, now);
        if (onCommit) {
          const report = this.effects.undelivered(row, queued.pending);
          await onCommit(trx, this.outcome(auth, row, links, info, report, await this.effects.edoState(trx, row, queued), { totals: prepared.totals }));
        }
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(publicId);
      throw err;
    }
    const { report, edo } = await this.effects.afterCommit(this.deps.db, row, queued);
    return this.outcome(auth, row, links, info, report, edo, { totals: prepared.totals });
  }

  /** Applies the update if the stored revision is still `current`; null when another update won. */
  private async updateLive(
    auth: Extract<AuthContext, { mode: 'live' }>,
    current: InvoiceRow,
    prepared: PreparedWrite,
    info: RequestInfo,
    editor: Editor,
  ): Promise<WriteOutcome | null> {
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
    const next: InvoiceRow = { ...current, ...values, revision: current.revision + 1, api_updated_at: apiUpdatedAt } as InvoiceRow;
    let links: ShareLinkRow[] = [];
    let queued: QueuedEffects = { pending: null, edo: null };
    const applied = await this.commits.run(async (trx) => {
      const ok = await repo.updateInvoice(trx, auth.teamId, publicId, current.revision, {
        ...values,
        revision: next.revision,
        api_updated_at: apiUpdatedAt,
      });
      if (!ok) return false;
      await repo.insertRevision(trx, {
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
      });
      const keep = this.deps.revisionsKeep ?? 0;
      if (keep > 0) await repo.pruneRevisions(trx, auth.teamId, publicId, current.revision, keep);
      await repo.replaceItems(trx, auth.teamId, publicId, itemRows(auth.teamId, publicId, prepared));
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
    const publicId = pathId ?? invoice.public_id ?? randomToken(16);
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
    written: { demoGuids?: Record<string, string>; totals?: DocumentTotals } = {},
  ): WriteOutcome {
    const ctx = { ...this.viewContext(auth, info, report.notifications, edo, written.demoGuids), ...(written.totals ? { totals: written.totals } : {}) };
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
    return {
      bases: this.deps.bases,
      now: this.deps.clock.now(),
      tariff: auth.tariff,
      caller: { keyId: auth.keyId, keyName: auth.keyName },
      request: info,
      notifications,
      edo,
      ...(demoGuids ? { demo: { guids: demoGuids } } : {}),
    };
  }
}

/** Work done inside the document's transaction (the idempotency record). */
export type OnCommit = (trx: Transaction<Database>, outcome: WriteOutcome) => Promise<void>;

