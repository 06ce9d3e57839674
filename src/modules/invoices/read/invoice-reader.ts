/**
 * The read side of the documents service: GET detail (from the per-document cache when every
 * input read from the database is what the cached text was built from), the list, revisions.
 * Split from invoice.service.ts along the read/write seam; the service delegates to it.
 */
import { ApiError } from '../../../shared/errors.js';
import type { Clock } from '../../../shared/clock.js';
import type { EdoSync } from '../../edo/index.js';
import { portalExpiry, type LinkBases } from '../../links/index.js';
import type { AuthContext } from '../../teams/index.js';
import type { InvoiceList, InvoiceRevisionDetail, InvoiceRevisionList, ListQuery, RevisionsQuery } from '../invoice-requests.schemas.js';
import { DetailCache, ListItemCache, ListPageCache, ListTotalCache, type DetailInputs } from './read-caches.js';
import { edoStateOf, type EdoStates } from '../model/edo-state.js';
import type { DemoDocuments } from './demo-documents.js';
import { buildListItem, buildRevisionDetail, buildRevisionList } from './list-items.js';
import type { InvoiceListRow, InvoiceStore, ListFilters } from '../store/index.js';
import type { InvoiceDetail, InvoiceWriteResponse } from '../invoice.schemas.js';
import { buildInvoiceResponse, etagOf, type ViewContext } from '../view/invoice-view.js';
import { notFound, storedNotifications, type RequestInfo } from '../model/document-row.js';
import { viewContextFor } from '../view/view-context.js';
import { extended } from '../../../shared/objects.js';

export interface InvoiceReaderDeps {
  store: InvoiceStore;
  clock: Clock;
  bases: LinkBases;
  demoPublicId: string;
  demo: DemoDocuments;
  edo: EdoStates;
  /**
   * The read caches' budget (INVOICING_READ_CACHE_MB, 0: off) and the size above which a
   * response is not kept (INVOICING_CACHE_ENTRY_MAX_KB). Default 64 MB and 256 KB.
   */
  readCache?: ReadCacheBudget;
}

/** The route's serializers of a list and of one list item. */
export interface ListSerializers {
  list: (body: InvoiceList) => string;
  item: (item: InvoiceList['items'][number]) => string;
}

export interface ReadCacheBudget {
  maxBytes: number;
  maxEntryBytes: number;
}

const DEFAULT_READ_CACHE: ReadCacheBudget = { maxBytes: 64 * 1024 * 1024, maxEntryBytes: 256 * 1024 };

/** A share of the read caches' budget: details get half, list items a quarter, pages 3/16, totals 1/16. */
function share(budget: ReadCacheBudget, sixteenths: number): ReadCacheBudget {
  return { maxBytes: Math.floor((budget.maxBytes * sixteenths) / 16), maxEntryBytes: budget.maxEntryBytes };
}

const COMMA = Buffer.from(',');

/** The query's checks and its normalized filters (what the page depends on besides the rows). */
function listFilters(query: ListQuery): ListFilters {
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
  const q = query.q?.trim();
  return {
    q: q === '' ? undefined : q,
    dateFrom: query.date_from,
    dateTo: query.date_to,
    updatedSince: query.updated_since ? new Date(query.updated_since).toISOString() : undefined,
    changedSince: query.changed_since ? new Date(query.changed_since).toISOString() : undefined,
    limit: query.limit ?? 50,
    offset: query.offset ?? 0,
  };
}

/** Everything a page's bytes depend on besides the team's rows. */
function pageKey(teamId: string, externalShare: boolean, f: ListFilters): string {
  return JSON.stringify([teamId, externalShare, f.q ?? null, f.dateFrom ?? null, f.dateTo ?? null, f.updatedSince ?? null, f.changedSince ?? null, f.limit, f.offset]);
}

export class InvoiceReader {
  private readonly demo: DemoDocuments;
  private readonly store: InvoiceStore;
  private readonly detailCache: DetailCache;
  private readonly listItems: ListItemCache;
  private readonly listPages: ListPageCache;
  private readonly listTotals: ListTotalCache;
  /** Page builds under way, by page key and list version: concurrent misses of one page share one build. */
  private readonly pageBuilds = new Map<string, Promise<Buffer>>();

  constructor(private readonly deps: InvoiceReaderDeps) {
    this.store = deps.store;
    this.demo = deps.demo;
    const budget = deps.readCache ?? DEFAULT_READ_CACHE;
    this.detailCache = new DetailCache(share(budget, 8));
    this.listItems = new ListItemCache(share(budget, 4));
    this.listPages = new ListPageCache(share(budget, 3));
    this.listTotals = new ListTotalCache(share(budget, 1));
  }

