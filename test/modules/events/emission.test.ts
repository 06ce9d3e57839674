/**
 * Events of e-mail and EDO news: `notification.sent` / `notification.failed` per
 * recipient, `invoice.payment_reported`, and `edo.status_changed` through the sandbox operator,
 * each written with the change it describes and moving the document's `changed_at`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { request } from '../sharing/link-helpers.js';
import { ACME, createOk, post, simpleDoc } from '../invoices/write-helpers.js';

let t: TestApp;
// Ahead of the app's system clock: a create's EDO send is due from its document's created_at.
let current = new Date(Date.now() + 60_000);
const clock = { now: () => new Date(current) };

beforeAll(async () => {
  // No SMTP_URL: e-mails are written as .eml files and count as sent (contract 2).
  t = await buildTestApp({
    env: { INVOICING_EDO_SANDBOX_DELIVERY_MS: '60000', INVOICING_EDO_SANDBOX_DECISION_MS: '300000' },
    edo: { clock, policy: { retryBaseMs: 1_000, retryMaxMs: 1_000 } },
  });
});
afterAll(async () => {
  await t.close();
});

/**
 * The document's events once `ready(events)` holds: on PostgreSQL an event shows in the feed once
 * every transaction of the service older than it has ended (this file's own, e.g. a worker's).
 */
async function eventsOf(publicId: string, ready: (events: any[]) => boolean = (e) => e.length > 0) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events = await readAll(publicId);
    if (ready(events) || Date.now() > deadline) return events;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readAll(publicId: string) {
  const items: any[] = [];
  let after = '';
  for (;;) {
    const page = (await t.call({ method: 'GET', url: `/api/v1/events?limit=200${after ? `&after=${after}` : ''}`, headers: ACME })).json();
    items.push(...page.items.filter((e: any) => e.data.public_id === publicId));
    if (!page.has_more) return items;
    after = page.next_cursor;
  }
}

describe('event emission', () => {
  it('records notification.sent and notification.failed per recipient, and payment_reported', async () => {
    const res = await post(
      t,
      simpleDoc('N-1', {
        notify_recipients: true,
        api_recipients: [
          { email: 'good@example.com', name: 'A' },
          { email: 'not-an-address', name: 'B' },
        ],
      }),
    );
    expect(res.statusCode).toBe(207);
    const doc = res.json();
    await t.app.notifier.worker.drain();
    const events = await eventsOf(doc.public_id, (e) => e.filter((x) => x.type.startsWith('notification.')).length >= 2);
    expect(events.filter((e) => e.type.startsWith('notification.')).map((e) => [e.type, e.data.recipient, e.data.code])).toEqual(
      expect.arrayContaining([
        ['notification.failed', 'not-an-address', 'invalid_address'],
        ['notification.sent', 'good@example.com', undefined],
      ]),
    );
    expect(events[0].type).toBe('invoice.created');

    const before = (await t.call({ method: 'GET', url: `/api/v1/invoices/${doc.public_id}`, headers: ACME })).json().metadata.changed_at;
    await new Promise((r) => setTimeout(r, 5));
    expect((await request(t, `${doc.invoice_url}/payment-reported`, { method: 'POST' })).statusCode).toBeLessThan(400);
    const after = await eventsOf(doc.public_id, (e) => e.some((x) => x.type === 'invoice.payment_reported'));
    expect(after.at(-1)).toMatchObject({ type: 'invoice.payment_reported', data: { public_id: doc.public_id, revision: 1 } });
    const changed = (await t.call({ method: 'GET', url: `/api/v1/invoices/${doc.public_id}`, headers: ACME })).json().metadata.changed_at;
    expect(changed > before).toBe(true);
  });

  it('records edo.status_changed for each move, with operator ids and the rejection reason', async () => {
    const doc = await createOk(t, simpleDoc('N-2', { buyer_edo_id: '2BM-REJECT-0001' }));
    await t.app.edo.worker.sendDue();
    current = new Date(current.getTime() + 300_000);
    await t.app.edo.worker.readFeed();
    const moves = (await eventsOf(doc.public_id, (e) => e.filter((x) => x.type === 'edo.status_changed').length >= 3)).filter((e) => e.type === 'edo.status_changed').map((e) => e.data);
    expect(moves.map((m) => [m.from, m.to])).toEqual([
      ['queued', 'sent'],
      ['sent', 'delivered'],
      ['delivered', 'rejected'],
    ]);
    expect(moves[0]).toMatchObject({ public_id: doc.public_id, revision: 1, operator: 'sandbox', buyer_edo_id: '2BM-REJECT-0001' });
    expect(moves[0].operator_document_id).toMatch(/^SBX-/);
    expect(moves[2].rejection_reason).toEqual(expect.stringContaining('отклонил'));
  });
});
