/**
 * Fan-out visits every enabled endpoint of every team, a page at a time: with pages of one
 * endpoint, each of three endpoints (two teams) still gets the event of its team. A pass costs a
 * few statements per page of endpoints, not one per endpoint (counted on the real database
 * through a Kysely plugin that only observes).
 */
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhooks } from '../../../src/modules/webhooks/index.js';
import { createStores } from '../../../src/stores.js';
import { systemClock } from '../../../src/shared/clock.js';
import { buildTestApp, TEST_SECRET, type TestApp } from '../../helpers/app.js';
import { BETA_KEY, bootstrapFixture } from '../../helpers/fixtures.js';
import { ACME, BETA_ORG_INN, post, simpleDoc } from '../invoices/write-helpers.js';
import { Receiver } from './receiver.js';

const BETA = { 'x-api-key': BETA_KEY };
let t: TestApp;
let receiver: Receiver;
let url: string;

beforeAll(async () => {
  const fixture = bootstrapFixture() as any;
  fixture.tariffs.basic.max_webhook_endpoints = 40;
  t = await buildTestApp({
    bootstrap: fixture,
    env: { INVOICING_WEBHOOK_ALLOW_HTTP: 'true', INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1' },
    webhooks: { policy: { pollIntervalMs: 60_000, endpointPage: 1 } },
  });
  receiver = new Receiver();
  url = await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('webhook fan-out', () => {
  it('reaches every enabled endpoint across pages', async () => {
    const endpoints: string[] = [];
    for (const [headers, tag] of [[ACME, 'a1'], [ACME, 'a2'], [BETA, 'b1']] as const) {
      const res = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers, payload: { url: `${url}?to=${tag}`, events: ['invoice.created'] } });
      expect(res.statusCode, res.body).toBe(201);
      endpoints.push(tag);
    }
    expect((await post(t, simpleDoc('FAN-A'))).statusCode).toBe(200);
    expect((await post(t, simpleDoc('FAN-B', { seller: { inn: BETA_ORG_INN } }), BETA)).statusCode).toBe(200);
    const deadline = Date.now() + 20_000;
    while (receiver.received.length < 3 && Date.now() < deadline) {
      await t.app.webhooks.worker.runOnce();
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(receiver.received).toHaveLength(3);
    expect(receiver.received.map((r) => r.path.split('to=')[1]).sort()).toEqual(endpoints.sort());
    for (const r of receiver.received) expect(JSON.parse(r.body).type).toBe('invoice.created');
  });

  it('asks the database a few statements per pass for 30 endpoints, not one per endpoint', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers: ACME, payload: { url: `${url}?n=${i}`, events: ['invoice.payment_reported'] } });
      expect(res.statusCode, res.body).toBe(201);
    }
    let statements = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const observed = createWebhooks({
      database: { db: t.db.db.withPlugin(counting) },
      stores: createStores(t.db),
      clock: systemClock,
      config: t.config,
      secret: TEST_SECRET,
      policy: { pollIntervalMs: 60_000 },
    });
    try {
      await observed.worker.runOnce();
      statements = 0;
      await observed.worker.runOnce();
      // The page of endpoints, the one question to the feed for all of them, the due check.
      expect(statements).toBeGreaterThanOrEqual(2);
      expect(statements).toBeLessThanOrEqual(4);
    } finally {
      await observed.close();
    }
  });
});
