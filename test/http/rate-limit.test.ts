import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { formatRateLimit, formatRateLimitPolicy } from '../../src/http/rate-limit/headers.js';
import { MemoryStore } from '../../src/http/rate-limit/memory-store.js';
import type { LimitRule, RateLimitStore } from '../../src/http/rate-limit/rate-limit.types.js';
import { RedisStore } from '../../src/http/rate-limit/redis-store.js';
import { apiRules, ipRules } from '../../src/http/rate-limit/rules.js';

const REDIS_URL = process.env.REDIS_URL;
const DAY_MS = 86_400_000;
/** 250 ms into a day, so every window (1 s, 60 s, 1 day) starts 250 ms before t0. */
const t0 = Math.floor(Date.now() / DAY_MS) * DAY_MS + 250;

function rule(overrides: Partial<LimitRule> = {}): LimitRule {
  return { policy: 'key-sec', code: 'key_per_sec', key: 'key:101', limit: 5, windowSec: 1, ...overrides };
}

/** A store implementation under test: fresh, empty stores per test, cleaned up after. */
interface Backend {
  name: string;
  enabled: boolean;
  /** `connection` picks one of two independent connections where that means anything. */
  open(connection?: 0 | 1): RateLimitStore;
  cleanup(): Promise<void>;
  closeAll(): Promise<void>;
}

function memoryBackend(): Backend {
  let store: MemoryStore | undefined;
  return {
    name: 'memory',
    enabled: true,
    open: () => (store ??= new MemoryStore()),
    cleanup: async () => {
      await store?.close();
      store = undefined;
    },
    closeAll: async () => {},
  };
}

function redisBackend(url: string | undefined): Backend {
  const connections: Redis[] = [];
  let prefix = `test:rl:${randomUUID()}:`;
  const connection = (i: 0 | 1): Redis => {
    if (url === undefined) throw new Error('REDIS_URL is not set');
    while (connections.length <= i) connections.push(new Redis(url, { maxRetriesPerRequest: 1 }));
    return connections[i]!;
  };
  return {
    name: 'redis',
    enabled: url !== undefined,
    // Simulated time runs ahead of Redis' clock here; a long grace keeps a slow test from
    // seeing a counter expire in real time. The real expiry is checked separately.
    open: (i = 0) => new RedisStore(connection(i), { prefix, expiryGraceMs: 60_000 }),
    cleanup: async () => {
      if (connections[0] !== undefined) await deleteByPrefix(connections[0], prefix);
      prefix = `test:rl:${randomUUID()}:`;
    },
    closeAll: async () => {
      await Promise.all(connections.map((c) => c.quit()));
    },
  };
}

