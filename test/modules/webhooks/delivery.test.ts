/**
 * Webhook deliveries end to end: real deliveries to a loopback HTTP receiver, every
 * signature verified with the reference `standardwebhooks` library, retries after 500, timeout
 * and refused connection, secret rotation with its overlap, replay, test ping, and the endpoint
 * disabled after failing for 3 days (a moved clock).
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME, post, simpleDoc } from '../invoices/write-helpers.js';
import { closedPort, Receiver } from './receiver.js';

let t: TestApp;
let receiver: Receiver;
let url: string;
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  t = await buildTestApp({
    env: {
      INVOICING_WEBHOOK_ALLOW_HTTP: 'true',
      INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
      INVOICING_WEBHOOK_TIMEOUT_MS: '400',
      INVOICING_WEBHOOK_RETRY_BASE_MS: '20',
    },
    webhooks: { clock, policy: { pollIntervalMs: 60_000 } },
  });
  receiver = new Receiver();
  url = await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.answers.length = 0;
});

const worker = () => t.app.webhooks.worker;

async function createEndpoint(body: Record<string, unknown> = {}) {
  const res = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url, ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { endpoint: { id: string; url: string; events: string[]; enabled: boolean }; secret: string };
}

async function remove(id: string) {
  expect((await t.call({ method: 'DELETE', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME })).statusCode).toBe(200);
}

function verify(secret: string, r: { headers: Record<string, string>; body: string }) {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'] as string,
    'webhook-timestamp': r.headers['webhook-timestamp'] as string,
    'webhook-signature': r.headers['webhook-signature'] as string,
  }) as { type: string; timestamp: string; data: any };
}

async function deliveries(id: string) {
  const res = await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${id}/deliveries`, headers: ACME });
  expect(res.statusCode).toBe(200);
  return res.json().items as Array<{ event_id: string; attempt: number; status_code: number | null; error: string | null; next_attempt_at: string | null }>;
}

/**
 * Runs the worker until `done()` (retries are due after a few ms). On PostgreSQL an event
 * reaches the feed, and so the fan-out, once every transaction of the service older than it has
 * ended.
 */
async function runUntil(done: () => boolean | Promise<boolean>, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) {
    await worker().runOnce();
    if (!(await done())) await new Promise((r) => setTimeout(r, 30));
  }
}

/** Runs the worker until the receiver has `n` requests. */
async function until(n: number) {
  await runUntil(() => receiver.received.length >= n);
  expect(receiver.received.length).toBeGreaterThanOrEqual(n);
}

