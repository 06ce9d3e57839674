/**
 * Event retention (INVOICING_EVENT_RETENTION_DAYS): a retention pass deletes every event older
 * than the retention, however many (in batches of 1,000 until none is left), so the feed starts
 * at the oldest kept one. The worker's clock is moved, as a node running for weeks would see it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../../src/modules/events/index.js';
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
    // A backlog of 2,500 events 40 days old (e.g. retention was off, or the workers were down).
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    await t.db.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 2_500; i++) await recordEvent(trx, { teamId: 'acme', type: 'invoice.payment_reported', now: old, data: { public_id: `old-${i}`, revision: 1 } });
    });

    // One pass deletes all of them, and nothing younger.
    expect((await t.app.webhooks.worker.runRetention()).events).toBe(2_500);
    const left = await t.call({ method: 'GET', url: '/api/v1/events?types=invoice.payment_reported', headers: ACME });
    expect(left.json().items).toEqual([]);
    expect(await createdIds(1)).toEqual([a]);

    offsetMs = 29 * DAY;
    await t.app.webhooks.worker.runRetention();
    expect(await createdIds(1)).toEqual([a]);

    offsetMs = 31 * DAY;
    await t.app.webhooks.worker.runRetention();
    expect(await createdIds(0)).toEqual([]);

    const b = (await post(t, simpleDoc('RET-B'))).json().public_id as string;
    expect(await createdIds(1)).toEqual([b]);
  });
});
