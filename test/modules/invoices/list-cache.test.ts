/**
 * The list's page cache, validated by the team's list version that database
 * triggers move in every writing transaction: a page served from the cache is byte for byte
 * what a node without caches builds, and no kind of change leaves a stale page, on the node
 * that cached it or on a second node sharing the database (three app instances on one SQLite
 * file through separate connections, or on one PostgreSQL database). Also: the exact totals of
 * date ranges from the per-month counters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  documentStatusPort,
  markDocumentViewed,
  markPaymentReported,
  rotateShareLinks,
  touchDocument,
} from '../../../src/modules/invoices/index.js';
import { ListPageCache } from '../../../src/modules/invoices/read/read-caches.js';
import { callerStatementStats } from '../../../src/modules/teams/teams.repository.js';
import { threeNodesOnOneDatabase, type TestApp, type ThreeNodes } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { statementsDuring } from '../../helpers/statements.js';
import { ACME, createOk, put, simpleDoc } from './write-helpers.js';

let a: TestApp; // caches pages
let b: TestApp; // a second node on the same database, caches pages too
let rebuild: TestApp; // caches off: every page built afresh

let nodes: ThreeNodes;

beforeAll(async () => {
  nodes = await threeNodesOnOneDatabase();
  ({ a, b, rebuild } = nodes);
});

afterAll(async () => {
  await nodes?.close();
});

async function list(t: TestApp, query: string): Promise<string> {
  const res = await t.call({ method: 'GET', url: `/api/v1/invoices?${query}`, headers: ACME });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  return res.body;
}

const pageHits = (t: TestApp) => t.app.invoices.detailCacheStats().listPageHits;

const QUERIES = [
  'limit=200',
  'limit=3&offset=1',
  'q=lc-',
  'q=lc-&limit=2&offset=1', // another page of the same filter: its total is kept per version too
  'date_from=2026-03-01&date_to=2026-03-31',
  'date_from=2026-02-15&date_to=2026-04-10&limit=100',
  'changed_since=2020-01-01T00:00:00Z&limit=100',
];

/** Both caching nodes serve every query from their page caches (asserted). */
async function warm(): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  for (const t of [a, b]) {
    for (const q of QUERIES) await list(t, q);
    const before = pageHits(t);
    for (const q of QUERIES) seen.set(q, await list(t, q));
    expect(pageHits(t)).toBe(before + QUERIES.length);
  }
  return seen;
}

/** Every query on both caching nodes answers what the node without caches answers. */
async function expectFresh(): Promise<Map<string, string>> {
  const fresh = new Map<string, string>();
  for (const q of QUERIES) {
    const want = await list(rebuild, q);
    fresh.set(q, want);
    expect(await list(a, q)).toBe(want);
    expect(await list(b, q)).toBe(want);
  }
  return fresh;
}

type Item = Record<string, any>;
const itemOf = (body: string | undefined, id: string): Item | undefined =>
  (JSON.parse(body ?? '{"items":[]}').items as Item[]).find((i) => i.public_id === id);

describe('a cached page is a full rebuild, byte for byte', () => {
  it('for every query shape, demo mode aside', async () => {
    for (let i = 0; i < 4; i++) await createOk(a, simpleDoc(`LC-${i}`, { date: i % 2 ? '2026-03-02' : '2026-02-20' }));
    await warm();
    await expectFresh();
  });
});

describe('a cached page costs one statement', () => {
  it('authentication reads the key, team, tariff and list version together; nothing else is read', async () => {
    await createOk(a, simpleDoc('LC-rt'));
    for (const q of QUERIES) await list(a, q);
    for (const q of QUERIES) {
      const before = pageHits(a);
      const texts = await statementsDuring(() => list(a, q));
      expect(pageHits(a)).toBe(before + 1);
      expect(texts).toHaveLength(1);
    }
  });
});

