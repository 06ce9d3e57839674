import DataLoader from 'dataloader';
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
   * How long a count waits for Redis's answer before it fails (and the service counts in the
   * process instead, FallbackRateLimitStore).
   * Measured as src/shared/reply-timeout.ts does: an answer that came in time while this
   * process's event loop was busy is taken, where ioredis' `commandTimeout` would fail it.
   */
  timeoutMs?: number;
  /**
   * Script calls sent and not yet answered past which the store sends no more and fails the
   * counts at once (counted in the process instead). A Redis that accepts commands and never answers
   * leaves every sent call in ioredis' queue, timed-out ones included (ioredis even sends them
   * again on a new connection): this bounds that memory. Sending resumes as soon as Redis
   * answers them or ioredis fails them. Default 256 (each call at most BATCH_MAX counts).
   */
  maxUnanswered?: number;
}

/**
 * One round trip for the counts of several requests (a batch, see `RedisStore`), each count
 * atomic on its own and the batch run as one script, so in arrival order: for each count, read
 * its counters, refuse without writing if any is full, else increment all and give new counters
 * a TTL to the end of their window.
 * ARGV[1] is the number of counts g, ARGV[1 + j] count j's number of rules; KEYS holds every
 * count's counters one count after the other, and for the i-th key overall ARGV[g + 2i] is its
 * limit and ARGV[g + 2i + 1] its TTL in ms.
 * Returns, count after count, {allowed (1|0), count_1, ..., count_n}: counts after the increment
 * when allowed, current counts when refused.
 */
const CONSUME_LUA = `
local g = tonumber(ARGV[1])
local out = {}
local k = 0
for j = 1, g do
  local n = tonumber(ARGV[1 + j])
  local counts = {}
  local allowed = 1
  for i = 1, n do
    local c = tonumber(redis.call('GET', KEYS[k + i]) or '0')
    counts[i] = c
    if c >= tonumber(ARGV[g + 2 * (k + i)]) then allowed = 0 end
  end
  if allowed == 1 then
    for i = 1, n do
      local c = redis.call('INCR', KEYS[k + i])
      counts[i] = c
      if c == 1 then redis.call('PEXPIRE', KEYS[k + i], ARGV[g + 2 * (k + i) + 1]) end
    end
  end
  out[#out + 1] = allowed
  for i = 1, n do out[#out + 1] = counts[i] end
  k = k + n
end
return out
`;

const COMMAND = 'invoicingRateLimitConsumeBatch';