async function deleteByPrefix(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

const backends = [memoryBackend(), redisBackend(REDIS_URL)];

describe.each(backends)('$name store', (backend) => {
  afterEach(() => backend.cleanup());
  afterAll(() => backend.closeAll());

  describe.skipIf(!backend.enabled)('behaviour', () => {
    it('allows up to the limit, then refuses with the rule code and a reset of at least 1 s', async () => {
      const store = backend.open();
      const rules = [rule({ limit: 3 })];
      const remaining: number[] = [];
      for (let i = 0; i < 3; i++) {
        const result = await store.consume(rules, t0 + i);
        expect(result.allowed).toBe(true);
        expect(result.refused).toBeUndefined();
        remaining.push(result.states[0]!.remaining);
      }
      expect(remaining).toEqual([2, 1, 0]);

      const refused = await store.consume(rules, t0 + 10);
      expect(refused.allowed).toBe(false);
      expect(refused.refused?.rule.code).toBe('key_per_sec');
      expect(refused.refused?.resetSec).toBe(1);
      expect(refused.states[0]).toMatchObject({ remaining: 0, resetSec: 1 });
    });

    it('does not consume from the other rules when one refuses', async () => {
      const store = backend.open();
      const rules = [rule({ limit: 2 }), rule({ policy: 'key-min', code: 'key_per_min', limit: 5, windowSec: 60 })];
      expect((await store.consume(rules, t0)).allowed).toBe(true);
      expect((await store.consume(rules, t0)).allowed).toBe(true);
      for (let i = 0; i < 5; i++) {
        const refused = await store.consume(rules, t0 + 100);
        expect(refused.refused?.rule.code).toBe('key_per_sec');
        expect(refused.states[1]).toMatchObject({ remaining: 3, resetSec: 60 });
      }
      const nextSecond = await store.consume(rules, t0 + 1_000);
      expect(nextSecond.allowed).toBe(true);
      expect(nextSecond.states.map((s) => s.remaining)).toEqual([1, 2]);
    });

    it('names the exhausted rule with the longest reset when several refuse', async () => {
      const store = backend.open();
      const rules = [rule({ limit: 1 }), rule({ policy: 'key-day', code: 'key_per_day', limit: 1, windowSec: 86_400 })];
      expect((await store.consume(rules, t0)).allowed).toBe(true);
      const refused = await store.consume(rules, t0);
      expect(refused.allowed).toBe(false);
      expect(refused.refused).toMatchObject({ rule: { code: 'key_per_day' }, remaining: 0, resetSec: 86_400 });
    });

    it('starts a new window at the aligned boundary', async () => {
      const store = backend.open();
      const rules = [rule({ policy: 'key-min', code: 'key_per_min', limit: 2, windowSec: 60 })];
      const windowEnd = t0 - 250 + 60_000;
      expect((await store.consume(rules, t0)).allowed).toBe(true);
      expect((await store.consume(rules, t0)).allowed).toBe(true);
      const late = await store.consume(rules, windowEnd - 1);
      expect(late.allowed).toBe(false);
      expect(late.refused?.resetSec).toBe(1);
      const next = await store.consume(rules, windowEnd);
      expect(next.allowed).toBe(true);
      expect(next.states[0]).toMatchObject({ remaining: 1, resetSec: 60 });
    });

    it('keeps buckets apart by key', async () => {
      const store = backend.open();
      expect((await store.consume(ipRules('10.0.0.1', 1), t0)).allowed).toBe(true);
      expect((await store.consume(ipRules('10.0.0.1', 1), t0)).refused?.rule.code).toBe('ip_per_sec');
      expect((await store.consume(ipRules('10.0.0.2', 1), t0)).allowed).toBe(true);
    });

    it('allows everything with no rules and nothing with a zero limit', async () => {
      const store = backend.open();
      expect(await store.consume([], t0)).toEqual({ allowed: true, states: [] });
      expect((await store.consume([rule({ limit: 0 })], t0)).refused?.rule.code).toBe('key_per_sec');
    });

    it('never allows more than the limit under 50 concurrent calls', async () => {
      const store = backend.open();
      const rules = [rule({ limit: 10 }), rule({ policy: 'team-sec', code: 'team_per_sec', key: 'team:acme', limit: 20 })];
      const results = await Promise.all(Array.from({ length: 50 }, () => store.consume(rules, t0)));
      const allowed = results.filter((r) => r.allowed);
      expect(allowed).toHaveLength(10);
      expect(allowed.map((r) => r.states[0]!.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(results.filter((r) => !r.allowed).every((r) => r.refused?.rule.code === 'key_per_sec')).toBe(true);
      // The refused 40 did not touch the team bucket: 10 of its 20 remain.
      expect((await store.consume([rules[1]!], t0 + 1)).states[0]!.remaining).toBe(9);
    });
  });
});

describe('memory store memory', () => {
  it('sweeps expired counters so many distinct IPs do not accumulate', async () => {
    const store = new MemoryStore({ sweepIntervalMs: 5_000 });
    for (let i = 0; i < 10_000; i++) await store.consume(ipRules(`10.0.${i >> 8}.${i & 255}`, 10), t0);
    await store.consume(apiRules(apiInput()), t0);
    expect(store.size).toBe(10_006);
    await store.consume(ipRules('192.0.2.1', 10), t0 + 10_000);
    // Per-second buckets are gone; the key and team minute and day buckets are still live.
    expect(store.size).toBe(5);
    await store.close();
  });
});

describe.skipIf(REDIS_URL === undefined)('redis store across connections', () => {
  const connections: Redis[] = [];
  const open = (): Redis => {
    const connection = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
    connections.push(connection);
    return connection;
  };
  const prefix = `test:rl:${randomUUID()}:`;
  afterAll(async () => {
    await deleteByPrefix(connections[0]!, prefix);
    await Promise.all(connections.map((c) => c.quit()));
  });

  it('shares one count between two instances on separate connections', async () => {
    const a = new RedisStore(open(), { prefix, expiryGraceMs: 60_000 });
    const b = new RedisStore(open(), { prefix, expiryGraceMs: 60_000 });
    const rules = [rule({ key: 'key:shared', limit: 3 })];
    expect((await a.consume(rules, t0)).states[0]!.remaining).toBe(2);
    expect((await b.consume(rules, t0)).states[0]!.remaining).toBe(1);
    expect((await a.consume(rules, t0)).states[0]!.remaining).toBe(0);
    expect((await b.consume(rules, t0)).allowed).toBe(false);

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).consume([rule({ key: 'key:race', limit: 7 })], t0)),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(7);
  });

  it('sends the counts of one turn of the event loop as one script call, each all-or-nothing in the order asked', async () => {
    const redis = open();
    const store = new RedisStore(redis, { prefix, expiryGraceMs: 60_000 });
    // The script calls this connection sends (other test files share the Redis server, so not
    // the server's command statistics).
    let sent = 0;
    const sendCommand = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      if (/^eval(sha)?$/i.test(command.name)) sent += 1;
      return (sendCommand as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof redis.sendCommand;
    await store.consume([rule({ key: 'key:warm' })], t0); // the script known to the connection (EVALSHA from here on)
    const before = sent;
    const full = rule({ key: 'key:batch-full', limit: 2 });
    const other = rule({ policy: 'team-sec', code: 'team_per_sec', key: 'team:batch', limit: 100 });
    // 6 counts asked together: 2 fit the full rule, the 4 others are refused and leave the team
    // rule they share untouched; a 7th on the team rule alone counts after the first two.
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => store.consume([full, other], t0)),
      store.consume([other], t0),
    ]);
    const after = sent;
    // Every count of that turn in one call.
    expect(after - before).toBe(1);
    expect(results.slice(0, 6).map((r) => r.allowed)).toEqual([true, true, false, false, false, false]);
    expect(results.slice(0, 2).map((r) => r.states[0]!.remaining)).toEqual([1, 0]);
    expect(results.slice(2, 6).every((r) => r.refused?.rule.code === 'key_per_sec')).toBe(true);
    expect(results[6]!.states[0]!.remaining).toBe(97);
    // Counts asked in a later turn form another call and see the batch's increments.
    expect((await store.consume([other], t0)).states[0]!.remaining).toBe(96);
    expect(sent - after).toBe(1);
  });

  it('prefixes keys and expires them at the end of their window', async () => {
    const redis = open();
    const store = new RedisStore(redis);
    const id = `test-${randomUUID()}`;
    const nowMs = Date.now();
    await store.consume([rule({ key: `key:${id}`, windowSec: 60 })], nowMs);
    const [key] = await redis.keys(`inv:rl:key:${id}:60:*`);
    expect(key).toBe(`inv:rl:key:${id}:60:${Math.floor(nowMs / 60_000)}`);
    const ttl = await redis.pttl(key!);
    await redis.del(key!);
    const untilWindowEnd = (Math.floor(nowMs / 60_000) + 1) * 60_000 - nowMs;
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(untilWindowEnd + 1_000);
    expect(ttl).toBeGreaterThan(untilWindowEnd + 1_000 - 5_000);
  });
});

