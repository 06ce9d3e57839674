/**
 * The read path's caches: the cached GET detail is byte for byte the response a
 * full rebuild gives (every field but the per-request `api.request_id`), and nothing is ever
 * stale: a PUT, a status change (viewed, paid, e-mail outcome, EDO news) or a tariff change
 * shows on the very next GET, on the node that cached the document and on a second node
 * sharing the database (two app instances on one PostgreSQL database or one SQLite file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentStatusPort, markDocumentViewed, markPaymentReported } from '../../../src/modules/invoices/index.js';
import { threeNodesOnOneDatabase, type TestApp, type ThreeNodes } from '../../helpers/app.js';
import { statementsDuring } from '../../helpers/statements.js';
import { ACME, createOk, put, referenceDoc, simpleDoc } from './write-helpers.js';

let a: TestApp; // caches the detail
let b: TestApp; // a second node on the same database, cache on
let rebuild: TestApp; // a third node with the cache off: every GET built afresh

let nodes: ThreeNodes;

beforeAll(async () => {
  nodes = await threeNodesOnOneDatabase();
  ({ a, b, rebuild } = nodes);
});

afterAll(async () => {
  await nodes?.close();
});

/** The tariff loses and regains the external-share right; `both` (the next GET on each node) shows each at once. */
async function tariffChangeShowsAtOnce(both: () => Promise<Array<Record<string, any>>>): Promise<void> {
  await a.db.db.updateTable('tariffs').set({ external_share: 0 }).where('id', '=', 'basic').execute();
  try {
    for (const body of await both()) expect(body.share_gate.external_share_allowed).toBe(false);
  } finally {
    await a.db.db.updateTable('tariffs').set({ external_share: 1 }).where('id', '=', 'basic').execute();
  }
  for (const body of await both()) expect(body.share_gate.external_share_allowed).toBe(true);
}

async function getRaw(t: TestApp, id: string): Promise<{ body: string; etag: string; type: string }> {
  const res = await t.call({ method: 'GET', url: `/api/v1/invoices/${id}`, headers: ACME });
  expect(res.statusCode).toBe(200);
  return { body: res.body, etag: String(res.headers.etag), type: String(res.headers['content-type']) };
}

/** The per-request field, blanked. */
const withoutRequestId = (body: string) => body.replace(/"request_id":"[^"]*"/, '"request_id":""');

function hits(t: TestApp): number {
  return t.app.invoices.detailCacheStats().hits;
}

/** A's cached answer (asserted to come from the cache) equals a full rebuild's, bytes and headers. */
async function expectCachedEqualsRebuild(id: string): Promise<Record<string, any>> {
  await getRaw(a, id);
  const before = hits(a);
  const cached = await getRaw(a, id);
  expect(hits(a)).toBe(before + 1);
  const fresh = await getRaw(rebuild, id);
  expect(withoutRequestId(cached.body)).toBe(withoutRequestId(fresh.body));
  expect(cached.body).not.toBe(fresh.body); // the request ids differ: per request
  expect(cached.etag).toBe(fresh.etag);
  expect(cached.type).toBe(fresh.type);
  return JSON.parse(cached.body);
}

