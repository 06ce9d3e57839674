/** Demo mode (contract 4, "Demo mode"): the published token answers in full and stores nothing. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { countRows, createOk, referenceDoc, simpleDoc } from './write-helpers.js';

const DEMO = { 'x-api-key': 'demo-token' };
const DEMO_ID = 'demo-invoice';
const TABLES = ['invoices', 'invoice_items', 'share_links', 'invoice_revisions', 'idempotency_keys'] as const;

describe('demo mode', () => {
  let t: TestApp;
  let realDoc: Record<string, any>;

  /** Rows of every table a write could touch (the outbox too, once it exists). */
  async function snapshot(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = await countRows(t, table);
    try {
      const row = await sql<{ n: number | string }>`select count(*) as n from outbox`.execute(t.db.db);
      counts.outbox = Number(row.rows[0]?.n);
    } catch {
      // No outbox table in this build.
    }
    return counts;
  }

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = DEMO) =>
    t.call({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as never }) });

  beforeAll(async () => {
    t = await buildTestApp();
    // A real document exists, so "untouched" and "invisible" mean something.
    realDoc = await createOk(t, simpleDoc('REAL-1'));
  });
  afterAll(async () => t.close());

  describe('POST', () => {
    it('answers the full create response with demo_mode and demo_guids, and stores nothing', async () => {
      const before = await snapshot();
      const res = await call('POST', '/api/v1/invoices', { invoice: referenceDoc(), actor_login: 'demo-user' });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ ok: true, demo_mode: true });
      expect(body.demo_guids).toMatchObject({ public_id: body.public_id });
      for (const field of ['document', 'notifications', 'share_gate', 'api', 'totals', 'qr', 'share_links', 'status', 'validation', 'metadata', 'invoice']) {
        expect(body).toHaveProperty(field);
      }
      expect(body.totals).toMatchObject({ subtotal: 16499.99, vat_total: 3290, total: 19789.99, currency: 'RUB' });
      expect(body.metadata.editor_mode).toBe('api');
      expect(body.invoice.seller).toMatchObject({ inn: '7707083893', bik: '044525225' });
      expect(await snapshot()).toEqual(before);
      // Not stored: reading it back is the demo's 404.
      const get = await call('GET', `/api/v1/invoices/${body.public_id}`);
      expect(get.statusCode).toBe(404);
      expect(get.json()).toMatchObject({ error: 'document_not_found', demo_public_id: DEMO_ID });
    });

    it('keeps a client-supplied public_id and records no idempotency key', async () => {
      const before = await snapshot();
      const headers = { ...DEMO, 'idempotency-key': 'demo-key-1' };
      const first = await call('POST', '/api/v1/invoices', { ...simpleDoc('D-1'), public_id: 'demo-client-id-1' }, headers);
      const second = await call('POST', '/api/v1/invoices', { ...simpleDoc('D-2'), public_id: 'demo-client-id-1' }, headers);
      expect(first.statusCode).toBe(200);
      expect(first.json()).toMatchObject({ public_id: 'demo-client-id-1', demo_mode: true });
      // Nothing was remembered: the same key with another body is not a conflict, nor a replay.
      expect(second.statusCode).toBe(200);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.json().invoice.number).toBe('D-2');
      expect(await snapshot()).toEqual(before);
    });

    it('sends no e-mail: notifications are blocked by the service gate (207)', async () => {
      const before = await snapshot();
      const res = await call('POST', '/api/v1/invoices', {
        invoice: { ...referenceDoc(), api_recipients: [{ email: 'someone@example.com', name: 'Кто-то' }] },
        notify_recipients: true,
      });
      expect(res.statusCode).toBe(207);
      const body = res.json();
      expect(body.demo_mode).toBe(true);
      expect(body.notifications).toMatchObject({ sent_count: 0, sent_to: [], blocked_by_service_gate: true });
      expect(body.notifications.block_reason).toMatch(/demo/);
      expect(await snapshot()).toEqual(before);
    });

    it.each([
      ['a missing number', { ...simpleDoc('x'), number: undefined }, 400, 'validation_failed'],
      ['no items', { ...simpleDoc('x'), items: [] }, 400, 'validation_failed'],
      ['a prohibited field', { ...simpleDoc('x'), seller_logo_url: 'https://example.com/logo.png' }, 400, 'prohibited_field'],
      ['partial_update', { invoice: simpleDoc('x'), partial_update: true }, 400, 'partial_update_not_supported'],
      ['a seller outside the sample catalog', simpleDoc('x', { seller: { inn: '7736207543' } }), 403, 'seller_org_not_allowed'],
    ])('still refuses %s', async (_name, payload, status, error) => {
      const before = await snapshot();
      const res = await call('POST', '/api/v1/invoices', payload);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ ok: false, error });
      expect(await snapshot()).toEqual(before);
    });

    it('refuses malformed JSON as usual', async () => {
      const res = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: { ...DEMO, 'content-type': 'application/json' }, payload: '{"number":' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_json' });
    });
  });

  describe('PUT', () => {
    it('of the demo id is a 200 dry run that changes nothing', async () => {
      const before = await snapshot();
      const res = await call('PUT', `/api/v1/invoices/${DEMO_ID}`, { invoice: { ...referenceDoc(), number: 'CHANGED' } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ ok: true, public_id: DEMO_ID, demo_mode: true, invoice: { number: 'CHANGED' } });
      expect(await snapshot()).toEqual(before);
      // The sample is what it was.
      expect((await call('GET', `/api/v1/invoices/${DEMO_ID}`)).json().invoice.number).toBe('15');
    });

    it('of the demo id still validates', async () => {
      const res = await call('PUT', `/api/v1/invoices/${DEMO_ID}`, { invoice: { ...referenceDoc(), date: '2026-02-30' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    });

    it.each([
      ['an unknown id', 'no-such-document'],
      ['a real team’s document', 'REAL'],
    ])('of %s is 404 with demo_public_id', async (_name, id) => {
      const publicId = id === 'REAL' ? realDoc.public_id : id;
      const before = await snapshot();
      const res = await call('PUT', `/api/v1/invoices/${publicId}`, { invoice: referenceDoc() });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ ok: false, error: 'document_not_found', demo_public_id: DEMO_ID });
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('GET', () => {
    it('of the demo id returns the built-in sample', async () => {
      const res = await call('GET', `/api/v1/invoices/${DEMO_ID}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ ok: true, public_id: DEMO_ID, demo_mode: true });
      expect(body.demo_guids).toMatchObject({ public_id: DEMO_ID });
      expect(body.invoice).toMatchObject({ number: '15', date: '2026-03-02', currency: 'RUB' });
      expect(body.invoice.items).toHaveLength(4);
      expect(body.metadata).toMatchObject({ editor_mode: 'api' });
      expect(body.status).toMatchObject({ seller_status: 'issued', service_status: 'active' });
      expect(res.headers.etag).toBeTruthy();
    });

    it('answers the same way with Bearer and with api_key in the query', async () => {
      const bearer = await t.call({ method: 'GET', url: `/api/v1/invoices/${DEMO_ID}`, headers: { authorization: 'Bearer demo-token' } });
      const query = await t.call({ method: 'GET', url: `/api/v1/invoices/${DEMO_ID}?api_key=demo-token` });
      for (const res of [bearer, query]) {
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ public_id: DEMO_ID, demo_mode: true });
      }
    });

    it.each([
      ['an unknown id', 'no-such-document'],
      ['a real team’s document', 'REAL'],
    ])('of %s is 404 with demo_public_id', async (_name, id) => {
      const publicId = id === 'REAL' ? realDoc.public_id : id;
      const res = await call('GET', `/api/v1/invoices/${publicId}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ ok: false, error: 'document_not_found', demo_public_id: DEMO_ID });
      expect(res.body).not.toContain('REAL-1');
      const revisions = await call('GET', `/api/v1/invoices/${publicId}/revisions`);
      expect(revisions.statusCode).toBe(404);
      expect(revisions.json()).toMatchObject({ error: 'document_not_found', demo_public_id: DEMO_ID });
    });
  });

  it('the sample document has the reference totals 19789.99', async () => {
    const body = (await call('GET', `/api/v1/invoices/${DEMO_ID}`)).json();
    expect(body.totals).toMatchObject({ subtotal: 16499.99, vat_total: 3290, total: 19789.99 });
  });

  it('the list holds only the sample, with demo_mode', async () => {
    const res = await call('GET', '/api/v1/invoices');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ ok: true, total: 1, demo_mode: true });
    expect(body.demo_guids).toMatchObject({ public_id: DEMO_ID });
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      public_id: DEMO_ID,
      number: '15',
      date: '2026-03-02',
      seller_inn: '7707083893',
      buyer_name: 'ООО «Три кита»',
      totals: { subtotal: 16499.99, vat_total: 3290, total: 19789.99 },
      editor_mode: 'api',
    });
    expect(body.items[0].invoice_url).toBe((await call('GET', `/api/v1/invoices/${DEMO_ID}`)).json().invoice_url);
    expect(res.body).not.toContain(realDoc.public_id);
    // Paging past the sample leaves the total.
    expect((await call('GET', '/api/v1/invoices?offset=1')).json()).toMatchObject({ total: 1, items: [] });
    // The query rules still apply.
    expect((await call('GET', '/api/v1/invoices?limit=0')).statusCode).toBe(400);
  });

  it('the catalog is the sample catalog', async () => {
    const res = await call('GET', '/api/v1/ref/catalog');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ ok: true, demo_mode: true });
    expect(body.organizations.map((o: { id: string }) => o.id)).toEqual(['demo-org']);
    expect(body.organizations[0]).toMatchObject({ inn: '7707083893', within_tariff_limit: true });
    expect(body.bank_accounts.map((b: { id: string }) => b.id)).toEqual(['demo-bank']);
    expect(JSON.stringify(body)).not.toContain('org-1');
  });
});