describe.runIf(usingPostgres())('concurrent misses of one page', () => {
  it('share one build after a change (PostgreSQL: the page is read once), each answered the fresh page', async () => {
    const q = 'limit=200';
    // The statements besides authentication's (on PostgreSQL the lookups of requests that
    // arrive together share one statement: teams.repository.ts `callerLoader`).
    const pageStatements = async (work: () => Promise<unknown>): Promise<number> => {
      const lookups = callerStatementStats.statements;
      const texts = await statementsDuring(work);
      const authentications = callerStatementStats.statements - lookups;
      expect(authentications).toBeGreaterThanOrEqual(1);
      expect(authentications).toBeLessThanOrEqual(10);
      return texts.length - authentications;
    };
    // One miss alone: the page's statements.
    await createOk(b, simpleDoc('LC-flight-0'));
    const alone = await pageStatements(() => list(a, q));
    expect(alone).toBeGreaterThanOrEqual(1);
    await createOk(b, simpleDoc('LC-flight-1'));
    let bodies: string[] = [];
    // Ten requests, one page build.
    expect(
      await pageStatements(async () => {
        bodies = await Promise.all(Array.from({ length: 10 }, () => list(a, q)));
      }),
    ).toBe(alone);
    const fresh = await list(rebuild, q);
    for (const body of bodies) expect(body).toBe(fresh);
  });
});

