/**
 * The read side of the documents service: GET detail (from the per-document cache when every
 * input read from the database is what the cached text was built from), the list, revisions.
 * Split from invoice.service.ts along the read/write seam; the service delegates to it.
 */
import { dialectOf, type Db } from '../../db/database.js';
import { ApiError } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import type { EdoSync } from '../edo/index.js';
import { portalExpiry, type LinkBases } from '../links/index.js';
import type { AuthContext } from '../teams/index.js';
import type { InvoiceList, InvoiceRevisionDetail, InvoiceRevisionList, ListQuery, RevisionsQuery } from './invoice-requests.schemas.js';
import { DetailCache, ListItemCache, type DetailInputs } from './invoice.detail-cache.js';
import type { WriteEffects } from './invoice.effects.js';
import { buildListItem, buildRevisionDetail, buildRevisionList, type DemoDocuments } from './invoice.read.js';
import * as repo from './invoice.repository.js';
import type { InvoiceDetail, InvoiceWriteResponse } from './invoice.schemas.js';
import { buildInvoiceResponse, etagOf, type ViewContext } from './invoice.view.js';
import { notFound, storedNotifications, type RequestInfo } from './invoice.write.js';

export interface InvoiceReaderDeps {
  db: Db;
  clock: Clock;
  bases: LinkBases;
  demoPublicId: string;
  demo: DemoDocuments;
  effects: Pick<WriteEffects, 'edoState'>;
  /** Documents whose serialized GET response is kept (0: off). Default 1,000. */
  detailCacheSize?: number;
}

/** The route's serializers of a list and of one list item. */
export interface ListSerializers {
  list: (body: InvoiceList) => string;
  item: (item: InvoiceList['items'][number]) => string;
}

/** What the response builder needs besides the rows: bases, time, caller, request, outcomes. */
export function viewContextFor(
  bases: LinkBases,
  clock: Clock,
  auth: AuthContext,
  info: RequestInfo,
  notifications: InvoiceWriteResponse['notifications'],
  edo: EdoSync | null,
  demoGuids?: Record<string, string>,
): ViewContext {
  return {
    bases,
    now: clock.now(),
    tariff: auth.tariff,
    caller: { keyId: auth.keyId, keyName: auth.keyName },
    request: info,
    notifications,
    edo,
    ...(demoGuids ? { demo: { guids: demoGuids } } : {}),
  };
}

export class InvoiceReader {
  private readonly demo: DemoDocuments;
  private readonly effects: Pick<WriteEffects, 'edoState'>;
  private readonly detailCache: DetailCache;
  private readonly listItems: ListItemCache;
  private readonly onPostgres: boolean;

  constructor(private readonly deps: InvoiceReaderDeps) {
    this.onPostgres = dialectOf(deps.db) === 'postgres';
    this.demo = deps.demo;
    this.effects = deps.effects;
    this.detailCache = new DetailCache(deps.detailCacheSize ?? 1000);
    // List items are small and many per page: ten per detail entry.
    this.listItems = new ListItemCache((deps.detailCacheSize ?? 1000) * 10);
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
    // PostgreSQL: one statement for both (one round trip); SQLite: both reads, no round trips.
    const { row, links } = this.onPostgres
      ? await repo.findInvoiceWithLinksPg(this.deps.db, auth.teamId, publicId)
      : await Promise.all([repo.findInvoice(this.deps.db, auth.teamId, publicId), repo.listShareLinks(this.deps.db, auth.teamId, publicId)]).then(
          ([row, links]) => ({ row, links }),
        );
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
    serialize: ListSerializers,
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

  private viewContext(auth: AuthContext, info: RequestInfo, notifications: InvoiceWriteResponse['notifications'], edo: EdoSync | null): ViewContext {
    return viewContextFor(this.deps.bases, this.deps.clock, auth, info, notifications, edo);
  }
}