/** The script as ioredis exposes it after `defineCommand` (EVALSHA, EVAL on NOSCRIPT). */
interface ConsumeCommand {
  [COMMAND](numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** One request's count: its counters' keys and, per key, the limit and the TTL in ms. */
interface Count {
  keys: string[];
  args: number[];
}

/** The most counts one script call carries. */
const BATCH_MAX = 64;

/**
 * Counters in Redis, so several service instances share the limits. Window boundaries
 * come from the caller's `nowMs` (aligned to the epoch, like the memory store); Redis'
 * own clock only runs the TTLs that garbage-collect old windows.
 *
 * The counts asked for in one turn of the event loop go to Redis as ONE script call (a call
 * per request cost a write system call, a command and a reply each; DataLoader with
 * `cache: false`, dispatched by `setImmediate`, at most BATCH_MAX counts a call). Each count
 * stays atomic and all-or-nothing on its own; within a call they run in the order they were
 * asked, so two counts of one key in a batch see each other as two calls would.
 *
 * Errors are not swallowed: when Redis is unreachable, does not answer within `timeoutMs` or
 * the script fails, `consume` rejects (every count of that call) and the caller decides what then
 * (the service counts in the process meanwhile: FallbackRateLimitStore). Set `maxRetriesPerRequest` and `enableOfflineQueue: false` on the connection so
 * that rejection comes quickly instead of after ioredis' reconnect retries (and leave its
 * `commandTimeout` unset: see `timeoutMs`).
 *
 * Keys of one call live in different slots, so this needs a single Redis (or a primary
 * with replicas), not Redis Cluster.
 */
export class RedisStore implements RateLimitStore {
  private readonly prefix: string;
  private readonly expiryGraceMs: number;
  private readonly timeoutMs: number;
  private readonly maxUnanswered: number;
  /** Script calls sent whose reply (or failure) ioredis has not delivered yet. */
  private unanswered = 0;
  private readonly counts: DataLoader<Count, number[]>;

  /** The caller owns `redis`: this store never connects or quits it. */
  constructor(
    private readonly redis: Redis,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'inv:rl:';
    this.expiryGraceMs = options.expiryGraceMs ?? 1_000;
    this.timeoutMs = options.timeoutMs ?? 500;
    this.maxUnanswered = options.maxUnanswered ?? 256;
    // Idempotent: redefining the same script on a shared connection is harmless.
    redis.defineCommand(COMMAND, { lua: CONSUME_LUA });
    this.counts = new DataLoader<Count, number[]>((batch) => this.run(batch), {
      cache: false,
      maxBatchSize: BATCH_MAX,
      batchScheduleFn: (dispatch) => setImmediate(dispatch),
    });
  }

  reachable(): boolean {
    return this.redis.status === 'ready';
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
    const [allowedFlag, ...counts] = await this.counts.load({ keys, args });
    return buildConsumeResult(rules, counts, allowedFlag === 1, nowMs);
  }

  /** Nothing to release: the connection belongs to the caller. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** One script call for `batch`: per count, {allowed, count_1, …, count_n}. */
  private async run(batch: readonly Count[]): Promise<number[][]> {
    const keys: string[] = [];
    const sizes: number[] = [];
    const args: number[] = [];
    for (const count of batch) {
      keys.push(...count.keys);
      sizes.push(count.keys.length);
      args.push(...count.args);
    }
    const command = (this.redis as unknown as ConsumeCommand)[COMMAND];
    const reply = await this.send(() => command.call(this.redis, keys.length, ...keys, batch.length, ...sizes, ...args), 'a rate-limit count');
    return parseReply(reply, sizes);
  }

  /**
   * Resolves when Redis answers a PING within `timeoutMs`, rejects otherwise: how
   * FallbackRateLimitStore finds Redis back.
   */
  async probe(): Promise<void> {
    await this.send(() => this.redis.ping(), 'a PING');
  }

  /** Sends a call unless `maxUnanswered` are unanswered, and waits at most `timeoutMs` for its reply. */
  private send<T>(call: () => Promise<T>, what: string): Promise<T> {
    if (this.unanswered >= this.maxUnanswered) {
      return Promise.reject(new Error(`Redis has not answered ${this.unanswered} rate-limit calls: none is sent until it does`));
    }
    const sent = call();
    this.unanswered += 1;
    const answered = () => {
      this.unanswered -= 1;
    };
    sent.then(answered, answered);
    return withReplyTimeout(sent, this.timeoutMs, () => new Error(`Redis did not answer ${what} within ${this.timeoutMs} ms`));
  }
}

/** Splits the script's flat reply into one {allowed, counts…} per count of `sizes` rules each. */
function parseReply(reply: unknown, sizes: number[]): number[][] {
  const expected = sizes.reduce((sum, n) => sum + n + 1, 0);
  if (!Array.isArray(reply) || reply.length !== expected) {
    throw new Error('rate-limit script returned an unexpected reply');
  }
  const values = reply.map((value) => {
    const n = Number(value);
    if (!Number.isInteger(n)) throw new Error('rate-limit script returned a non-integer count');
    return n;
  });
  const answers: number[][] = [];
  let at = 0;
  for (const n of sizes) {
    answers.push(values.slice(at, at + n + 1));
    at += n + 1;
  }
  return answers;
}