describe('GET detail from the cache is what a full rebuild answers', () => {
  const BUYER_EDO = '2BM-7736207543-773601001';
  const cases: Array<[string, () => Record<string, unknown>]> = [
    ['VAT on top', () => referenceDoc()],
    ['VAT included', () => simpleDoc('inc', { prices_include_vat: true, items: [{ name: 'A', qty: 3, price: 999.99, vat_pct: 22 }] })],
    [
      'recipients',
      () => ({
        ...referenceDoc(),
        number: 'rcp',
        api_recipients: [
          { email: 'anna@buyer.example', name: 'Анна', position: 'Бухгалтер' },
          { email: 'boss@buyer.example', name: 'Борис' },
        ],
      }),
    ],
    ['EDO', () => simpleDoc('edo', { buyer_edo_id: BUYER_EDO })],
    ['paid', () => simpleDoc('paid', { seller_status: 'paid' })],
    ['cancelled', () => simpleDoc('cancelled', { seller_status: 'cancelled' })],
    ['no QR, custom title, purpose', () => simpleDoc('t', { show_payment_qr: false, document_title: 'Счёт «особый»', purpose: 'Оплата "по договору" \\ 5' })],
  ];
  for (const [name, doc] of cases) {
    it(name, async () => {
      const created = await createOk(a, doc());
      const body = await expectCachedEqualsRebuild(created.public_id);
      expect(body.api.request_id).toBeTruthy();
    });
  }

  it('restricted tariff', async () => {
    const created = await createOk(a, simpleDoc('restricted'));
    await expectCachedEqualsRebuild(created.public_id);
    await a.db.db.updateTable('tariffs').set({ external_share: 0 }).where('id', '=', 'basic').execute();
    try {
      const body = await expectCachedEqualsRebuild(created.public_id);
      expect(body.status.service_status).toBe('restricted');
      expect(body.share_gate.reason).toBe('tariff_external_share_disabled');
    } finally {
      await a.db.db.updateTable('tariffs').set({ external_share: 1 }).where('id', '=', 'basic').execute();
    }
  });

  it('a request host needing JSON escaping is answered right (serialized afresh)', async () => {
    const created = await createOk(a, simpleDoc('host'));
    const headers = { ...ACME, host: 'odd"host' };
    const one = await a.app.inject({ method: 'GET', url: `/api/v1/invoices/${created.public_id}`, headers });
    const two = await rebuild.app.inject({ method: 'GET', url: `/api/v1/invoices/${created.public_id}`, headers });
    expect(one.statusCode).toBe(200);
    expect(one.json().api.request_host).toBe('odd"host');
    expect(withoutRequestId(one.body)).toBe(withoutRequestId(two.body));
  });
});

describe('no stale read, on the same node and on another', () => {
  let id: string;

  /** The next GET on A (which has it cached) and on B (which has it cached too). */
  async function both(): Promise<[Record<string, any>, Record<string, any>]> {
    const [x, y] = [await getRaw(a, id), await getRaw(b, id)];
    return [JSON.parse(x.body), JSON.parse(y.body)];
  }

  beforeAll(async () => {
    id = (await createOk(a, { ...referenceDoc(), number: 'fresh-1', buyer_edo_id: BUYER_EDO_ID })).public_id;
    await both();
    await both(); // both nodes now serve it from their caches
  });

  const BUYER_EDO_ID = '2BM-7736207543-773601001';

  it('a PUT on A shows on the next GET of A and of B', async () => {
    const res = await put(a, id, { invoice: { ...referenceDoc(), number: 'fresh-2', buyer_edo_id: BUYER_EDO_ID } });
    expect(res.statusCode).toBe(200);
    for (const body of await both()) {
      expect(body.invoice.number).toBe('fresh-2');
      expect(body.api.revision).toBe(2);
    }
  });

  it('a PUT on B shows on the next GET of A', async () => {
    const res = await put(b, id, { invoice: { ...referenceDoc(), number: 'fresh-3', buyer_edo_id: BUYER_EDO_ID } });
    expect(res.statusCode).toBe(200);
    for (const body of await both()) expect(body.invoice.number).toBe('fresh-3');
  });

  it('EDO news (the job sent by the worker) shows at once', async () => {
    const [before] = await both();
    expect(before.metadata.edo.status).toBe('queued');
    await b.app.edo.worker.sendDue();
    for (const body of await both()) expect(body.metadata.edo.status).not.toBe('queued');
  });

  it('an e-mail outcome and a delivery show at once', async () => {
    const [before] = await both();
    await documentStatusPort.storeNotificationOutcome(a.db.db, 'acme', id, 3, {
      ...before.notifications,
      revision: 3,
      results: [{ channel: 'email', email: 'buyer@example.com', status: 'sent', reason: '' }],
    });
    await documentStatusPort.onDelivered(a.db.db, 'acme', id);
    for (const body of await both()) {
      expect(body.notifications).not.toEqual(before.notifications);
      expect(body.status.buyer_status).toBe('sent');
    }
  });

  it('viewed, then paid (reported), show at once', async () => {
    expect(await markDocumentViewed(a.db.db, 'acme', id, new Date().toISOString())).toBe(true);
    for (const body of await both()) {
      expect(body.status.buyer_status).toBe('viewed');
      expect(body.metadata.viewed_at).not.toBeNull();
    }
    expect(await markPaymentReported(a.db.db, 'acme', id, new Date().toISOString())).toBe(true);
    for (const body of await both()) expect(body.status.buyer_status).toBe('payment_reported');
  });

  it('the seller marks it paid: the QR goes off at once', async () => {
    const res = await put(a, id, { invoice: { ...referenceDoc(), number: 'fresh-3', buyer_edo_id: BUYER_EDO_ID, seller_status: 'paid' } });
    expect(res.statusCode).toBe(200);
    for (const body of await both()) {
      expect(body.status.seller_status).toBe('paid');
      expect(body.qr).toMatchObject({ enabled: false, reason: 'invoice_paid' });
    }
  });

  it('a tariff change shows at once', async () => {
    await tariffChangeShowsAtOnce(both);
  });
});