describe('no stale page after any change, on either node', () => {
  let id: string;

  beforeAll(async () => {
    id = (await createOk(a, simpleDoc('LC-main', { api_recipients: [{ email: 'anna@buyer.example', name: 'Анна' }] }))).public_id;
  });

  /** Warms both nodes, applies `change`, and checks every page against a rebuild; returns the fresh pages. */
  async function after(change: () => Promise<unknown>): Promise<{ before: Map<string, string>; now: Map<string, string> }> {
    const before = await warm();
    await change();
    return { before, now: await expectFresh() };
  }

  it('a create on A, then on B', async () => {
    let r = await after(() => createOk(a, simpleDoc('LC-new-a')));
    expect(JSON.parse(r.now.get('limit=200') ?? '').total).toBe(JSON.parse(r.before.get('limit=200') ?? '').total + 1);
    r = await after(() => createOk(b, simpleDoc('LC-new-b', { date: '2026-03-31' })));
    expect(JSON.parse(r.now.get('date_from=2026-03-01&date_to=2026-03-31') ?? '').total).toBe(
      JSON.parse(r.before.get('date_from=2026-03-01&date_to=2026-03-31') ?? '').total + 1,
    );
  });

  it('a PUT on B (number and date moved to another month)', async () => {
    const r = await after(() => put(b, id, { invoice: simpleDoc('LC-main-2', { date: '2026-04-05' }) }));
    expect(itemOf(r.now.get('limit=200'), id)?.number).toBe('LC-main-2');
    expect(itemOf(r.now.get('date_from=2026-03-01&date_to=2026-03-31'), id)).toBeUndefined();
    expect(itemOf(r.now.get('date_from=2026-02-15&date_to=2026-04-10&limit=100'), id)?.date).toBe('2026-04-05');
  });

  it('viewed, then payment reported', async () => {
    let r = await after(() => markDocumentViewed(a.db.db, 'acme', id, new Date().toISOString()));
    expect(itemOf(r.now.get('limit=200'), id)?.status.buyer_status).toBe('viewed');
    r = await after(() => markPaymentReported(b.db.db, 'acme', id, new Date().toISOString()));
    expect(itemOf(r.now.get('limit=200'), id)?.status.buyer_status).toBe('payment_reported');
  });

  it('paid, and another cancelled (PUTs on A)', async () => {
    const ok = async (res: Promise<{ statusCode: number; body: string }>) => expect((await res).statusCode, (await res).body).toBe(200);
    let r = await after(() => ok(put(a, id, { invoice: simpleDoc('LC-main-2', { date: '2026-04-05', seller_status: 'paid' }) })));
    expect(itemOf(r.now.get('limit=200'), id)?.status.seller_status).toBe('paid');
    const other = (await createOk(a, simpleDoc('LC-cancel'))).public_id;
    r = await after(() => ok(put(a, other, { invoice: simpleDoc('LC-cancel', { seller_status: 'cancelled' }) })));
    expect(itemOf(r.now.get('limit=200'), other)?.status.seller_status).toBe('cancelled');
  });

  it('e-mail news: outcome stored, delivered, restricted by the quota, changed_at moved', async () => {
    const other = (await createOk(a, simpleDoc('LC-mail'))).public_id;
    await after(() =>
      documentStatusPort.storeNotificationOutcome(a.db.db, 'acme', other, 1, {
        revision: 1,
        planned: 1,
        sent: 1,
        failed: 0,
        results: [{ channel: 'email', email: 'buyer@example.com', status: 'sent', reason: '' }],
      } as never),
    );
    let r = await after(() => documentStatusPort.onDelivered(b.db.db, 'acme', other));
    expect(itemOf(r.now.get('limit=200'), other)?.status.buyer_status).toBe('sent');
    r = await after(() => documentStatusPort.markRestricted(a.db.db, 'acme', other, 'emails_per_day_exceeded'));
    expect(itemOf(r.now.get('limit=200'), other)?.status.service_status_reason).toBe('emails_per_day_exceeded');
    const at = '2099-01-01T00:00:00.000Z';
    r = await after(() => touchDocument(b.db.db, 'acme', other, at));
    expect(itemOf(r.now.get('limit=200'), other)?.changed_at).toBe(at);
  });

  it('EDO news from the worker', async () => {
    const edoDoc = (await createOk(a, simpleDoc('LC-edo', { buyer_edo_id: '2BM-7736207543-773601001' }))).public_id;
    const r = await after(() => b.app.edo.worker.sendDue());
    expect(itemOf(r.now.get('limit=200'), edoDoc)?.changed_at).not.toBe(itemOf(r.before.get('limit=200'), edoDoc)?.changed_at);
  });

  it('share links rotated (the buyer URL changes)', async () => {
    const r = await after(() => rotateShareLinks(a.db.db, id));
    expect(itemOf(r.now.get('limit=200'), id)?.invoice_url).not.toBe(itemOf(r.before.get('limit=200'), id)?.invoice_url);
  });

  it('recipients changed by a PUT (links added and removed)', async () => {
    const rcp = (await createOk(a, simpleDoc('LC-rcp', { api_recipients: [{ email: 'anna@buyer.example', name: 'Анна' }] }))).public_id;
    const r = await after(async () => {
      const res = await put(b, rcp, { invoice: simpleDoc('LC-rcp', { api_recipients: [{ email: 'boris@buyer.example', name: 'Борис' }] }) });
      expect(res.statusCode, res.body).toBe(200);
    });
    expect(itemOf(r.now.get('limit=200'), rcp)).toBeDefined();
  });

  it('a tariff change (items restricted), and back', async () => {
    try {
      const r = await after(() => a.db.db.updateTable('tariffs').set({ external_share: 0 }).where('id', '=', 'basic').execute());
      expect(itemOf(r.now.get('limit=200'), id)?.status.service_status).toBe('restricted');
    } finally {
      await a.db.db.updateTable('tariffs').set({ external_share: 1 }).where('id', '=', 'basic').execute();
    }
    const r = await expectFresh();
    expect(itemOf(r.get('limit=200'), id)?.status.service_status).not.toBe('restricted');
  });

  it('a link opened (not in the list) does not move the version', async () => {
    const v = async () => (await a.db.db.selectFrom('team_document_counts').select((eb) => eb.fn.sum<number>('changes').as('v')).where('team_id', '=', 'acme').executeTakeFirstOrThrow()).v;
    const before = Number(await v());
    await a.db.db.updateTable('share_links').set({ last_opened_at: new Date().toISOString() }).where('team_id', '=', 'acme').where('public_id', '=', id).execute();
    expect(Number(await v())).toBe(before);
  });
});

describe('the page cache is bounded', () => {
  it('by bytes, least recently used out first; a page above the entry threshold is not kept', () => {
    const pages = new ListPageCache({ maxBytes: 1000, maxEntryBytes: 500 });
    for (let i = 0; i < 10; i++) pages.set(`k${i}`, 1, Buffer.alloc(300));
    expect(pages.sizeBytes).toBeLessThanOrEqual(1000);
    expect(pages.size).toBe(3);
    expect(pages.get('k0', 1)).toBeNull();
    expect(pages.get('k9', 1)?.length).toBe(300);
    expect(pages.get('k9', 2)).toBeNull(); // another version: not this page
    pages.set('huge', 1, Buffer.alloc(600)); // above the entry threshold: not kept
    expect(pages.get('huge', 1)).toBeNull();
    expect(pages.get('k9', 1)?.length).toBe(300); // and it pushed nothing out
  });

  it('on a node: within its share of INVOICING_READ_CACHE_MB', async () => {
    expect(a.app.invoices.detailCacheStats().listPageBytes).toBeLessThanOrEqual((64 * 1024 * 1024 * 3) / 16);
  });
});
