/**
 * The service gate through the real API: the tariff's daily e-mail quota (also under
 * concurrent writes), a tariff without external sharing, and demo mode.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { bootstrapFixture } from '../../helpers/fixtures.js';
import { appEnv, countRows, doc, FAST_NOTIFICATIONS, get, post, recipients, reserved } from './api-helpers.js';
import { startSmtpServer, type TestSmtpServer } from './smtp-helpers.js';

const TWO_KEY = 'ak_two_main_0001';
const FIVE_KEY = 'ak_five_main_0001';
const CLOSED_KEY = 'ak_closed_main_0001';

/** The fixture plus three teams with their own tariffs (org-1's INN in each). */
function bootstrap() {
  const base = bootstrapFixture();
  const team = (id: string, tariff: string, keyId: number, secret: string) => ({
    id,
    name: id,
    tariff,
    api_keys: [{ id: keyId, name: 'main', secret, active: true }],
    organizations: [{ id: `${id}-org`, name: `ООО «${id}»`, inn: '7707083893', active: true }],
  });
  return {
    ...base,
    tariffs: {
      ...base.tariffs,
      two: { emails_per_day: 2, external_share: true },
      five: { emails_per_day: 5, external_share: true },
      closed: { emails_per_day: 50, external_share: false },
    },
    teams: [...base.teams, team('two', 'two', 301, TWO_KEY), team('five', 'five', 401, FIVE_KEY), team('closed', 'closed', 501, CLOSED_KEY)],
  };
}

let server: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  server = await startSmtpServer();
  t = await buildTestApp({ env: appEnv(server.url), bootstrap: bootstrap(), notifications: FAST_NOTIFICATIONS });
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});
beforeEach(() => {
  server.received.length = 0;
});

describe('the daily e-mail quota (emails_per_day)', () => {
  it('sends up to the quota and blocks the rest (207)', async () => {
    const res = await post(
      t,
      { invoice: doc('Q-1', { api_recipients: recipients('q1@buyer.example', 'q2@buyer.example', 'q3@buyer.example') }), notify_recipients: true },
      {},
      TWO_KEY,
    );
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body.notifications).toMatchObject({
      planned_count: 3,
      sent_count: 2,
      failed_count: 1,
      sent_to: ['q1@buyer.example', 'q2@buyer.example'],
      blocked_by_service_gate: true,
      block_reason: 'emails_per_day_exceeded',
      failed: [expect.objectContaining({ email: 'q3@buyer.example', error: 'emails_per_day_exceeded', code: 'blocked', state: 'blocked' })],
    });
    // The tariff rule that stopped the e-mail shows in service_status (contract 4, "Statuses");
    // the share links still work.
    expect(body.status).toMatchObject({
      buyer_status: 'sent',
      service_status: 'restricted',
      service_status_label: 'Ограничен',
      service_status_reason: 'emails_per_day_exceeded',
    });
    expect(body.share_gate).toMatchObject({ available: true, reason: '' });
    expect(server.received.map((m) => m.envelopeTo[0]).sort()).toEqual(['q1@buyer.example', 'q2@buyer.example']);
    const stored = await get(t, body.public_id, TWO_KEY);
    expect(stored.metadata.notifications).toEqual(body.notifications);
    expect(stored.status).toEqual(body.status);

    // The quota is used up for today: the next write sends nothing.
    const next = await post(t, { invoice: doc('Q-2', { buyer: { name: 'B', email: 'q4@buyer.example' } }), notify_recipients: true }, {}, TWO_KEY);
    expect(next.statusCode).toBe(207);
    expect(next.json().notifications).toMatchObject({ sent_count: 0, blocked_by_service_gate: true, block_reason: 'emails_per_day_exceeded' });
    expect(next.json().status.service_status_reason).toBe('emails_per_day_exceeded');
    expect(server.received).toHaveLength(2);
    expect(await reserved(t, 'two')).toBe(2);

    // A write that asks for no e-mail is not restricted by the quota.
    const quiet = await post(t, { invoice: doc('Q-3') }, {}, TWO_KEY);
    expect(quiet.statusCode).toBe(200);
    expect(quiet.json().status).toMatchObject({ service_status: 'active', service_status_reason: '' });
  });

  it('never lets concurrent writes exceed the quota in total', async () => {
    const writes = Array.from({ length: 6 }, (_, i) =>
      post(
        t,
        { invoice: doc(`C-${i}`, { api_recipients: recipients(`c${i}a@buyer.example`, `c${i}b@buyer.example`) }), notify_recipients: true },
        {},
        FIVE_KEY,
      ),
    );
    const responses = await Promise.all(writes);
    const outcomes = responses.map((r) => r.json().notifications);
    expect(responses.every((r) => r.statusCode === 200 || r.statusCode === 207)).toBe(true);
    const sent = outcomes.reduce((n, o) => n + o.sent_count, 0);
    const blocked = outcomes.flatMap((o) => o.failed).filter((f: { state: string }) => f.state === 'blocked');
    expect(sent).toBe(5);
    expect(blocked).toHaveLength(7);
    expect(blocked.every((f: { error: string }) => f.error === 'emails_per_day_exceeded')).toBe(true);
    expect(server.received).toHaveLength(5);
    expect(await reserved(t, 'five')).toBe(5);
    for (const r of responses) expect(r.statusCode).toBe(r.json().notifications.sent_count === 2 ? 200 : 207);
  });
});