describe('no stale read when served by the team\'s change counter alone (no EDO state)', () => {
  let id: string;
  let other: string;
  const versionHits = (t: TestApp) => t.app.invoices.detailCacheStats().versionHits;

  /** The next GET on A and on B (both had it cached), each equal to a full rebuild. */
  async function both(): Promise<[Record<string, any>, Record<string, any>]> {
    const [x, y, fresh] = [await getRaw(a, id), await getRaw(b, id), await getRaw(rebuild, id)];
    expect(withoutRequestId(x.body)).toBe(withoutRequestId(fresh.body));
    expect(withoutRequestId(y.body)).toBe(withoutRequestId(fresh.body));
    expect(x.etag).toBe(fresh.etag);
    expect(y.etag).toBe(fresh.etag);
    return [JSON.parse(x.body), JSON.parse(y.body)];
  }

  /** Both nodes serve it again without reading the document (the counter has not moved). */
  async function servedByCounter(): Promise<void> {
    const [ha, hb] = [versionHits(a), versionHits(b)];
    await both();
    expect(versionHits(a)).toBe(ha + 1);
    expect(versionHits(b)).toBe(hb + 1);
  }

  const recipients = [
    { email: 'anna@buyer.example', name: 'Анна', position: 'Бухгалтер' },
    { email: 'boss@buyer.example', name: 'Борис' },
  ];

  beforeAll(async () => {
    id = (await createOk(a, { ...referenceDoc(), number: 'ctr-1', api_recipients: recipients })).public_id;
    other = (await createOk(a, simpleDoc('ctr-other'))).public_id;
    await both();
    await both();
  });

  it('is served by the counter, byte for byte what a rebuild answers', async () => {
    await servedByCounter();
  });

  it('served by the counter is one statement: the key, team, tariff and counter read together', async () => {
    await getRaw(a, id);
    const before = versionHits(a);
    const texts = await statementsDuring(() => getRaw(a, id));
    expect(versionHits(a)).toBe(before + 1);
    expect(texts).toHaveLength(1);
  });

  it('a PUT on B shows on the next GET of A and of B', async () => {
    await servedByCounter();
    const res = await put(b, id, { invoice: { ...referenceDoc(), number: 'ctr-2', api_recipients: recipients } });
    expect(res.statusCode).toBe(200);
    for (const body of await both()) expect(body.invoice.number).toBe('ctr-2');
    await servedByCounter();
  });

  it('a recipient link changed by SQL alone (no write to the document) shows at once', async () => {
    await servedByCounter();
    const before = JSON.stringify((await both())[0]);
    expect(before).toContain('Анна');
    await a.db.db.updateTable('share_links').set({ name: 'Алла', position: 'Главный бухгалтер' }).where('public_id', '=', id).where('email', '=', 'anna@buyer.example').execute();
    // both() compares each node with the node that rebuilds every answer, byte for byte.
    for (const body of await both()) expect(JSON.stringify(body)).toContain('Главный бухгалтер');
    await a.db.db.updateTable('share_links').set({ sort_order: 99 }).where('public_id', '=', id).where('email', '=', 'anna@buyer.example').execute();
    const [moved] = await both();
    expect(JSON.stringify(moved)).not.toBe(before);
    await servedByCounter();
  });

  it('an e-mail outcome, a delivery, viewed and paid show at once', async () => {
    await servedByCounter();
    const [before] = await both();
    await documentStatusPort.storeNotificationOutcome(a.db.db, 'acme', id, before.api.revision, {
      ...before.notifications,
      revision: before.api.revision,
      results: [{ channel: 'email', email: 'anna@buyer.example', status: 'sent', reason: '' }],
    });
    for (const body of await both()) expect(body.notifications).not.toEqual(before.notifications);
    await servedByCounter();
    await documentStatusPort.onDelivered(a.db.db, 'acme', id);
    for (const body of await both()) expect(body.status.buyer_status).toBe('sent');
    await servedByCounter();
    expect(await markDocumentViewed(b.db.db, 'acme', id, new Date().toISOString())).toBe(true);
    for (const body of await both()) expect(body.status.buyer_status).toBe('viewed');
    await servedByCounter();
    expect(await markPaymentReported(b.db.db, 'acme', id, new Date().toISOString())).toBe(true);
    for (const body of await both()) expect(body.status.buyer_status).toBe('payment_reported');
  });

  it('a write to another document of the team: the same answer, validated by reading it, then by the counter again', async () => {
    await servedByCounter();
    const [before] = await both();
    const [ha, hb] = [hits(a), hits(b)];
    const res = await put(a, other, { invoice: simpleDoc('ctr-other-2') });
    expect(res.statusCode).toBe(200);
    const [va, vb] = [versionHits(a), versionHits(b)];
    const [after] = await both();
    expect(versionHits(a)).toBe(va);
    expect(versionHits(b)).toBe(vb);
    expect(hits(a)).toBe(ha + 1);
    expect(hits(b)).toBe(hb + 1);
    expect({ ...after, api: { ...after.api, request_id: '' } }).toEqual({ ...before, api: { ...before.api, request_id: '' } });
    await servedByCounter();
  });

  it('a tariff change shows at once', async () => {
    await servedByCounter();
    await tariffChangeShowsAtOnce(both);
  });
});

