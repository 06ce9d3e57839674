/**
 * The webhook endpoints API's rules: another team never sees an endpoint, its
 * deliveries or its events (404); URL safety; the tariff's max_webhook_endpoints; demo dry-run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY, bootstrapFixture } from '../../helpers/fixtures.js';
import { checkUrlForm, checkWebhookUrl } from '../../../src/modules/webhooks/url-safety.js';
import { postWebhook } from '../../../src/modules/webhooks/http-post.js';
import { HostResolver } from '../../../src/modules/webhooks/host-resolver.js';
import { ACME } from '../invoices/write-helpers.js';
import { Receiver } from './receiver.js';

const BETA = { 'x-api-key': BETA_KEY };
let t: TestApp;

beforeAll(async () => {
  const fixture = bootstrapFixture() as any;
  // The basic tariff (acme) allows 2 endpoints; beta keeps the default (5).
  fixture.tariffs.basic.max_webhook_endpoints = 2;
  t = await buildTestApp({ bootstrap: fixture, env: { INVOICING_WEBHOOK_ALLOW_HTTP: 'true', INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' } });
});
afterAll(async () => {
  await t.close();
});

const create = (headers: Record<string, string>, payload: unknown) => t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers, payload: payload as never });

describe('webhook endpoints', () => {
  it('hides one team’s endpoint, deliveries and events from another (404 webhook_endpoint_not_found)', async () => {
    const created = await create(ACME, { url: 'http://127.0.0.1:9/hook' });
    expect(created.statusCode).toBe(201);
    const id = created.json().endpoint.id as string;
    const calls = [
      { method: 'GET', url: `/api/v1/webhook_endpoints/${id}` },
      { method: 'PATCH', url: `/api/v1/webhook_endpoints/${id}`, payload: { enabled: false } },
      { method: 'DELETE', url: `/api/v1/webhook_endpoints/${id}` },
      { method: 'POST', url: `/api/v1/webhook_endpoints/${id}/rotate_secret`, payload: {} },
      { method: 'POST', url: `/api/v1/webhook_endpoints/${id}/test` },
      { method: 'POST', url: `/api/v1/webhook_endpoints/${id}/replay`, payload: { event_ids: ['evt_00000000000000000000000000000001'] } },
      { method: 'GET', url: `/api/v1/webhook_endpoints/${id}/deliveries` },
    ] as const;
    for (const c of calls) {
      const res = await t.call({ ...c, headers: BETA } as never);
      expect(res.statusCode, `${c.method} ${c.url}`).toBe(404);
      expect(res.json().error).toBe('webhook_endpoint_not_found');
    }
    expect((await t.call({ method: 'GET', url: '/api/v1/webhook_endpoints', headers: BETA })).json().items).toEqual([]);
    expect((await t.call({ method: 'GET', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/v1/webhook_endpoints/we_unknown', headers: ACME })).statusCode).toBe(404);
    await t.call({ method: 'DELETE', url: `/api/v1/webhook_endpoints/${id}`, headers: ACME });
  });

  it('refuses URLs to loopback, private, link-local and metadata addresses unless allowed (400 invalid_webhook_url)', async () => {
    for (const url of ['http://10.0.0.1/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://192.168.1.1/x', 'http://127.0.0.2/x', 'ftp://example.com/x', 'http://user:pw@127.0.0.1/x']) {
      const res = await create(ACME, { url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toBe('invalid_webhook_url');
      expect(res.json().details, url).toBeTruthy();
    }
  });

  it('is https-only unless the operator allows http, and checks the address actually connected to', async () => {
    const strict = { allowHttp: false, allowPrivate: [] as string[] };
    expect(() => checkUrlForm('http://example.com/hook', strict)).toThrow(/https/);
    expect(checkUrlForm('https://example.com/hook', strict).hostname).toBe('example.com');
    const resolver = new HostResolver({ timeoutMs: 2000 });
    await expect(checkWebhookUrl('https://127.0.0.1/hook', strict, resolver)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl('https://[::ffff:169.254.169.254]/hook', strict, resolver)).rejects.toThrow(/link-local/);
    // A name (no literal) goes through the guarded lookup at connect time: localhost is refused there.
    const receiver = new Receiver();
    const url = await receiver.start();
    try {
      const byName = url.replace('127.0.0.1', 'localhost');
      const refused = await postWebhook(byName, {}, '{}', { timeoutMs: 2000, policy: { allowHttp: true, allowPrivate: [] }, resolver });
      expect(refused).toMatchObject({ statusCode: null, error: expect.stringMatching(/refused: .*loopback/) });
      expect(receiver.received).toHaveLength(0);
      const allowed = await postWebhook(byName, {}, '{}', { timeoutMs: 2000, policy: { allowHttp: true, allowPrivate: ['127.0.0.0/8', '::1'] }, resolver });
      expect(allowed).toMatchObject({ statusCode: 200, error: null });
      // A redirect is not followed: it is a failed attempt.
      receiver.answers.push({ status: 302 });
      const redirected = await postWebhook(url, {}, '{}', { timeoutMs: 2000, policy: { allowHttp: true, allowPrivate: ['127.0.0.1'] }, resolver });
      expect(redirected).toMatchObject({ statusCode: 302, error: expect.stringContaining('HTTP 302') });
      // A huge answer is not read past 64 KB.
      receiver.answers.push({ status: 200, body: 'x'.repeat(2_000_000) });
      const huge = await postWebhook(url, {}, '{}', { timeoutMs: 2000, policy: { allowHttp: true, allowPrivate: ['127.0.0.1'] }, resolver });
      expect(huge).toMatchObject({ statusCode: 200, error: null });
    } finally {
      await receiver.close();
    }
  });

  it('refuses endpoints beyond the tariff’s max_webhook_endpoints with 403', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await create(ACME, { url: `http://127.0.0.1:9/h${i}` });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().endpoint.id);
    }
    const over = await create(ACME, { url: 'http://127.0.0.1:9/h3' });
    expect(over.statusCode).toBe(403);
    expect(over.json().error).toBe('webhook_endpoints_over_tariff_limit');
    await t.call({ method: 'DELETE', url: `/api/v1/webhook_endpoints/${ids[0]}`, headers: ACME });
    expect((await create(ACME, { url: 'http://127.0.0.1:9/h4' })).statusCode).toBe(201);
  });

  it('never lets concurrent creates pass the tariff limit together', async () => {
    const listed = await t.call({ method: 'GET', url: '/api/v1/webhook_endpoints', headers: BETA });
    const room = 5 - (listed.json().items as unknown[]).length;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create(BETA, { url: `http://127.0.0.1:9/race${i}` })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(room);
    expect(results.filter((r) => r.statusCode === 403)).toHaveLength(8 - room);
    const after = await t.call({ method: 'GET', url: '/api/v1/webhook_endpoints', headers: BETA });
    expect(after.json().items).toHaveLength(5);
  });

  it('bounds the body: unknown event types, too many, unknown fields are 400', async () => {
    for (const payload of [{ url: 'http://127.0.0.1:9/x', events: ['invoice.exploded'] }, { url: 'http://127.0.0.1:9/x', extra: 1 }, { url: 'x'.repeat(3000) }]) {
      const res = await create(BETA, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
    }
  });

  it('is a dry-run with the demo token', async () => {
    const res = await create({ 'x-api-key': 'demo-token' }, { url: 'http://127.0.0.1:9/demo' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ demo_mode: true, endpoint: { url: 'http://127.0.0.1:9/demo' } });
    expect((await t.call({ method: 'GET', url: '/api/v1/webhook_endpoints', headers: { 'x-api-key': 'demo-token' } })).json().items).toEqual([]);
    const rows = await t.db.db.selectFrom('webhook_endpoints').select('id').where('url', '=', 'http://127.0.0.1:9/demo').execute();
    expect(rows).toEqual([]);
  });
});
