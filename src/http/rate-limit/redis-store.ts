import type { Redis } from 'ioredis';
import { withReplyTimeout } from '../../shared/reply-timeout.js';
import type { ConsumeResult, LimitRule, RateLimitStore } from './rate-limit.types.js';
import { buildConsumeResult, windowOf } from './rules.js';

export interface RedisStoreOptions {
  /** Prepended to every counter key (after the connection's own `keyPrefix`, if any). */
  prefix?: string;
  /**
   * Added to each counter's expiry. The window index is part of the key, so a longer life
   * never changes counting; it only keeps an instance whose clock lags from recreating,
   * at zero, a counter that Redis already dropped at the end of the window.
   */
  expiryGraceMs?: number;
  /**
   * How long a count waits for Redis's answer before it fails (and the limiter fails open).
   * Measured as src/shared/reply-timeout.ts does: an answer that came in time while this
   * process's event loop was busy is taken, where ioredis' `commandTimeout` would fail it.
   */
  timeoutMs?: number;
}

/**
 * One round trip, atomic: read every counter, refuse without writing if any is full,
 * else increment all and give new counters a TTL to the end of their window.
 * KEYS[i] is rule i's counter; ARGV[2i-1] its limit, ARGV[2i] its TTL in ms.
 * Returns {allowed (1|0), count_1, ..., count_n}: counts after the increment when
 * allowed, current counts when refused.
 */
const CONSUME_LUA = `
local n = #KEYS
local counts = {}
local allowed = 1
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = c
  if c >= tonumber(ARGV[2 * i - 1]) then allowed = 0 end
end
if allowed == 1 then
  for i = 1, n do
    local c = redis.call('INCR', KEYS[i])
    counts[i] = c
    if c == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i]) end
  end
end
table.insert(counts, 1, allowed)
return counts
`;

const COMMAND = 'invoicingRateLimitConsume';

/** The script as ioredis exposes it after `defineCommand` (EVALSHA, EVAL on NOSCRIPT). */
interface ConsumeCommand {
  [COMMAND](numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/**
 * Counters in Redis, so several service instances share the limits. Window boundaries
 * come from the caller's `nowMs` (aligned to the epoch, like the memory store); Redis'
 * own clock only runs the TTLs that garbage-collect old windows.
 *
 * Errors are not swallowed: when Redis is unreachable, does not answer within `timeoutMs` or
 * the script fails, `consume` rejects and the caller decides whether to fail open. Set
 * `maxRetriesPerRequest` and `enableOfflineQueue: false` on the connection so that rejection
 * comes quickly instead of after ioredis' reconnect retries (and leave its `commandTimeout`
 * unset: see `timeoutMs`).
 *
 * Keys of one call live in different slots, so this needs a single Redis (or a primary
 * with replicas), not Redis Cluster.
 */
export class RedisStore implements RateLimitStore {
  private readonly prefix: string;
  private readonly expiryGraceMs: number;
  private readonly timeoutMs: number;

  /** The caller owns `redis`: this store never connects or quits it. */
  constructor(
    private readonly redis: Redis,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'inv:rl:';
    this.expiryGraceMs = options.expiryGraceMs ?? 1_000;
    this.timeoutMs = options.timeoutMs ?? 500;
    // Idempotent: redefining the same script on a shared connection is harmless.
    redis.defineCommand(COMMAND, { lua: CONSUME_LUA });
  }

  async consume(rules: LimitRule[], nowMs: number): Promise<ConsumeResult> {
    if (rules.length === 0) return { allowed: true, states: [] };
    const keys: string[] = [];
    const args: number[] = [];
    for (const rule of rules) {
      const window = windowOf(rule, nowMs);
      keys.push(`${this.prefix}${rule.key}:${rule.windowSec}:${window.index}`);
      // PEXPIRE is relative to Redis' clock; the remaining part of the window is what
      // transfers between clocks. At least 1 ms: PEXPIRE 0 would delete the key at once.
      args.push(rule.limit, Math.max(1, window.endMs - nowMs) + this.expiryGraceMs);
    }
    const command = (this.redis as unknown as ConsumeCommand)[COMMAND];
    const reply = await withReplyTimeout(
      command.call(this.redis, keys.length, ...keys, ...args),
      this.timeoutMs,
      () => new Error(`Redis did not answer a rate-limit count within ${this.timeoutMs} ms`),
    );
    const [allowedFlag, ...counts] = parseReply(reply, rules.length);
    return buildConsumeResult(rules, counts, allowedFlag === 1, nowMs);
  }

  /** Nothing to release: the connection belongs to the caller. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function parseReply(reply: unknown, ruleCount: number): number[] {
  if (!Array.isArray(reply) || reply.length !== ruleCount + 1) {
    throw new Error('rate-limit script returned an unexpected reply');
  }
  return reply.map((value) => {
    const n = Number(value);
    if (!Number.isInteger(n)) throw new Error('rate-limit script returned a non-integer count');
    return n;
  });
}
