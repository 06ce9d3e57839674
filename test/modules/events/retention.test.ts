/**
 * Event retention (INVOICING_EVENT_RETENTION_DAYS): the workers delete events older than the
 * retention, so the feed starts at the oldest kept one. The worker's clock is moved, as a node
 * running for weeks would see it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME, post, simpleDoc } from '../invoices/write-helpers.js';

const DAY = 86_400_000;
let t: TestApp;
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  t = await buildTestApp({ env: { INVOICING_EVENT_RETENTION_DAYS: '30' }, webhooks: { clock, policy: { pollIntervalMs: 60_000 } } });
});
afterAll(async () => t.close());

/** The public ids of the team's `invoice.created` events in the feed (polling: on PostgreSQL an event shows once older transactions ended). */
async function createdIds(expected: number): Promise<string[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await t.call({ method: 'GET', url: '/api/v1/events?types=invoice.created&limit=200', headers: ACME });
    expect(res.statusCode).toBe(200);
    const ids = (res.json().items as Array<{ data: { public_id: string } }>).map((e) => e.data.public_id);
    if (ids.length >= expected || Date.now() > deadline) return ids;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('event retention', () => {
  it('keeps events younger than the retention and deletes older ones', async () => {
    const a = (await post(t, simpleDoc('RET-A'))).json().public_id as string;
    expect(await createdIds(1)).toEqual([a]);

    offsetMs = 29 * DAY;
    await t.app.webhooks.worker.runOnce();
    expect(await createdIds(1)).toEqual([a]);

    offsetMs = 31 * DAY;
    await t.app.webhooks.worker.runOnce();
    expect(await createdIds(0)).toEqual([]);

    const b = (await post(t, simpleDoc('RET-B'))).json().public_id as string;
    expect(await createdIds(1)).toEqual([b]);
  });
});
