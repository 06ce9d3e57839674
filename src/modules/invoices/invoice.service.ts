/**
 * The documents service, the module's facade for the routes and the other modules: create and
 * full update (write/), GET, list and revisions (read/), the demo team's dry runs (spec 2–4,
 * contract 4). The SQL is the store's (store/), chosen once by the composition root.
 */
import { ApiError } from '../../shared/errors.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { requestHash } from '../../shared/request-hash.js';
import { sortableToken } from '../../shared/tokens.js';
import type { EdoService } from '../edo/index.js';
import type { NotificationService } from '../notifications/index.js';
import type { LinkBases } from '../links/index.js';
import type { AuthContext } from '../teams/index.js';
import type { InvoiceRevisionDetail, InvoiceRevisionList, ListQuery, RevisionsQuery } from './invoice-requests.schemas.js';
import type { InvoiceDetail } from './invoice.schemas.js';
import { API_EDITOR, documentRowValues, type Editor, type RequestInfo, type WriteValues } from './model/document-row.js';
import type { WriteOutcome } from './model/invoice.model.js';
import { InvoiceReader, type ListSerializers, type ReadCacheBudget } from './read/invoice-reader.js';
import { DemoDocuments } from './read/demo-documents.js';
import { parseWriteEnvelope, type WriteEnvelope } from './rules/envelope.js';
import type { InvoiceStore } from './store/index.js';
import { createDocument } from './write/create-document.js';
import { IdempotencyStore, type ClaimInWrite } from './write/idempotency.js';
import { SellerReferences } from './write/seller-references.js';
import { updateDocument } from './write/update-document.js';
import { prepareWrite, refuseTooDeep, validate, writeOutcome, type OnCommit, type WriteContext } from './write/write-context.js';
import { WriteEffects } from './write/write-effects.js';

export type { Editor, OnCommit, RequestInfo, WriteValues };

export type { WriteOutcome };

export interface InvoiceServiceDeps {
  /** The invoices store of the database in use (src/stores.ts). */
  store: InvoiceStore;
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
  /** The read caches' byte budget and per-entry threshold (read/read-caches.ts); 0 bytes turns them off. */
  readCache?: ReadCacheBudget;
  /** The seller references' byte budget (write/seller-references.ts). */
  referenceCache?: ReadCacheBudget;
}

export class InvoiceService {
  private readonly idempotency: IdempotencyStore;
  private readonly demo: DemoDocuments;
  private readonly writes: WriteContext;
  private readonly reader: InvoiceReader;
  /** The teams' organizations and bank accounts, kept under their catalog version. */
  private readonly sellers: SellerReferences;

  constructor(private readonly deps: InvoiceServiceDeps) {
    const { store } = deps;
    this.sellers = new SellerReferences(store.db, deps.referenceCache);
    // A request that died after commit has its e-mails taken over by the worker after the lease.
    this.idempotency = new IdempotencyStore(store, deps.clock, { deliveryLeaseMs: deps.notifications.policy.leaseMs });
    this.demo = new DemoDocuments(deps.bases, deps.demoPublicId);
    this.writes = {
      store,
      clock: deps.clock,
      bases: deps.bases,
      effects: new WriteEffects({ notifications: deps.notifications, edo: deps.edo }),
      edo: deps.edo,
      revisionsKeep: deps.revisionsKeep ?? 0,
      resolveSeller: (auth, seller) =>
        auth.mode === 'demo'
          ? this.demo.resolveSeller(seller, auth.tariff.max_organizations)
          : this.sellers.resolve(auth.team, seller, auth.tariff.max_organizations),
    };
    this.reader = new InvoiceReader({ store, clock: deps.clock, bases: deps.bases, demoPublicId: deps.demoPublicId, demo: this.demo, edo: deps.edo, readCache: deps.readCache });
  }

  async create(auth: AuthContext, body: unknown, info: RequestInfo & { idempotencyKey: string | null }): Promise<WriteOutcome> {
    const envelope = parseWriteEnvelope(body, 'POST');
    if (auth.mode === 'demo') return this.demoWrite(auth, envelope, null, info);
    const live = auth;
    // Validated before the Idempotency-Key hash: a refused document is never hashed, and a body
    // nested too deep is refused before the hash walks it.
    const validated = validate(envelope);
    const run = (onCommit?: OnCommit, claim?: ClaimInWrite) => createDocument(this.writes, live, envelope, validated, info, onCommit, claim);
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
    const validated = validate(envelope);
    const { invoice } = validated;
    if (invoice.public_id !== undefined && invoice.public_id !== publicId) {
      throw new ApiError('public_id_mismatch', {
        details: `invoice.public_id "${invoice.public_id}" differs from the path "${publicId}"`,
        document_public_id: publicId,
        document_kind: 'invoice',
      });
    }
    return updateDocument(this.writes, auth, publicId, envelope, validated, info, editor);
  }

  /** Reads (get, list, revisions) are the reader's: read/invoice-reader.ts. */
  get(auth: AuthContext, publicId: string, info: RequestInfo): Promise<{ body: InvoiceDetail; etag: string }> {
    return this.reader.get(auth, publicId, info);
  }

  getJson(auth: AuthContext, publicId: string, info: RequestInfo, serialize: (body: InvoiceDetail) => string): Promise<{ json: string | Buffer; etag: string }> {
    return this.reader.getJson(auth, publicId, info, serialize);
  }

  /** The seller reference rows served from this node's cache (tests, diagnostics). */
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

  /** The demo team: the document validated, filled and answered as written, nothing stored or sent. */
  private async demoWrite(auth: Extract<AuthContext, { mode: 'demo' }>, envelope: WriteEnvelope, pathId: string | null, info: RequestInfo): Promise<WriteOutcome> {
    const validated = validate(envelope);
    const { invoice } = validated;
    if (pathId !== null && invoice.public_id !== undefined && invoice.public_id !== pathId) {
      throw new ApiError('public_id_mismatch', { details: `invoice.public_id differs from the path "${pathId}"` });
    }
    const prepared = await prepareWrite(this.writes, auth, envelope, validated);
    const now = isoNow(this.deps.clock);
    const publicId = pathId ?? invoice.public_id ?? sortableToken();
    const base = documentRowValues(auth, prepared, publicId, now, invoice.seller_status ?? 'issued', info);
    const { row, links } = this.demo.dryRunRow(base, publicId, now, invoice.api_recipients);
    // Demo mode sends nothing: every planned e-mail is reported blocked (207).
    const report = envelope.notify ? this.deps.notifications.demoOutcome(publicId, prepared.invoice) : this.writes.effects.undelivered(row, null);
    return writeOutcome(this.writes, auth, row, links, info, report, null, {
      demoGuids: { public_id: publicId, package_public_id: row.package_public_id },
      totals: prepared.totals,
    });
  }
}
