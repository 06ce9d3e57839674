/**
 * Retention of webhook history (INVOICING_DELIVERY_RETENTION_DAYS): a pass deletes every finished
 * delivery and every attempt older than the retention, however many (batches until none is left),
 * and nothing younger or still to deliver. Deleting an endpoint stops its deliveries at once and
 * removes its whole history. The worker's clock is moved, as a node running for weeks would see it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME } from '../invoices/write-helpers.js';
import { Receiver } from './receiver.js';

const DAY = 86_400_000;
let t: TestApp;
let receiver: Receiver;
let url: string;
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  t = await buildTestApp({
    env: { INVOICING_WEBHOOK_ALLOW_HTTP: 'true', INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1', INVOICING_DELIVERY_RETENTION_DAYS: '30' },
    webhooks: { clock, policy: { pollIntervalMs: 60_000 } },
  });
  receiver = new Receiver();
  url = await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function endpoint(): Promise<string> {
  const res = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url, events: ['invoice.payment_reported'] } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().endpoint.id as string;
}

/** `n` finished deliveries, each with one attempt, of `endpointId`, made at `at`. */
async function history(endpointId: string, n: number, at: string, state: 'sent' | 'failed' | 'pending' = 'sent'): Promise<void> {
  for (let start = 0; start < n; start += 250) {
    const ids = Array.from({ length: Math.min(250, n - start) }, (_, i) => `${endpointId.slice(-6)}${state[0]}${String(start + i).padStart(6, '0')}`);
    await t.db.db
      .insertInto('webhook_deliveries')
      .values(
        ids.map((id) => ({
          team_id: 'acme', id, endpoint_id: endpointId, event_id: `evt_h_${id}`, event_type: 'invoice.payment_reported', body: '{}',
          state, attempts: 1, next_attempt_at: at, created_at: at, updated_at: at,
        })),
      )
      .execute();
    await t.db.db
      .insertInto('webhook_attempts')
      .values(ids.map((id) => ({ team_id: 'acme', id, endpoint_id: endpointId, delivery_id: id, event_id: `evt_h_${id}`, attempt: 1, status_code: 200, duration_ms: 5, error: null, at })))
      .execute();
  }
}

async function rows(table: 'webhook_deliveries' | 'webhook_attempts', endpointId: string): Promise<number> {
  const r = await t.db.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('team_id', '=', 'acme').where('endpoint_id', '=', endpointId).executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('webhook history retention', () => {
  it('deletes every finished delivery and attempt older than the retention in one pass, and nothing else', async () => {
    const id = await endpoint();
    expect((await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/test`, headers: ACME })).statusCode).toBe(200);
    await t.app.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(1);
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    await history(id, 2_500, old);
    await history(id, 1, old, 'pending');

    const pass = await t.app.webhooks.worker.runRetention();
    expect(pass).toMatchObject({ deliveries: 2_500, attempts: 2_501 });
    // The fresh ping's delivery and attempt stay; so does the delivery still to make.
    expect(await rows('webhook_deliveries', id)).toBe(2);
    const listed = (await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${id}/deliveries?limit=100`, headers: ACME })).json().items;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ status_code: 200 });

    offsetMs = 31 * DAY;
    await t.app.webhooks.worker.runRetention();
    offsetMs = 0;
    expect(await rows('webhook_attempts', id)).toBe(0);
    expect(await rows('webhook_deliveries', id)).toBe(1);
    expect((await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${id}/deliveries`, headers: ACME })).json().items).toEqual([]);
  });

  it('deleting an endpoint stops its deliveries at once and removes its whole history', async () => {
    const id = await endpoint();
    await history(id, 2_500, new Date().toISOString());
    expect((await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/test`, headers: ACME })).statusCode).toBe(200);
    const res = await t.call({ method: 'DELETE', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME })).statusCode).toBe(404);
    expect(await rows('webhook_deliveries', id)).toBe(0);
    expect(await rows('webhook_attempts', id)).toBe(0);
    await t.app.webhooks.worker.runOnce();
    expect(receiver.received.filter((r) => r.body.includes(id))).toEqual([]);
  });
});
