/**
 * Rate limits through HTTP (spec 8, contract 4): per IP on every route, per key and per team
 * on /api/v1/*, the 429 body and headers, the IETF RateLimit headers on every response,
 * limits shared across instances through Redis, and counting in the process when Redis is down.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/http/rate-limit/memory-store.js';
import type { LimitRule } from '../../src/http/rate-limit/rate-limit.types.js';
import { RedisStore } from '../../src/http/rate-limit/redis-store.js';
import { loadConfig } from '../../src/config/config.js';
import { createRateLimitStore } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb, type TestDatabase } from '../helpers/db.js';
import { ACME_KEY, ACME_KEY_2, bootstrapFixture } from '../helpers/fixtures.js';

const CATALOG = '/api/v1/ref/catalog';
const REDIS_URL = process.env.REDIS_URL;
const GENEROUS = { per_sec: 1000, per_min: 100_000, per_day: 10_000_000 };

/**
 * Waits, when needed, so that at least `needMs` remain in the current fixed window of
 * `windowMs` (windows are aligned to the epoch): a burst then falls into one window.
 */
async function withRoomInWindow(windowMs: number, needMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 20));
}

/** Waits for the start of the next fixed window of `windowMs`. */
async function nextWindow(windowMs: number): Promise<void> {
  await new Promise((r) => setTimeout(r, windowMs - (Date.now() % windowMs) + 20));
}

/**
 * Runs `burst` inside one fixed window of `windowMs`, starting at a window's beginning; when a
 * slow machine lets it straddle two windows, runs it again in the next one.
 */
async function inOneWindow<T>(windowMs: number, burst: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await nextWindow(windowMs);
    const window = Math.floor(Date.now() / windowMs);
    const result = await burst();
    if (Math.floor(Date.now() / windowMs) === window || attempt === 5) return result;
  }
}

function expect429(res: LightMyRequestResponse, code: string): void {
  expect(res.statusCode).toBe(429);
  const body = res.json();
  expect(body).toMatchObject({ ok: false, error: 'rate_limited', code });
  expect(Number.isInteger(body.retry_after_sec)).toBe(true);
  expect(body.retry_after_sec).toBeGreaterThanOrEqual(1);
  expect(res.headers['retry-after']).toBe(String(body.retry_after_sec));
  expect(res.headers['ratelimit-policy']).toBeTruthy();
  expect(res.headers.ratelimit).toBeTruthy();
  expect(res.headers['x-request-id']).toBeTruthy();
}

/** `"name";r=…;t=…` entries of a RateLimit header, by policy name. */
function parseRateLimit(header: unknown): Map<string, { r: number; t: number }> {
  const out = new Map<string, { r: number; t: number }>();
  for (const item of String(header ?? '').split(',')) {
    const m = item.trim().match(/^"([^"]+)";r=(\d+);t=(\d+)$/);
    if (m) out.set(m[1] as string, { r: Number(m[2]), t: Number(m[3]) });
  }
  return out;
}

