/**
 * Contract 7: a transaction held open elsewhere on the PostgreSQL server (another database,
 * another client of this one) delays no event of the feed or its webhook by more than 2 seconds;
 * and an event id or cursor that names no feed position is a 400 `invalid_query` on both
 * databases. (That a transaction of the service itself still holds later events back, so none is
 * ever skipped, is feed-order.test.ts.)
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { ACME, post, simpleDoc } from '../invoices/write-helpers.js';
import { Receiver } from '../webhooks/receiver.js';

let t: TestApp;
let receiver: Receiver;
let hookUrl: string;

beforeAll(async () => {
  t = await buildTestApp({
    env: { INVOICING_WEBHOOK_ALLOW_HTTP: 'true', INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1' },
    webhooks: { policy: { pollIntervalMs: 100 } },
  });
  receiver = new Receiver();
  hookUrl = await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('feed positions', () => {
  it('answers 400 invalid_query for an id or cursor that parses but names no possible position', async () => {
    for (const after of ['evt_' + 'f'.repeat(32), 'evt_0000000000000000ffffffffffffffff', 'evt_8000000000000000' + '0'.repeat(16), 'evt_0020000000000000' + '0'.repeat(16)]) {
      const res = await t.call({ method: 'GET', url: `/api/v1/events?after=${after}`, headers: ACME });
      expect(res.statusCode, after).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    }
    // The largest position a feed can give is still a cursor.
    const edge = await t.call({ method: 'GET', url: `/api/v1/events?after=evt_001fffffffffffff001fffffffffffff`, headers: ACME });
    expect(edge.statusCode, edge.body).toBe(200);
    expect(edge.json()).toMatchObject({ items: [], has_more: false });
  });

  it('skips such ids in a replay instead of failing', async () => {
    const endpoint = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url: hookUrl, events: ['invoice.payment_reported'] } });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const id = endpoint.json().endpoint.id as string;
    const res = await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/replay`, headers: ACME, payload: { event_ids: ['evt_' + 'f'.repeat(32)] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, queued: 0 });
    await t.call({ method: 'DELETE', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME });
  });
});

/** An idle transaction that holds a transaction id, on a plain client (no application_name). */
async function holdTransaction(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('select pg_current_xact_id()');
  return client;
}

describe.skipIf(!usingPostgres())('feed horizon on PostgreSQL', () => {
  it('shows an event and delivers its webhook within 2 s while transactions in another database and of another client stay open', async () => {
    const endpoint = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url: hookUrl, events: ['invoice.created'] } });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    t.app.webhooks.worker.start();
    const otherDatabase = await holdTransaction(process.env.DATABASE_URL as string);
    const sameDatabase = await holdTransaction(t.db.url);
    try {
      const started = Date.now();
      const doc = (await post(t, simpleDoc('HORIZON-1'))).json();
      let seenAt = 0;
      while (Date.now() - started < 5_000) {
        const feed = (await t.call({ method: 'GET', url: '/api/v1/events?types=invoice.created&limit=200', headers: ACME })).json();
        if ((feed.items as Array<{ data: { public_id: string } }>).some((e) => e.data.public_id === doc.public_id)) {
          seenAt = Date.now();
          break;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(seenAt, 'the event never reached the feed').toBeGreaterThan(0);
      expect(seenAt - started).toBeLessThan(2_000);
      while (receiver.received.length === 0 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 25));
      const delivered = receiver.received.find((r) => JSON.parse(r.body).data.public_id === doc.public_id);
      expect(delivered, 'the webhook never arrived').toBeDefined();
      expect((delivered as { at: number }).at - started).toBeLessThan(2_000);
      // Both transactions are still open: the event did not wait for them.
      expect((await otherDatabase.query('select pg_current_xact_id_if_assigned() as x')).rows[0].x).not.toBeNull();
      expect((await sameDatabase.query('select pg_current_xact_id_if_assigned() as x')).rows[0].x).not.toBeNull();
    } finally {
      for (const client of [otherDatabase, sameDatabase]) {
        await client.query('rollback');
        await client.end();
      }
    }
  });
});