describe('the list from cached items', () => {
  const list = async (t: TestApp, query: string) => {
    const res = await t.call({ method: 'GET', url: `/api/v1/invoices?${query}`, headers: ACME });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return res.body;
  };
  const queries = ['limit=200', 'limit=3&offset=2', 'q=fresh', 'date_from=2026-03-02&date_to=2026-03-02&limit=5', 'limit=1&offset=100000'];

  it('is what a full rebuild answers, byte for byte', async () => {
    for (const q of queries) {
      await list(a, q);
      // The page itself now comes from the page cache (list-cache.test.ts covers it in depth).
      const stats = () => a.app.invoices.detailCacheStats();
      const before = stats().listItemHits + stats().listPageHits;
      const cached = await list(a, q);
      const fresh = await list(rebuild, q);
      expect(cached).toBe(fresh);
      expect(stats().listItemHits + stats().listPageHits).toBeGreaterThan(before);
    }
  });

  it('shows a status change, a PUT and a tariff change on the next request, on both nodes', async () => {
    const created = await createOk(a, simpleDoc('list-fresh-1'));
    const item = async (t: TestApp) => (JSON.parse(await list(t, 'limit=200')).items as Array<Record<string, any>>).find((i) => i.public_id === created.public_id);
    for (const t of [a, b, a, b]) expect((await item(t))?.status.buyer_status).toBe('not_sent');
    await markDocumentViewed(a.db.db, 'acme', created.public_id, new Date().toISOString());
    for (const t of [a, b]) expect((await item(t))?.status.buyer_status).toBe('viewed');
    expect((await put(b, created.public_id, { invoice: simpleDoc('list-fresh-2') })).statusCode).toBe(200);
    for (const t of [a, b]) expect((await item(t))?.number).toBe('list-fresh-2');
    await a.db.db.updateTable('tariffs').set({ external_share: 0 }).where('id', '=', 'basic').execute();
    try {
      for (const t of [a, b]) expect((await item(t))?.status.service_status).toBe('restricted');
      expect(await list(a, 'limit=200')).toBe(await list(rebuild, 'limit=200'));
    } finally {
      await a.db.db.updateTable('tariffs').set({ external_share: 1 }).where('id', '=', 'basic').execute();
    }
  });
});
