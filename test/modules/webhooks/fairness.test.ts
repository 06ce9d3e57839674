/**
 * Contract 7: deliveries are claimed fairly across endpoints; an endpoint that never answers
 * delays another endpoint's deliveries by no more than one attempt timeout. Endpoint A is a real
 * server that accepts every request and never answers; endpoint B answers at once. A has 30
 * deliveries due before B's one; the worker's loop runs as in production.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME } from '../invoices/write-helpers.js';
import { Receiver } from './receiver.js';

const ATTEMPT_TIMEOUT_MS = 3_000;
let t: TestApp;
let receiver: Receiver;
let receiverUrl: string;
let silent: http.Server;
let silentUrl: string;
const open = { now: 0, max: 0, total: 0 };

beforeAll(async () => {
  t = await buildTestApp({
    env: {
      INVOICING_WEBHOOK_ALLOW_HTTP: 'true',
      INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
      INVOICING_WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
      INVOICING_WEBHOOK_RETRY_BASE_MS: '600000',
    },
    webhooks: { policy: { pollIntervalMs: 100 } },
  });
  receiver = new Receiver();
  receiverUrl = await receiver.start();
  // Reads each request and never answers (until the attempt's own timeout closes it).
  silent = http.createServer((req) => {
    open.now++;
    open.total++;
    open.max = Math.max(open.max, open.now);
    req.resume();
    req.socket.on('close', () => open.now--);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await t.close();
  silent.closeAllConnections();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
  await receiver.close();
});

async function endpoint(url: string): Promise<string> {
  const res = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url, events: ['invoice.payment_reported'] } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().endpoint.id as string;
}

async function ping(id: string): Promise<void> {
  const res = await t.call({ method: 'POST', url: `/api/v1/webhook_endpoints/${id}/test`, headers: ACME });
  expect(res.statusCode, res.body).toBe(200);
}

describe('fair claiming across endpoints', () => {
  it('delivers to an answering endpoint within one attempt timeout while one that never answers has many deliveries due', async () => {
    const a = await endpoint(silentUrl);
    const b = await endpoint(receiverUrl);
    for (let i = 0; i < 30; i++) await ping(a);
    // B's delivery is queued last, so it is due after all of A's.
    await new Promise((r) => setTimeout(r, 5));
    await ping(b);
    const started = Date.now();
    t.app.webhooks.worker.start();
    while (receiver.received.length === 0 && Date.now() - started < 4 * ATTEMPT_TIMEOUT_MS) await new Promise((r) => setTimeout(r, 20));
    const arrived = receiver.received[0];
    expect(arrived, 'B received nothing').toBeDefined();
    expect((arrived as { at: number }).at - started).toBeLessThan(ATTEMPT_TIMEOUT_MS);
    expect(JSON.parse((arrived as { body: string }).body)).toMatchObject({ type: 'ping', data: { endpoint_id: b } });
    // A never had more than 2 attempts under way at once (its bound), so it could not fill the worker's slots.
    await new Promise((r) => setTimeout(r, 200));
    expect(open.total).toBeGreaterThan(0);
    expect(open.max).toBeLessThanOrEqual(2);
  });
});