describe('webhook deliveries', () => {
  it('delivers a signed invoice.created that the reference library verifies, with the feed event id as webhook-id', async () => {
    const { endpoint, secret } = await createEndpoint({ events: ['invoice.created'], description: 'ERP' });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(endpoint).toMatchObject({ url, events: ['invoice.created'], enabled: true, description: 'ERP', disabled_reason: null });
    const doc = (await post(t, simpleDoc('W-1'))).json();
    await until(1);
    const got = receiver.received[0]!;
    expect(got.headers['content-type']).toBe('application/json');
    const payload = verify(secret, got);
    expect(payload.type).toBe('invoice.created');
    expect(payload.data).toMatchObject({ public_id: doc.public_id, revision: 1 });
    const feed = (await t.call({ method: 'GET', url: '/api/v1/events?types=invoice.created', headers: ACME })).json();
    const event = feed.items.find((e: any) => e.data.public_id === doc.public_id);
    expect(got.headers['webhook-id']).toBe(event.id);
    expect(payload.timestamp).toBe(event.created_at);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    // The secret is never in the logs, nor shown again.
    expect(t.logs.join('\n')).not.toContain(secret.slice(6));
    const read = await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${endpoint.id}`, headers: ACME });
    expect(read.body).not.toContain(secret.slice(6));
    await remove(endpoint.id);
  });

  it('retries after a 500 and after a timeout with the same webhook-id, and lists the attempts newest first', async () => {
    const { endpoint, secret } = await createEndpoint({ events: ['invoice.created'] });
    receiver.answers.push({ status: 500, body: 'boom' }, { hang: true }, { status: 204 });
    await post(t, simpleDoc('W-2'));
    await until(3);
    await worker().runOnce();
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of receiver.received) verify(secret, r);
    const items = await deliveries(endpoint.id);
    expect(items.map((i) => i.attempt)).toEqual([3, 2, 1]);
    expect(items[2]).toMatchObject({ status_code: 500, error: expect.stringContaining('HTTP 500') });
    expect(items[2]!.next_attempt_at).not.toBeNull();
    expect(items[1]).toMatchObject({ status_code: null, error: expect.stringContaining('timeout') });
    expect(items[0]).toMatchObject({ status_code: 204, error: null, next_attempt_at: null });
    await remove(endpoint.id);
  });

  it('retries after a refused connection', async () => {
    const refusedUrl = `http://127.0.0.1:${await closedPort()}/hook`;
    const res = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url: refusedUrl, events: ['invoice.created'] } });
    const id = res.json().endpoint.id as string;
    await post(t, simpleDoc('W-3'));
    await runUntil(async () => (await deliveries(id)).length > 0);
    const items = await deliveries(id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ attempt: 1, status_code: null, error: expect.stringContaining('ECONNREFUSED') });
    expect(items[0]!.next_attempt_at).not.toBeNull();
    // Pointed at the live receiver, the retry goes through.
    await t.call({ method: 'PATCH', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME, payload: { url } });
    await until(1);
    expect((await deliveries(id))[0]).toMatchObject({ attempt: 2, status_code: 200 });
    await remove(id);
  });

  it('signs with both secrets during a rotation overlap, with the new one only afterwards', async () => {
    const { endpoint, secret: oldSecret } = await createEndpoint();
    const rotated = await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, headers: ACME, payload: { overlap_sec: 60 } });
    expect(rotated.statusCode).toBe(200);
    const newSecret = rotated.json().secret as string;
    expect(newSecret).not.toBe(oldSecret);
    const ping = await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${endpoint.id}/test`, headers: ACME });
    expect(ping.statusCode).toBe(200);
    await until(1);
    const during = receiver.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(oldSecret, during).type).toBe('ping');
    expect(verify(newSecret, during)).toMatchObject({ type: 'ping', data: { endpoint_id: endpoint.id } });
    expect(during.headers['webhook-id']).toBe(ping.json().event_id);

    offsetMs = 61_000;
    try {
      await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${endpoint.id}/test`, headers: ACME });
      await until(2);
      const after = receiver.received[1]!;
      expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
      // 61 s ahead of the real clock is within the library's 5-minute timestamp tolerance.
      expect(() => verify(oldSecret, after)).toThrow();
      expect(verify(newSecret, after).type).toBe('ping');
    } finally {
      offsetMs = 0;
    }
    await remove(endpoint.id);
  });

  it('replays chosen events with their original ids', async () => {
    const doc = (await post(t, simpleDoc('W-5'))).json();
    let mine: any[] = [];
    await runUntil(async () => {
      const feed = (await t.call({ method: 'GET', url: '/api/v1/events?limit=200', headers: ACME })).json();
      mine = feed.items.filter((e: any) => e.data.public_id === doc.public_id);
      return mine.length > 0;
    });
    const { endpoint, secret } = await createEndpoint({ events: ['notification.sent'] });
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/webhook_endpoints/${endpoint.id}/replay`,
      headers: ACME,
      payload: { event_ids: [...mine.map((e: any) => e.id), 'evt_00000000000000000000000000000000'] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true, queued: mine.length });
    await until(mine.length);
    expect(receiver.received.map((r) => r.headers['webhook-id']).sort()).toEqual(mine.map((e: any) => e.id).sort());
    for (const r of receiver.received) expect(verify(secret, r).data.public_id).toBe(doc.public_id);
    await remove(endpoint.id);
  });

  it('disables an endpoint failing for 3 days and records webhook_endpoint.disabled', async () => {
    const { endpoint } = await createEndpoint({ events: ['invoice.created'] });
    for (let i = 0; i < 5; i++) receiver.answers.push({ status: 503 });
    await post(t, simpleDoc('W-6'));
    await until(1);
    offsetMs = 3 * 86_400_000 + 60_000;
    try {
      await until(2);
      const read = (await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${endpoint.id}`, headers: ACME })).json();
      expect(read.endpoint).toMatchObject({ enabled: false, disabled_reason: 'failing_for_3_days' });
      const disabledEvents = async () =>
        (await t.call({ method: 'GET', url: '/api/v1/events?types=webhook_endpoint.disabled', headers: ACME })).json().items.map((e: any) => e.data);
      await runUntil(async () => (await disabledEvents()).length > 0);
      expect(await disabledEvents()).toContainEqual({ endpoint_id: endpoint.id, url, reason: 'failing_for_3_days' });
      const items = await deliveries(endpoint.id);
      expect(items[0]).toMatchObject({ attempt: 2, status_code: 503, next_attempt_at: null });
      // Nothing more goes to a disabled endpoint.
      await post(t, simpleDoc('W-6b'));
      await worker().runOnce();
      expect(receiver.received).toHaveLength(2);
    } finally {
      offsetMs = 0;
    }
    await remove(endpoint.id);
  });

  it('counts webhook outcomes on /metrics', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.body).toMatch(/invoicing_deliveries_total\{channel="webhook",outcome="sent"\} [1-9]/);
    expect(res.body).toMatch(/invoicing_deliveries_total\{channel="webhook",outcome="retry"\} [1-9]/);
  });
});