describe('a tariff without external sharing', () => {
  it('blocks every e-mail with tariff_external_share_disabled (207) and takes no quota', async () => {
    const res = await post(
      t,
      { invoice: doc('X-1', { api_recipients: recipients('x1@buyer.example', 'x2@buyer.example') }), notify_recipients: true },
      {},
      CLOSED_KEY,
    );
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body.notifications).toMatchObject({
      planned_count: 2,
      sent_count: 0,
      failed_count: 2,
      sent_to: [],
      blocked_by_service_gate: true,
      block_reason: 'tariff_external_share_disabled',
    });
    expect(body.notifications.failed.map((f: { email: string; state: string; error: string }) => [f.email, f.state, f.error])).toEqual([
      ['x1@buyer.example', 'blocked', 'tariff_external_share_disabled'],
      ['x2@buyer.example', 'blocked', 'tariff_external_share_disabled'],
    ]);
    expect(body.status).toMatchObject({ buyer_status: 'not_sent', service_status: 'restricted', service_status_reason: 'tariff_external_share_disabled' });
    expect(body.share_gate).toMatchObject({ available: false, reason: 'tariff_external_share_disabled' });
    expect(server.received).toHaveLength(0);
    expect(await reserved(t, 'closed')).toBe(0);
    expect((await get(t, body.public_id, CLOSED_KEY)).metadata.notifications).toEqual(body.notifications);
    // The restriction is news for integrators: an invoice.restricted event with its reason.
    expect(await restrictedEvents(body.public_id, CLOSED_KEY)).toEqual([
      expect.objectContaining({ type: 'invoice.restricted', data: expect.objectContaining({ public_id: body.public_id, revision: 1, reason: 'tariff_external_share_disabled' }) }),
    ]);
  });
});

/** The document's invoice.restricted events (polling: on PostgreSQL an event shows once older transactions ended). */
async function restrictedEvents(publicId: string, key: string): Promise<unknown[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await t.call({ method: 'GET', url: '/api/v1/events?types=invoice.restricted&limit=200', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    const found = (res.json().items as Array<{ data: { public_id: string } }>).filter((e) => e.data.public_id === publicId);
    if (found.length > 0 || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('demo mode', () => {
  it('reports every planned e-mail blocked with demo_mode (207); nothing stored, nothing sent', async () => {
    const tables = ['invoices', 'share_links', 'outbox', 'email_quota', 'idempotency_keys'] as const;
    const before = await Promise.all(tables.map((x) => countRows(t, x)));
    const res = await post(
      t,
      { invoice: doc('DM-1', { api_recipients: recipients('d1@buyer.example', 'not-an-email') }), notify_recipients: true },
      { 'idempotency-key': 'demo-1' },
      'demo-token',
    );
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body.demo_mode).toBe(true);
    expect(body.notifications).toMatchObject({
      requested: true,
      planned_count: 2,
      sent_count: 0,
      failed_count: 2,
      sent_to: [],
      blocked_by_service_gate: true,
      block_reason: 'demo_mode',
    });
    expect(body.notifications.failed.map((f: { email: string }) => f.email)).toEqual(['d1@buyer.example', 'not-an-email']);
    expect(body.metadata.notifications).toEqual(body.notifications);
    expect(await Promise.all(tables.map((x) => countRows(t, x)))).toEqual(before);
    expect(server.received).toHaveLength(0);
  });
});