describe('per-IP limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_IP_RATE_PER_SEC: '3' } });
  });
  afterAll(async () => t.close());

  it('refuses the 4th request within a second with 429 ip_per_sec, on any route', async () => {
    const { ok, refused, api } = await inOneWindow(1000, async () => {
      const ok = [];
      for (let i = 0; i < 3; i++) ok.push(await t.call({ method: 'GET', url: '/healthz' }));
      const refused = await t.call({ method: 'GET', url: '/healthz' });
      // The same IP is refused on the API too, before its key is even looked at.
      const api = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } });
      return { ok, refused, api };
    });
    expect(ok.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    for (const res of ok) expect(res.headers['ratelimit-policy']).toBe('"ip-sec";q=3;w=1');
    expect(ok.map((r) => parseRateLimit(r.headers.ratelimit).get('ip-sec')?.r)).toEqual([2, 1, 0]);

    expect429(refused, 'ip_per_sec');
    expect(refused.headers['ratelimit-policy']).toBe('"ip-sec";q=3;w=1');
    expect(refused.headers.ratelimit).toMatch(/^"ip-sec";r=0;t=1$/);
    expect(refused.json().retry_after_sec).toBe(1);
    expect429(api, 'ip_per_sec');
  });

  it('lets the IP through again in the next window', async () => {
    await nextWindow(1000);
    expect((await t.call({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('one call to the store per request', () => {
  /** The memory store, counting the calls and the rules of each. */
  class CountingStore extends MemoryStore {
    calls: string[][] = [];
    override consume(rules: LimitRule[], nowMs: number) {
      this.calls.push(rules.map((r) => r.policy));
      return super.consume(rules, nowMs);
    }
  }
  let t: TestApp;
  const store = new CountingStore();
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_IP_RATE_PER_SEC: '3' }, rateLimitStore: store });
  });
  afterAll(async () => t.close());

  it('counts the IP with the key and team rules on the API, alone elsewhere and when authentication fails', async () => {
    const { ok, health, unauthorized } = await inOneWindow(1000, async () => {
      store.calls = [];
      const ok = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } });
      const health = await t.call({ method: 'GET', url: '/healthz' });
      const unauthorized = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': 'ak_nobody_0000' } });
      return { ok, health, unauthorized };
    });
    expect(store.calls).toEqual([['ip-sec', 'key-sec', 'key-min', 'key-day', 'team-sec', 'team-min', 'team-day'], ['ip-sec'], ['ip-sec']]);
    expect(ok.statusCode).toBe(200);
    expect(parseRateLimit(ok.headers.ratelimit).get('ip-sec')?.r).toBe(2);
    expect(health.statusCode).toBe(200);
    expect(parseRateLimit(health.headers.ratelimit).get('ip-sec')?.r).toBe(1);
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers.ratelimit).toBe('"ip-sec";r=0;t=1');
  });

  it('an IP refusal wins over the key check, and a full IP is refused without asking the store again', async () => {
    const { refused, badKey, again } = await inOneWindow(1000, async () => {
      for (let i = 0; i < 3; i++) await t.call({ method: 'GET', url: '/healthz' });
      store.calls = [];
      // Refused by the store on the API: the IP's window is full, whatever the key.
      const refused = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } });
      const badKey = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': 'ak_nobody_0000' } });
      const again = await t.call({ method: 'GET', url: '/healthz' });
      return { refused, badKey, again };
    });
    expect429(refused, 'ip_per_sec');
    expect(refused.headers.ratelimit).toMatch(/^"ip-sec";r=0;t=1, "key-sec";r=\d+;t=1, /);
    expect429(badKey, 'ip_per_sec');
    expect429(again, 'ip_per_sec');
    expect(again.headers.ratelimit).toBe('"ip-sec";r=0;t=1');
    // The first refusal asked the store; this node then knows the window is full.
    expect(store.calls).toEqual([['ip-sec', 'key-sec', 'key-min', 'key-day', 'team-sec', 'team-min', 'team-day']]);
  });
});

describe('per-key limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ bootstrap: bootstrapFixture({ basicKeyRate: { per_sec: 2, per_min: 1000, per_day: 100_000 } }) });
  });
  afterAll(async () => t.close());

  it('refuses the 3rd request of a key within a second with 429 key_per_sec; another key still passes', async () => {
    const [first, second, refused, otherKey] = await inOneWindow(1000, async () => [
      await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }),
      await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }),
      await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }),
      await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY_2 } }),
    ]);
    if (!first || !second || !refused || !otherKey) throw new Error('burst incomplete');
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    // 200 responses say where the caller stands, for the IP, key and team windows.
    const policy = String(first.headers['ratelimit-policy']);
    expect(policy).toContain('"key-sec";q=2;w=1');
    expect(policy).toContain('"key-min";q=1000;w=60');
    expect(policy).toContain('"key-day";q=100000;w=86400');
    expect(policy).toContain('"team-sec";q=1000;w=1');
    expect(policy).toMatch(/^"ip-sec";q=\d+;w=1, /);
    const minuteLeft = parseRateLimit(first.headers.ratelimit).get('key-min')?.r as number;
    expect(parseRateLimit(first.headers.ratelimit).get('key-sec')?.r).toBe(1);
    expect(parseRateLimit(second.headers.ratelimit).get('key-sec')?.r).toBe(0);
    expect(parseRateLimit(second.headers.ratelimit).get('key-min')?.r).toBe(minuteLeft - 1);

    expect429(refused, 'key_per_sec');
    expect(refused.json().retry_after_sec).toBe(1);
    expect(refused.headers['ratelimit-policy']).toContain('"key-sec";q=2;w=1');
    // A refused request consumed nothing of the minute.
    expect(parseRateLimit(refused.headers.ratelimit).get('key-min')?.r).toBe(minuteLeft - 1);

    expect(otherKey.statusCode).toBe(200);
  });

  it('counts a key however it is presented (header, Bearer, query)', async () => {
    const [a, b, c] = await inOneWindow(1000, async () => [
      await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY_2 } }),
      await t.call({ method: 'GET', url: CATALOG, headers: { authorization: `Bearer ${ACME_KEY_2}` } }),
      await t.call({ method: 'GET', url: `${CATALOG}?api_key=${ACME_KEY_2}` }),
    ]);
    if (!a || !b || !c) throw new Error('burst incomplete');
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect429(c, 'key_per_sec');
  });
});

