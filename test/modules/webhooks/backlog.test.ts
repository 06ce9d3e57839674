/**
 * Contract 7: an endpoint holds at most 1,000 deliveries still to make. `test` and `replay` past
 * that are 409 `webhook_backlog_full`; the fan-out pauses for that endpoint (its events wait in
 * the feed) and resumes as the backlog drains, losing nothing. The endpoint first points at a
 * closed port (every attempt fails at once and is retried 10 minutes later), then at a receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../../src/modules/events/index.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME } from '../invoices/write-helpers.js';
import { closedPort, Receiver } from './receiver.js';

const EVENTS = 1_005;
let t: TestApp;
let receiver: Receiver;
let receiverUrl: string;
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  t = await buildTestApp({
    env: {
      INVOICING_WEBHOOK_ALLOW_HTTP: 'true',
      INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
      INVOICING_WEBHOOK_TIMEOUT_MS: '2000',
      INVOICING_WEBHOOK_RETRY_BASE_MS: '600000',
    },
    webhooks: { clock, policy: { pollIntervalMs: 60_000, concurrency: 32, endpointConcurrency: 32 } },
  });
  receiver = new Receiver();
  receiverUrl = await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const worker = () => t.app.webhooks.worker;

async function undelivered(endpointId: string): Promise<number> {
  const row = await t.db.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('team_id', '=', 'acme')
    .where('endpoint_id', '=', endpointId)
    .where('state', 'in', ['pending', 'sending'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('backlog bound per endpoint', () => {
  it('stops queueing at 1,000 (409 for test and replay), pauses the fan-out and resumes it as the backlog drains', async () => {
    const created = await t.call({
      method: 'POST',
      url: '/api/v1/webhook_endpoints',
      headers: ACME,
      payload: { url: `http://127.0.0.1:${await closedPort()}/hook`, events: ['invoice.payment_reported'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().endpoint.id as string;
    const now = new Date().toISOString();
    await t.db.db.transaction().execute(async (trx) => {
      for (let i = 0; i < EVENTS; i++) {
        await recordEvent(trx, { teamId: 'acme', type: 'invoice.payment_reported', now, data: { public_id: `backlog-${i}`, revision: 1 } });
      }
    });

    // Fan-out passes (200 events each) until it stops queueing; every attempt is refused at once.
    for (let pass = 0; pass < 20; pass++) {
      const r = await worker().runOnce();
      if (r.queued === 0 && pass > 5) break;
    }
    expect(await undelivered(id)).toBe(1_000);

    const test = await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/test`, headers: ACME });
    expect(test.statusCode, test.body).toBe(409);
    expect(test.json()).toMatchObject({ ok: false, error: 'webhook_backlog_full' });
    expect(test.json().details).toMatch(/at most 1000/);
    const feed = (await t.call({ method: 'GET', url: '/api/v1/events?types=invoice.payment_reported&limit=1', headers: ACME })).json();
    const replay = await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/replay`, headers: ACME, payload: { event_ids: [feed.items[0].id] } });
    expect(replay.statusCode, replay.body).toBe(409);
    expect(replay.json().error).toBe('webhook_backlog_full');
    expect(await undelivered(id)).toBe(1_000);

    // The receiver comes up and the retries fall due: the backlog drains and the paused events follow.
    expect((await t.call({ method: 'PATCH', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME, payload: { url: receiverUrl } })).statusCode).toBe(200);
    offsetMs = 3_600_000;
    const deadline = Date.now() + 60_000;
    const ids = () => new Set(receiver.received.map((r) => r.headers['webhook-id']));
    while (ids().size < EVENTS && Date.now() < deadline) await worker().runOnce();
    expect(ids().size).toBe(EVENTS);
    expect(await undelivered(id)).toBe(0);
    expect((await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/test`, headers: ACME })).statusCode).toBe(200);
  });
});