describe('redis store errors', () => {
  it('rejects when Redis is unreachable, leaving fail-open to the caller', async () => {
    const redis = new Redis({ host: '127.0.0.1', port: 1, enableOfflineQueue: false, retryStrategy: () => null });
    redis.on('error', () => {});
    const store = new RedisStore(redis);
    await expect(store.consume([rule()], Date.now())).rejects.toThrow();
    redis.disconnect();
  });

  /**
   * A server that takes the connection and the commands and never answers (unless `onData`
   * writes), and an ioredis client connected to it as the service connects (no offline queue).
   */
  async function silentRedis(onData: (socket: net.Socket, data: Buffer) => void = () => undefined) {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => sockets.add(socket.on('data', (data) => onData(socket, data))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const redis = new Redis({ host: '127.0.0.1', port, enableOfflineQueue: false, enableReadyCheck: false, disableClientInfo: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    await new Promise((resolve) => redis.once('ready', resolve));
    return {
      redis,
      /** Ends the server's side of every connection (ioredis reconnects). */
      dropConnections: () => {
        for (const socket of sockets) socket.destroy();
      },
      close: async () => {
        redis.disconnect();
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  it('fails a count that Redis does not answer within timeoutMs', async () => {
    const silent = await silentRedis();
    try {
      const store = new RedisStore(silent.redis, { timeoutMs: 300 });
      const started = performance.now();
      await expect(store.consume([rule()], Date.now())).rejects.toThrow('Redis did not answer a rate-limit count within 300 ms');
      expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    } finally {
      await silent.close();
    }
  });

  it('sends no more calls to a Redis that leaves maxUnanswered of them unanswered, and sends again once it answers', async () => {
    // Counts the script calls received; once `answering`, answers each with an error.
    let calls = 0;
    let answering = false;
    const silent = await silentRedis((socket, data) => {
      const n = (data.toString('latin1').match(/evalsha|\r\neval\r\n/gi) ?? []).length;
      calls += n;
      if (answering) socket.write('-ERR refused by the test\r\n'.repeat(n));
    });
    try {
      const store = new RedisStore(silent.redis, { timeoutMs: 100, maxUnanswered: 3 });
      // Three calls (one per turn of the event loop), each failed by its timeout, none answered.
      for (let i = 0; i < 3; i++) await expect(store.consume([rule()], Date.now())).rejects.toThrow('within 100 ms');
      await vi.waitFor(() => expect(calls).toBe(3));
      // The fourth is not sent: it fails at once (its own error, not the timeout's).
      await expect(store.consume([rule()], Date.now())).rejects.toThrow('Redis has not answered 3 rate-limit calls');
      await new Promise((r) => setTimeout(r, 50));
      expect(calls).toBe(3);
      // Redis answers (ioredis sends the three again on a new connection; each gets its error):
      // the store sends again.
      answering = true;
      silent.dropConnections();
      await vi.waitFor(() => expect(calls).toBe(6));
      await vi.waitFor(() => expect(store.consume([rule()], Date.now())).rejects.toThrow('refused by the test'));
      expect(calls).toBeGreaterThanOrEqual(7);
    } finally {
      await silent.close();
    }
  });

  it.skipIf(!REDIS_URL)('takes an answer that came in time while the event loop was busy past timeoutMs', async () => {
    const redis = new Redis(REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    const prefix = `test:rl:${randomUUID()}:`;
    await new Promise((resolve) => redis.once('ready', resolve));
    try {
      const store = new RedisStore(redis, { prefix, timeoutMs: 200 });
      await store.consume([rule({ key: 'key:warm' })], Date.now()); // loads the script
      const counts = Array.from({ length: 8 }, () => store.consume([rule({ key: 'key:busy', limit: 5, windowSec: 3_600 })], Date.now()));
      const busyUntil = performance.now() + 500;
      while (performance.now() < busyUntil);
      const results = await Promise.all(counts);
      expect(results.filter((r) => r.allowed)).toHaveLength(5);
    } finally {
      await deleteByPrefix(redis, prefix);
      redis.disconnect();
    }
  });
});

function apiInput() {
  return {
    keyId: 101,
    teamId: 'acme',
    keyRate: { per_sec: 5, per_min: 100, per_day: 10_000 },
    teamRate: { per_sec: 10, per_min: 200, per_day: 20_000 },
  };
}

describe('rule builders', () => {
  it('builds the per-IP rule', () => {
    expect(ipRules('203.0.113.7', 10)).toEqual([
      { policy: 'ip-sec', code: 'ip_per_sec', key: 'ip:203.0.113.7', limit: 10, windowSec: 1 },
    ]);
  });

  it('builds the six key and team rules from the tariff', () => {
    const rules = apiRules(apiInput());
    expect(rules.map((r) => [r.policy, r.code, r.key, r.limit, r.windowSec])).toEqual([
      ['key-sec', 'key_per_sec', 'key:101', 5, 1],
      ['key-min', 'key_per_min', 'key:101', 100, 60],
      ['key-day', 'key_per_day', 'key:101', 10_000, 86_400],
      ['team-sec', 'team_per_sec', 'team:acme', 10, 1],
      ['team-min', 'team_per_min', 'team:acme', 200, 60],
      ['team-day', 'team_per_day', 'team:acme', 20_000, 86_400],
    ]);
  });
});

describe('rate-limit headers', () => {
  it('formats RateLimit-Policy as a structured-field list', () => {
    expect(formatRateLimitPolicy(apiRules(apiInput()).slice(0, 2))).toBe('"key-sec";q=5;w=1, "key-min";q=100;w=60');
    expect(formatRateLimitPolicy([])).toBe('');
  });

  it('formats RateLimit with remaining never negative and reset at least 1', () => {
    const [sec, min] = apiRules(apiInput());
    expect(
      formatRateLimit([
        { rule: sec!, remaining: 3, resetSec: 1 },
        { rule: min!, remaining: -2, resetSec: 0 },
      ]),
    ).toBe('"key-sec";r=3;t=1, "key-min";r=0;t=1');
  });

  it('escapes policy names as sf-strings and refuses non-ASCII', () => {
    expect(formatRateLimitPolicy([rule({ policy: 'a"b\\c' })])).toBe('"a\\"b\\\\c";q=5;w=1');
    expect(() => formatRateLimitPolicy([rule({ policy: 'ключ' })])).toThrow();
  });
});
