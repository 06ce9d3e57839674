/**
 * Documents for the notification tests, written the way the documents service writes them:
 * the invoice row and its share links, then `enqueue` in the same transaction, then
 * `deliverNow` after commit (the integration the write path makes).
 */
import { dialectOf, type Db } from '../../../src/db/database.js';
import type { InvoiceRow, ShareLinkRow } from '../../../src/db/types.js';
import { newShareLinks } from '../../../src/modules/invoices/model/share-links.js';
import { syncShareLinks } from '../../../src/modules/invoices/write/share-links.js';
import type { InvoiceStore } from '../../../src/modules/invoices/index.js';
import { createStores } from '../../../src/stores.js';
import type { DeliveryReport, NotificationService, PendingNotifications } from '../../../src/modules/notifications/index.js';
import type { LinkBases } from '../../../src/modules/links/index.js';
import { applyBootstrap, parseBootstrap } from '../../../src/modules/teams/bootstrap.js';
import { systemClock } from '../../../src/shared/clock.js';
import { randomToken } from '../../../src/shared/tokens.js';
import { bootstrapFixture } from '../../helpers/fixtures.js';

export const BASES: LinkBases = {
  publicUrl: 'https://inv.example',
  shareUrl: 'https://share.example/s',
  portalUrl: 'https://inv.example/portal',
  secret: 'test-secret-0123456789abcdef0123456789abcdef',
};

/** The invoices store of `db` (one per database handle, as the app has). */
const stores = new WeakMap<Db, InvoiceStore>();
function storeOf(db: Db): InvoiceStore {
  let store = stores.get(db);
  if (store === undefined) {
    store = createStores({ db, dialect: dialectOf(db) }).invoices;
    stores.set(db, store);
  }
  return store;
}

export async function seedTeams(db: Db): Promise<void> {
  await applyBootstrap(db, parseBootstrap(JSON.stringify(bootstrapFixture())), systemClock);
}

export interface DocInput {
  teamId?: string;
  teamLocale?: string;
  tariff?: { emails_per_day: number; external_share: boolean };
  publicId?: string;
  number?: string;
  buyerName?: string;
  buyerEmail?: string;
  sellerName?: string;
  recipients?: Array<{ email: string; name?: string }>;
  manager?: { name?: string; email?: string };
  total?: string;
}

export interface Written {
  publicId: string;
  revision: number;
  links: ShareLinkRow[];
  pending: PendingNotifications;
}

function documentOf(input: DocInput) {
  return {
    number: input.number ?? 'A-17',
    date: '2026-11-28',
    currency: 'RUB',
    seller_status: 'issued',
    seller: { name: input.sellerName ?? 'ООО «Ромашка»', inn: '7707083893' },
    buyer: { name: input.buyerName ?? 'ООО «Покупатель»', ...(input.buyerEmail ? { email: input.buyerEmail } : {}) },
    api_recipients: input.recipients ?? [],
    ...(input.manager ? { manager: input.manager } : {}),
    items: [{ name: 'Работа', qty: 1, price: 1234.5, unit: 'шт', vat_pct: null }],
  };
}

function invoiceRow(teamId: string, publicId: string, revision: number, doc: ReturnType<typeof documentOf>, total: string): InvoiceRow {
  const now = new Date().toISOString();
  return {
    team_id: teamId,
    public_id: publicId,
    revision,
    link_epoch: 0,
    package_public_id: randomToken(16),
    number: doc.number,
    date: doc.date,
    currency: doc.currency,
    direction: 'outgoing',
    seller_org_id: teamId === 'acme' ? 'org-1' : 'b-org',
    seller_inn: doc.seller.inn,
    seller_name: doc.seller.name,
    buyer_inn: null,
    buyer_name: doc.buyer.name,
    search_text: doc.number.toLowerCase(),
    seller_status: 'issued',
    buyer_status: 'not_sent',
    service_status: 'active',
    service_status_reason: '',
    editor_mode: 'api',
    source_type: 'api',
    subtotal: total,
    vat_total: '0.00',
    total,
    public_share_enabled: 1,
    information_system: null,
    seller_edo_id: null,
    buyer_edo_id: null,
    document: JSON.stringify(doc),
    validation: JSON.stringify({ valid: true, errors: [], warnings: [] }),
    notifications: null,
    created_at: now,
    last_modified_at: now,
    created_by_login: null,
    last_modified_by_login: null,
    api_key_id: 101,
    api_key_name: 'erp',
    api_request_host: 'localhost',
    api_created_at: now,
    api_updated_at: null,
    viewed_at: null,
    payment_reported_at: null,
    changed_at: null,
    edo_pending_job: null,
    email_pending: null,
    traceparent: null,
  };
}

function request(input: DocInput, publicId: string, revision: number, links: ShareLinkRow[]) {
  const doc = documentOf(input);
  return {
    teamId: input.teamId ?? 'acme',
    teamLocale: input.teamLocale ?? 'ru',
    tariff: input.tariff ?? { emails_per_day: 50, external_share: true },
    publicId,
    revision,
    document: doc,
    totals: { total: input.total ?? '1234.50' },
    links,
  };
}

/** Create: invoice row, share links and outbox rows in one transaction (no delivery yet). */
export async function createDocument(db: Db, service: NotificationService, input: DocInput = {}): Promise<Written> {
  const teamId = input.teamId ?? 'acme';
  const publicId = input.publicId ?? randomToken(12);
  const doc = documentOf(input);
  const now = new Date().toISOString();
  const links = newShareLinks(teamId, publicId, doc.api_recipients, now);
  const pending = await db.transaction().execute(async (trx) => {
    const store = storeOf(db);
    await store.insertNewDocument(trx, store.prepareNewDocument({ row: invoiceRow(teamId, publicId, 1, doc, input.total ?? '1234.50'), items: [], links, events: [] }));
    return service.enqueue(trx, request(input, publicId, 1, links));
  });
  return { publicId, revision: 1, links, pending };
}

/** Full update of an existing document: next revision, synced links, outbox rows. */
export async function updateDocument(db: Db, service: NotificationService, publicId: string, input: DocInput = {}): Promise<Written> {
  const teamId = input.teamId ?? 'acme';
  const doc = documentOf(input);
  const store = storeOf(db);
  const current = await store.findInvoice(db, teamId, publicId);
  if (!current) throw new Error('no such document');
  const revision = current.revision + 1;
  const now = new Date().toISOString();
  const { links, pending } = await db.transaction().execute(async (trx) => {
    const ok = await store.updateInvoice(trx, teamId, publicId, current.revision, { revision, document: JSON.stringify(doc), last_modified_at: now });
    if (!ok) throw new Error('lost the race');
    const links = await syncShareLinks(store, trx, teamId, publicId, doc.api_recipients, now);
    return { links, pending: await service.enqueue(trx, request(input, publicId, revision, links)) };
  });
  return { publicId, revision, links, pending };
}

/** Create, then the request's bounded attempt. */
export async function createAndDeliver(db: Db, service: NotificationService, input: DocInput = {}): Promise<Written & { report: DeliveryReport }> {
  const written = await createDocument(db, service, input);
  return { ...written, report: await service.deliverNow(written.pending) };
}

export async function storedInvoice(db: Db, teamId: string, publicId: string): Promise<InvoiceRow> {
  const row = await storeOf(db).findInvoice(db, teamId, publicId);
  if (!row) throw new Error('missing document');
  return row;
}

export async function outboxRows(db: Db, publicId: string) {
  return db.selectFrom('outbox').selectAll().where('public_id', '=', publicId).orderBy('revision').orderBy('position').execute();
}
