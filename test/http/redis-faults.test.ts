/**
 * Redis faults survived (operating contract, section 7): two app instances count their rate
 * limits in one Redis through a TCP proxy the test controls, each with the service's own store
 * (runtime.ts `createRateLimitStore`, real ioredis connections). Redis stalled (connections kept,
 * nothing answered) or refused: requests are still answered promptly and still limited, each
 * instance counting on its own, and `/readyz` says `redis: "degraded"`; when Redis is back, the
 * instances share one count again. Runs where REDIS_URL names a Redis.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { createRateLimitStore } from '../../src/runtime.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb, type TestDatabase } from '../helpers/db.js';
import { ACME_KEY, bootstrapFixture } from '../helpers/fixtures.js';
import { until } from '../helpers/process.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

vi.setConfig({ testTimeout: 30_000 });

const REDIS_URL = process.env.REDIS_URL;
const CATALOG = '/api/v1/ref/catalog';
/** The key's limit per second: one count for both instances when Redis answers, one each when not. */
const PER_SEC = 3;

/**
 * REDIS_URL with the Redis database of this vitest worker (1 to 15), as the process tests use:
 * test files running at the same time never share the service's counters.
 */
function redisOfThisWorker(url: string): string {
  const parsed = new URL(url);
  const pool = Number(process.env.VITEST_POOL_ID);
  if (Number.isInteger(pool) && pool >= 1 && (parsed.pathname === '' || parsed.pathname === '/')) parsed.pathname = `/${((pool - 1) % 15) + 1}`;
  return parsed.toString();
}

/** Runs `burst` from the start of a fixed one-second window; again in the next one if it straddled two. */
async function inOneSecond<T>(burst: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await new Promise((r) => setTimeout(r, 1_000 - (Date.now() % 1_000) + 20));
    const window = Math.floor(Date.now() / 1_000);
    const result = await burst();
    if (Math.floor(Date.now() / 1_000) === window || attempt === 5) return result;
  }
}

describe.skipIf(!REDIS_URL)('Redis stalled, refused and back, under two instances', () => {
  let proxy: TcpProxy;
  let db: TestDatabase;
  const limiters: Array<ReturnType<typeof createRateLimitStore>> = [];
  let a: TestApp;
  let b: TestApp;

  const get = (t: TestApp) => t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } });
  const redisState = async (t: TestApp) => (await t.call({ method: 'GET', url: '/readyz' })).json().redis as string;

  /** `n` requests on `t`, one after the other: their statuses, and the slowest in ms. */
  async function burst(t: TestApp, n: number): Promise<{ statuses: number[]; slowestMs: number }> {
    const statuses: number[] = [];
    let slowestMs = 0;
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const res: LightMyRequestResponse = await get(t);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      statuses.push(res.statusCode);
      if (res.statusCode === 429) expect(res.json()).toMatchObject({ error: 'rate_limited', code: 'key_per_sec' });
    }
    return { statuses, slowestMs };
  }

  /** One count for both: 2 on `a` and 1 on `b` fill it, the next on either is refused. */
  async function expectShared(): Promise<void> {
    const [first, second, third] = await inOneSecond(async () => [await burst(a, 2), await burst(b, 1), await burst(a, 1)]);
    expect([...first!.statuses, ...second!.statuses, ...third!.statuses]).toEqual([200, 200, 200, 429]);
  }

  /** Each counts alone: PER_SEC on each pass, the next on each is refused, none waits on Redis. */
  async function expectPerInstance(): Promise<void> {
    const [onA, onB] = await inOneSecond(async () => [await burst(a, PER_SEC + 1), await burst(b, PER_SEC + 1)]);
    const limited = [...Array(PER_SEC).fill(200), 429];
    expect(onA!.statuses).toEqual(limited);
    expect(onB!.statuses).toEqual(limited);
    // Well under the 500 ms a count may wait for Redis: nobody waits on it any more.
    expect(Math.max(onA!.slowestMs, onB!.slowestMs)).toBeLessThan(250);
    expect(await redisState(a)).toBe('degraded');
    expect(await redisState(b)).toBe('degraded');
  }

  /** The first request after the fault: answered (and counted) within the store's 500 ms bound, plus slack. */
  async function expectAnsweredPromptly(t: TestApp): Promise<void> {
    const started = performance.now();
    expect((await get(t)).statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_500);
  }

  async function expectBackToShared(): Promise<void> {
    await until('both instances to use Redis again', async () => (await redisState(a)) === 'ok' && (await redisState(b)) === 'ok', 10_000);
    await expectShared();
  }

  beforeAll(async () => {
    const url = new URL(REDIS_URL as string);
    proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 6379) });
    db = await createTestDb();
    const config = { ...loadConfig({}), redisUrl: proxy.through(redisOfThisWorker(REDIS_URL as string)) };
    const bootstrap = bootstrapFixture({ basicKeyRate: { per_sec: PER_SEC, per_min: 100_000, per_day: 10_000_000 } });
    for (let i = 0; i < 2; i++) limiters.push(createRateLimitStore(config));
    a = await buildTestApp({ db, bootstrap, rateLimitStore: limiters[0]!.store });
    b = await buildTestApp({ db, bootstrap, rateLimitStore: limiters[1]!.store });
    await until('both instances to reach Redis', async () => (await get(a)).statusCode === 200 && (await redisState(a)) === 'ok' && (await redisState(b)) === 'ok', 10_000);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const limiter of limiters) await limiter.close();
    await proxy?.close();
    await db?.drop();
  });

  it('shares one count between the instances while Redis answers', async () => {
    await expectShared();
  });

  it('stalled: requests are answered promptly and limited per instance, /readyz degraded; back: one count again', async () => {
    proxy.stall();
    await expectAnsweredPromptly(a);
    await expectAnsweredPromptly(b);
    await expectPerInstance();
    expect(a.logs.some((l) => l.includes('Redis does not answer'))).toBe(true);
    await proxy.pass();
    await expectBackToShared();
    expect(a.logs.some((l) => l.includes('Redis answers again'))).toBe(true);
  });

  it('refused: the same, and back once Redis takes connections again', async () => {
    await proxy.refuse();
    await expectAnsweredPromptly(a);
    await expectAnsweredPromptly(b);
    await expectPerInstance();
    await proxy.pass();
    await expectBackToShared();
  });
});