describe('per-team limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      bootstrap: bootstrapFixture({ basicKeyRate: GENEROUS, basicTeamRate: { per_sec: 1000, per_min: 3, per_day: 100_000 } }),
    });
  });
  afterAll(async () => t.close());

  it('shares the team window between its keys and refuses with 429 team_per_min', async () => {
    await withRoomInWindow(60_000, 5_000);
    const statuses = [];
    for (const key of [ACME_KEY, ACME_KEY_2, ACME_KEY]) {
      const res = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': key } });
      statuses.push(res.statusCode);
      expect(String(res.headers['ratelimit-policy'])).toContain('"team-min";q=3;w=60');
    }
    expect(statuses).toEqual([200, 200, 200]);

    const refused = await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY_2 } });
    expect429(refused, 'team_per_min');
    const retry = refused.json().retry_after_sec as number;
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(parseRateLimit(refused.headers.ratelimit).get('team-min')).toEqual({ r: 0, t: retry });
  });

  it('counts rate-limit refusals in the metrics', async () => {
    const metrics = await t.call({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/invoicing_rate_limit_refusals_total\{code="team_per_min"\} [1-9]/);
  });
});

describe.skipIf(!REDIS_URL)('limits shared across instances through Redis', () => {
  const connections: Redis[] = [];
  const prefix = `test:rl-http:${randomUUID()}:`;
  let db: TestDatabase;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    db = await createTestDb();
    const bootstrap = bootstrapFixture({ basicKeyRate: { per_sec: 1000, per_min: 1000, per_day: 4 } });
    const store = () => {
      const redis = new Redis(REDIS_URL as string, { maxRetriesPerRequest: 1 });
      connections.push(redis);
      return new RedisStore(redis, { prefix });
    };
    one = await buildTestApp({ db, bootstrap, rateLimitStore: store() });
    two = await buildTestApp({ db, bootstrap, rateLimitStore: store() });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    const keys = connections[0] ? await connections[0].keys(`${prefix}*`) : [];
    if (keys.length > 0) await connections[0]?.del(...keys);
    await Promise.all(connections.map((c) => c.quit()));
    await db?.drop();
  });

  it('counts one key across two instances and refuses on either with key_per_day', async () => {
    const headers = { 'x-api-key': ACME_KEY };
    const served = [
      await one.call({ method: 'GET', url: CATALOG, headers }),
      await two.call({ method: 'GET', url: CATALOG, headers }),
      await one.call({ method: 'GET', url: CATALOG, headers }),
      await two.call({ method: 'GET', url: CATALOG, headers }),
    ];
    expect(served.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(served.map((r) => parseRateLimit(r.headers.ratelimit).get('key-day')?.r)).toEqual([3, 2, 1, 0]);

    expect429(await one.call({ method: 'GET', url: CATALOG, headers }), 'key_per_day');
    const onTwo = await two.call({ method: 'GET', url: CATALOG, headers });
    expect429(onTwo, 'key_per_day');
    expect(onTwo.json().retry_after_sec).toBeGreaterThan(1);
    // Another key of the team has its own window.
    expect((await two.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY_2 } })).statusCode).toBe(200);
  });
});

describe('when Redis is unreachable', () => {
  let t: TestApp;
  let limiter: ReturnType<typeof createRateLimitStore>;
  beforeAll(async () => {
    // The service's own store (runtime.ts) on a Redis where nothing listens (port 1): every count
    // fails at once (no offline queue) and is counted in the process instead.
    limiter = createRateLimitStore({ ...loadConfig({}), redisUrl: 'redis://127.0.0.1:1' });
    t = await buildTestApp({
      env: { INVOICING_IP_RATE_PER_SEC: '1000' },
      bootstrap: bootstrapFixture({ basicKeyRate: { per_sec: 1000, per_min: 1000, per_day: 3 } }),
      rateLimitStore: limiter.store,
    });
  });
  afterAll(async () => {
    await t?.close();
    await limiter?.close();
  });

  it('counts in the process: requests are served at once up to the limit, then refused with 429; /readyz says redis degraded', async () => {
    const started = Date.now();
    const served = [];
    for (let i = 0; i < 3; i++) served.push(await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }));
    expect(served.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(served.map((r) => parseRateLimit(r.headers.ratelimit).get('key-day')?.r)).toEqual([2, 1, 0]);
    expect429(await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }), 'key_per_day');
    // Failing fast, not waiting on reconnects.
    expect(Date.now() - started).toBeLessThan(2_000);
    const ready = await t.call({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ ok: true, database: 'ok', redis: 'degraded' });
    expect(t.logs.filter((l) => l.includes('Redis does not answer: rate limits are counted in this process'))).toHaveLength(1);
  });
});
