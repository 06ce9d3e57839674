/**
 * One write cannot queue megabytes. A document at every free-form bound with
 * 50 recipients queues 50 e-mail rows whose payloads are the small message view (names, totals,
 * links), each a few KB, never the document. (The test that fails on the old code is the bound:
 * `manager.name` beyond 500 characters, test/modules/invoices/input-bounds.test.ts; before it, one
 * 5 MB manager name was copied into every recipient's payload.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { appEnv, doc, FAST_NOTIFICATIONS, post } from './api-helpers.js';
import { startSmtpServer, type TestSmtpServer } from './smtp-helpers.js';

describe('outbox payloads stay small', () => {
  let server: TestSmtpServer;
  let t: TestApp;
  beforeAll(async () => {
    server = await startSmtpServer();
    t = await buildTestApp({ env: appEnv(server.url), notifications: FAST_NOTIFICATIONS });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it('50 recipients of a document at its bounds: 50 rows of at most 8 KB each', async () => {
    const big = (n: number) => 'я'.repeat(n);
    const res = await post(t, {
      invoice: doc('OUTBOX-1', {
        buyer: { name: big(500), address: big(1000) },
        manager: { name: big(500), position: big(200), phone: '1'.repeat(100), note: big(2000) },
        buyer_contact: { name: big(500), note: big(2000) },
        signers: Array.from({ length: 10 }, () => ({ name: big(500), position: big(200) })),
        basis: big(2000),
        purpose: big(2000),
        comment: big(2000),
        document_title: big(500),
        items: [{ name: big(1000), qty: 1, price: 1, note: big(2000) }],
        api_recipients: Array.from({ length: 50 }, (_, i) => ({ email: `r${i}@buyer.example`, name: big(200), position: big(200) })),
      }),
      notify_recipients: true,
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(300);
    const rows = await t.db.db.selectFrom('outbox').select(['kind', 'payload']).where('public_id', '=', res.json().public_id).execute();
    const emails = rows.filter((r) => r.kind === 'email');
    expect(emails).toHaveLength(50);
    for (const row of rows) expect(Buffer.byteLength(row.payload)).toBeLessThan(8 * 1024);
  }, 60_000);
});
