/**
 * Operator endpoints: liveness, readiness (with the database gone: 503 not_ready) and
 * Prometheus metrics whose labels never carry a key, an id or a raw URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb, type TestDatabase } from '../helpers/db.js';
import { ACME_KEY, bootstrapFixture } from '../helpers/fixtures.js';

const CATALOG = '/api/v1/ref/catalog';

/** `name{labels} value` samples of one metric, labels parsed. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = line.match(/^[a-z_:]+(?:\{(.*)\})? (\S+)$/i);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[1] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    out.push({ labels, value: Number(m[2]) });
  }
  return out;
}

describe('operations endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      env: { INVOICING_IP_RATE_PER_SEC: '100000' },
      bootstrap: bootstrapFixture({ basicKeyRate: { per_sec: 1000, per_min: 100_000, per_day: 3 } }),
    });
  });
  afterAll(async () => t.close());

  it('answers /healthz and /readyz with 200 without a key', async () => {
    const health = await t.call({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ ok: true, status: 'alive' });
    const ready = await t.call({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    // The test app counts rate limits in memory: no Redis.
    expect(ready.json()).toEqual({ ok: true, status: 'ready', database: 'ok', redis: 'none' });
  });

  it('exposes request counts by method, route pattern and status in the Prometheus text format', async () => {
    await t.call({ method: 'GET', url: '/healthz' });
    const res = await t.call({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE invoicing_http_requests_total counter');
    expect(res.body).toContain('# HELP invoicing_http_requests_total');
    expect(res.body).toMatch(/^invoicing_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]\d*$/m);
    expect(res.body).toContain('# TYPE invoicing_http_request_duration_seconds histogram');
    expect(res.body).toMatch(/^invoicing_process_cpu_user_seconds_total /m);
  });

  it('counts 429 refusals by the limit that refused them', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } })).statusCode).toBe(200);
    }
    const refused = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } });
    expect(refused.statusCode).toBe(429);
    const text = (await t.call({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('# TYPE invoicing_rate_limit_refusals_total counter');
    expect(samples(text, 'invoicing_rate_limit_refusals_total')).toContainEqual({ labels: { code: 'key_per_day' }, value: 1 });
    expect(samples(text, 'invoicing_http_requests_total')).toContainEqual({
      labels: { method: 'GET', route: CATALOG, status: '429' },
      value: 1,
    });
  });

  it('never puts a key, an id or a raw URL with a query into a label', async () => {
    const secret = 'ak_label_probe_secret_0001';
    await t.call({ method: 'GET', url: `${CATALOG}?api_key=${secret}` });
    await t.call({ method: 'GET', url: `${CATALOG}?api_key=${ACME_KEY}&limit=1` });
    await t.call({ method: 'GET', url: `/api/v1/invoices/label-probe-id-0001?api_key=${secret}` });
    await t.call({ method: 'GET', url: `/no/such/route/${secret}?api_key=${secret}` });
    await t.call({ method: 'DELETE', url: `${CATALOG}?api_key=${secret}` });
    await t.call({ method: 'GET', url: `/healthz?api_key=${secret}` });
    const text = (await t.call({ method: 'GET', url: '/metrics' })).body;
    expect(text).not.toContain(secret);
    expect(text).not.toContain(ACME_KEY);
    expect(text).not.toContain('label-probe-id-0001');
    expect(text).not.toContain('/no/such/route');
    for (const { labels } of samples(text, 'invoicing_http_requests_total')) {
      expect(labels.route).not.toContain('?');
      expect(labels.route === 'unmatched' || labels.route?.startsWith('/'), labels.route).toBe(true);
    }
    const routes = new Set(samples(text, 'invoicing_http_requests_total').map((s) => s.labels.route));
    expect(routes).toContain('/api/v1/invoices/:public_id');
    expect(routes).toContain('unmatched');
  });
});

describe('readiness when the database is gone', () => {
  let db: TestDatabase;
  let t: TestApp;
  beforeAll(async () => {
    db = await createTestDb();
    t = await buildTestApp({ db });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('answers /readyz with 503 not_ready once the database handle is closed, while /healthz stays 200', async () => {
    expect((await t.call({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await db.close();
    const res = await t.call({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ ok: false, error: 'not_ready' });
    expect(res.body).not.toMatch(/sqlite|postgres|destroyed|connection/i);
    expect((await t.call({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(t.logs.some((l) => l.includes('readiness check failed'))).toBe(true);
  });
});

describe('/metrics behind INVOICING_METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789abcdef';
  let app: TestApp;
  beforeAll(async () => {
    app = await buildTestApp({ env: { INVOICING_METRICS_TOKEN: token } });
  });
  afterAll(async () => app?.close());

  it('is 401 unauthorized (metrics_token_invalid) without the bearer token or with a wrong one, 200 with it', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789abcdef' }, { authorization: token }, { 'x-api-key': token }]) {
      const res = await app.call({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ ok: false, error: 'unauthorized', code: 'metrics_token_invalid' });
      expect(res.body).not.toContain('http_requests');
    }
    const ok = await app.call({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# HELP');
  });
});