  async get(auth: AuthContext, publicId: string, info: RequestInfo): Promise<{ body: InvoiceDetail; etag: string }> {
    if (auth.mode === 'demo') return this.demo.get(auth, publicId, info, this.deps.clock.now());
    const { row, links } = await this.store.findWithLinks(auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    const edo = await edoStateOf(this.deps.edo, this.store.db, row);
    const body = buildInvoiceResponse(row, links, this.viewContext(auth, info, storedNotifications(row), edo));
    return { body, etag: etagOf(publicId, row.revision) };
  }

  /** The detail cache's counters (hits, misses, documents kept). */
  detailCacheStats(): {
    hits: number;
    versionHits: number;
    misses: number;
    size: number;
    bytes: number;
    listItemHits: number;
    listItemBytes: number;
    listPageHits: number;
    listPages: number;
    listPageBytes: number;
  } {
    return {
      hits: this.detailCache.hits,
      versionHits: this.detailCache.versionHits,
      misses: this.detailCache.misses,
      size: this.detailCache.size,
      bytes: this.detailCache.sizeBytes,
      listItemHits: this.listItems.hits,
      listItemBytes: this.listItems.sizeBytes,
      listPageHits: this.listPages.hits,
      listPages: this.listPages.size,
      listPageBytes: this.listPages.sizeBytes,
    };
  }

  /**
   * GET detail as JSON (text, or its UTF-8 bytes from the cache), `serialize` being the route's
   * response serializer: the same bytes as `serialize(get(...).body)`, taken from the detail
   * cache when every input read from the database is what the cached text was built from.
   */
  async getJson(
    auth: AuthContext,
    publicId: string,
    info: RequestInfo,
    serialize: (body: InvoiceDetail) => string,
  ): Promise<{ json: string | Buffer; etag: string }> {
    if (auth.mode === 'demo') {
      const detail = await this.get(auth, publicId, info);
      return { json: serialize(detail.body), etag: detail.etag };
    }
    const cache = this.detailCache;
    const now = this.deps.clock.now();
    const caller = {
      keyId: auth.keyId,
      keyName: auth.keyName,
      externalShare: auth.tariff.external_share,
      portalExp: `${portalExpiry('view', now)}/${portalExpiry('edit', now)}`,
    };
    // The team's change counter FIRST (read with the key by authentication, else here: one
    // indexed read): while it is where it was when the cached text was last validated, no write
    // has touched the team's documents or links since, and the document's row, links and EDO
    // state need not be read (a cached GET's CPU −54 % with this check).
    let version: number | null = null;
    if (cache.splices(info.host, info.requestId)) {
      version = (auth.listState ?? (await this.store.listState(auth.teamId))).version;
      const fast = cache.lookupByVersion(auth.teamId, publicId, version, caller, info.host, info.requestId);
      if (fast !== null) return { json: fast.json, etag: etagOf(publicId, fast.row.revision) };
    }
    const { row, links } = await this.store.findWithLinks(auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    const edo = await edoStateOf(this.deps.edo, this.store.db, row);
    const etag = etagOf(publicId, row.revision);
    const inputs: DetailInputs = { row, links, edo, ...caller };
    const hit = cache.lookup(inputs, info.host, info.requestId, version);
    if (hit !== null) return { json: hit, etag };
    const build = (request: RequestInfo) =>
      serialize(buildInvoiceResponse(row, links, { ...this.viewContext(auth, request, storedNotifications(row), edo), now }));
    if (cache.splices(info.host, info.requestId)) {
      const json = cache.store(inputs, build({ host: cache.hostMark, requestId: cache.idMark }), info.host, info.requestId, version);
      if (json !== null) return { json, etag };
    }
    return { json: build(info), etag };
  }

  /**
   * The list as JSON (text, or its UTF-8 bytes): the list's envelope and items serialized by `serialize.list`. A live caller's page
   * is taken whole from the page cache when the team's list version (read first, in this
   * request) is the one it was built at; otherwise it is built with each item's text reused
   * from the list-item cache while the columns read for it are unchanged.
   */
  async listJson(
    auth: AuthContext,
    query: ListQuery,
    info: RequestInfo,
    serialize: ListSerializers,
  ): Promise<string | Buffer> {
    const filters = listFilters(query);
    if (auth.mode !== 'live') return serialize.list(this.demo.list(auth, info, this.deps.clock.now(), filters));
    const pages = this.listPages;
    if (!pages.enabled) return this.buildListJson(auth, filters, serialize, await this.store.listInvoices(auth.teamId, filters));
    // The version BEFORE the page: a page is never kept under a version older than its data.
    // Read by authentication with the key when the route asks (one round trip for a hit).
    const state = auth.listState ?? (await this.store.listState(auth.teamId));
    const key = pageKey(auth.teamId, auth.tariff.external_share, filters);
    const hit = pages.get(key, state.version);
    if (hit !== null) return hit;
    // The same page at the same version being built for another request (after a write, every
    // request in flight misses at once): its bytes are this request's too (a page has no
    // per-request field, and it was read after this version, as this request would read it).
    const flight = `${key}\u0000${state.version}`;
    const pending = this.pageBuilds.get(flight);
    if (pending !== undefined) {
      const shared = await pending.catch(() => null);
      if (shared !== null) return shared;
    }
    const build = this.buildPage(auth, filters, serialize, state, key);
    this.pageBuilds.set(flight, build);
    try {
      return await build;
    } finally {
      if (this.pageBuilds.get(flight) === build) this.pageBuilds.delete(flight);
    }
  }

  /** A page read after `state` (the team's list version), kept in the page cache under it. */
  private async buildPage(
    auth: Extract<AuthContext, { mode: 'live' }>,
    filters: ListFilters,
    serialize: ListSerializers,
    state: { documents: number; version: number; storedBytes: number },
    key: string,
  ): Promise<Buffer> {
    // Another page of the same filters at the same version: its exact total is known.
    const totalKey = pageKey(auth.teamId, false, { ...filters, limit: 0, offset: 0 });
    const total = this.listTotals.get(totalKey, state.version);
    const page = await this.store.listInvoices(auth.teamId, filters, { documents: state.documents, total });
    if (total === undefined) this.listTotals.set(totalKey, state.version, page.total);
    const built = this.buildListJson(auth, filters, serialize, page);
    const body = typeof built === 'string' ? Buffer.from(built) : built;
    this.listPages.set(key, state.version, body);
    return body;
  }

  /**
   * The page's JSON: text, or, when the items come from the list-item cache, UTF-8 bytes put
   * together from each item's bytes (no 30 KB string joined and encoded again for every page
   * built).
   */
  private buildListJson(
    auth: AuthContext,
    filters: ListFilters,
    serialize: ListSerializers,
    page: { rows: InvoiceListRow[]; total: number },
  ): string | Buffer {
    const envelopeOf = { ok: true as const, total: page.total, limit: filters.limit, offset: filters.offset };
    const build = (r: InvoiceListRow) => buildListItem(r, this.deps.bases, auth.tariff);
    const cache = this.listItems;
    const envelope = serialize.list(extended(envelopeOf, { items: [] }));
    const slot = '"items":[]';
    const at = envelope.indexOf(slot);
    if (!cache.enabled || at < 0 || envelope.indexOf(slot, at + 1) >= 0) {
      return serialize.list(extended(envelopeOf, { items: page.rows.map(build) }));
    }
    const teamId = auth.mode === 'live' ? auth.teamId : '';
    const external = auth.tariff.external_share;
    const parts: Buffer[] = [Buffer.from(`${envelope.slice(0, at)}"items":[`)];
    page.rows.forEach((r, i) => {
      const row = r as unknown as Record<string, unknown>;
      let item = cache.get(teamId, row, external);
      if (item === null) {
        item = Buffer.from(serialize.item(build(r)));
        cache.set(teamId, row, external, item);
      }
      if (i > 0) parts.push(COMMA);
      parts.push(item);
    });
    parts.push(Buffer.from(`]${envelope.slice(at + slot.length)}`));
    return Buffer.concat(parts);
  }

  /** A page of the previous revisions, newest first, without their documents. */
  async revisions(auth: AuthContext, publicId: string, query: RevisionsQuery = {}): Promise<InvoiceRevisionList> {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    if (auth.mode === 'demo') {
      if (publicId !== this.deps.demoPublicId) throw this.demo.notFound(publicId);
      return { ok: true, public_id: publicId, current_revision: 1, total: 0, limit, offset, revisions: [] };
    }
    const row = await this.store.findInvoice(this.store.db, auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    return buildRevisionList(row, await this.store.listRevisions(auth.teamId, publicId, { limit, offset }), limit, offset);
  }

  /** One revision with its document (the current one too); 404 revision_not_found otherwise. */
  async revision(auth: AuthContext, publicId: string, revision: number): Promise<InvoiceRevisionDetail> {
    const unknown = () => new ApiError('revision_not_found', { details: `document ${publicId} has no revision ${revision} (or it is past the retention rule)` });
    if (auth.mode === 'demo') {
      if (publicId !== this.deps.demoPublicId) throw this.demo.notFound(publicId);
      if (revision !== 1) throw unknown();
      return buildRevisionDetail(this.demo.sampleRow().row, null);
    }
    const row = await this.store.findInvoice(this.store.db, auth.teamId, publicId);
    if (!row) throw notFound(publicId);
    if (revision === row.revision) return buildRevisionDetail(row, null);
    const stored = revision < row.revision ? await this.store.findRevision(auth.teamId, publicId, revision) : undefined;
    if (!stored) throw unknown();
    return buildRevisionDetail(row, stored);
  }

  private viewContext(auth: AuthContext, info: RequestInfo, notifications: InvoiceWriteResponse['notifications'], edo: EdoSync | null): ViewContext {
    return viewContextFor(this.deps.bases, this.deps.clock, auth, info, notifications, edo);
  }
}
