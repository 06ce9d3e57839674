/**
 * Bounds on who counts as one caller (contract section 7): the published demo token has its own
 * per-client rate, counted on the node and never in the shared store, and a write body of at
 * most 256 KB; an IPv6 client is counted by its /64; a service key counts per team it acts for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf } from '../../src/http/rate-limit/rules.js';
import { MemoryStore } from '../../src/http/rate-limit/memory-store.js';
import type { ConsumeResult, LimitRule, RateLimitStore } from '../../src/http/rate-limit/rate-limit.types.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { bootstrapFixture, SERVICE_KEY } from '../helpers/fixtures.js';
import { statementsDuring } from '../helpers/statements.js';

/** The shared store, observed: every rule key it was asked to count. */
class ObservedStore implements RateLimitStore {
  readonly keys: string[] = [];
  private readonly inner = new MemoryStore();
  consume(rules: LimitRule[], nowMs: number): Promise<ConsumeResult> {
    for (const rule of rules) this.keys.push(rule.key);
    return this.inner.consume(rules, nowMs);
  }
  async close(): Promise<void> {}
}

const DEMO = { 'x-api-key': 'demo-token' };

/** Runs `burst` from the start of a fresh one-second window. */
async function inFreshSecond<T>(burst: () => Promise<T>): Promise<T> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
  return burst();
}

describe('the demo token', () => {
  let t: TestApp;
  let store: ObservedStore;

  beforeAll(async () => {
    store = new ObservedStore();
    t = await buildTestApp({ rateLimitStore: store, env: { INVOICING_DEMO_RATE_PER_SEC: '2' } });
  });
  afterAll(async () => t?.close());

  it('has its own per-client rate: the third request in a second is 429 demo_per_sec', async () => {
    const codes = await inFreshSecond(async () => {
      const out: number[] = [];
      for (let i = 0; i < 3; i++) out.push((await t.call({ method: 'GET', url: '/api/v1/invoices', headers: DEMO })).statusCode);
      return out;
    });
    expect(codes.slice(0, 2)).toEqual([200, 200]);
    expect(codes[2]).toBe(429);
    const refused = await t.call({ method: 'GET', url: '/api/v1/invoices', headers: DEMO });
    if (refused.statusCode === 429) expect(refused.json()).toMatchObject({ error: 'rate_limited', code: 'demo_per_sec' });
  });

  it('counts another client apart (a demo caller cannot use up everyone’s demo)', async () => {
    const codes = await inFreshSecond(async () => {
      const a = [];
      for (let i = 0; i < 3; i++) a.push((await t.call({ method: 'GET', url: '/api/v1/invoices', headers: DEMO, remoteAddress: '203.0.113.7' })).statusCode);
      const b = (await t.call({ method: 'GET', url: '/api/v1/invoices', headers: DEMO, remoteAddress: '203.0.113.8' })).statusCode;
      return { a, b };
    });
    expect(codes.a[2]).toBe(429);
    expect(codes.b).toBe(200);
  });

  it('never reaches the shared store or the database', async () => {
    store.keys.length = 0;
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const statements = await statementsDuring(async () => {
      const list = await t.call({ method: 'GET', url: '/api/v1/invoices', headers: DEMO, remoteAddress: '198.51.100.1' });
      expect(list.statusCode).toBe(200);
      const write = await t.call({
        method: 'POST',
        url: '/api/v1/invoices',
        headers: DEMO,
        remoteAddress: '198.51.100.1',
        payload: { number: '1', date: '2026-03-02', currency: 'RUB', seller: { inn: '7707083893' }, buyer: { name: 'ООО «Покупатель»' }, items: [{ name: 'Работа', qty: 1, price: 100 }] },
      });
      expect(write.statusCode).toBe(200);
      expect(write.json().demo_mode).toBe(true);
    });
    expect(statements).toEqual([]);
    expect(store.keys).toEqual([]);
  });

  it('takes a write body of at most 256 KB: 413 payload_too_large beyond, also without Content-Length', async () => {
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const big = JSON.stringify({ number: '1', date: '2026-03-02', note: 'x'.repeat(300 * 1024) });
    const withLength = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: { ...DEMO, 'content-type': 'application/json' }, payload: big, remoteAddress: '198.51.100.2' });
    expect(withLength.statusCode).toBe(413);
    expect(withLength.json()).toMatchObject({ ok: false, error: 'payload_too_large' });
    expect(withLength.json().details).toContain('256 KB');
    const { Readable } = await import('node:stream');
    const chunked = await t.call({
      method: 'POST',
      url: '/api/v1/invoices',
      headers: { ...DEMO, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      payload: Readable.from([Buffer.from(big)]),
      remoteAddress: '198.51.100.3',
    });
    expect(chunked.statusCode).toBe(413);
    expect(chunked.json()).toMatchObject({ error: 'payload_too_large' });
  });
});

describe('who one client is', () => {
  it('counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4', () => {
    expect(clientOf('2001:db8:1:2:aaaa::1')).toBe(clientOf('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(clientOf('2001:db8:1:2::1')).not.toBe(clientOf('2001:db8:1:3::1'));
    expect(clientOf('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientOf('203.0.113.9')).toBe('203.0.113.9');
  });

  it('refuses the 11th request of one /64 from different addresses (IP rate 10)', async () => {
    const t = await buildTestApp({ env: { INVOICING_IP_RATE_PER_SEC: '10' } });
    try {
      const codes = await inFreshSecond(async () => {
        const out: number[] = [];
        for (let i = 1; i <= 11; i++) out.push((await t.call({ method: 'GET', url: '/healthz', remoteAddress: `2001:db8:5:6::${i.toString(16)}` })).statusCode);
        return out;
      });
      expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(1);
      expect(codes[0]).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('a service key', () => {
  let t: TestApp;
  beforeAll(async () => {
    const bootstrap = bootstrapFixture({ basicKeyRate: { per_sec: 1000, per_min: 2, per_day: 100_000 } });
    // Both teams on the same tariff: the key's per-minute rate is 2 for either tenant (a minute,
    // not a second: a loaded machine cannot spread the burst over two windows).
    (bootstrap.teams[1] as Record<string, unknown>).tariff = 'basic';
    t = await buildTestApp({ bootstrap });
  });
  afterAll(async () => t?.close());

  it('counts per team it acts for: one tenant using up its rate leaves another tenant’s alone', async () => {
    // Not in the last 10 s of a minute: the burst stays in one window.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 50));
    const results = await (async () => {
      const acme: number[] = [];
      for (let i = 0; i < 3; i++) acme.push((await t.call({ method: 'GET', url: '/api/v1/ref/catalog', headers: { 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'acme' } })).statusCode);
      const beta = (await t.call({ method: 'GET', url: '/api/v1/ref/catalog', headers: { 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'beta' } })).statusCode;
      return { acme, beta };
    })();
    expect(results.acme[2]).toBe(429);
    expect(results.beta).toBe(200);
  });
});
