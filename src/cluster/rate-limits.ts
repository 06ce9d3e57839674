/**
 * Rate limits shared by the API processes of one machine without Redis: the primary keeps the
 * counters (the MemoryStore of a single process) and every API process counts through it, one
 * IPC round trip per call, so a key's, a team's and an IP's limit is one counter for the whole
 * machine. With REDIS_URL the API processes use Redis as separate nodes do, and this is unused.
 */
import { buildConsumeResult } from '../http/rate-limit/rules.js';
import type { MemoryStore } from '../http/rate-limit/memory-store.js';
import type { ConsumeResult, LimitRule, RateLimitStore } from '../http/rate-limit/rate-limit.types.js';
import { LIMITS, type ConsumeArgs, type ConsumeReply } from './messages.js';
import type { PrimaryChannel } from './primary-channel.js';

/**
 * How long a count may wait for the primary. Past it the call fails and the limiter fails
 * open (serves the request, logs a warning), as with an unreachable Redis (RedisStore's `timeoutMs`, 500).
 */
export const CONSUME_TIMEOUT_MS = 500;

/** An API process's store: asks the primary. */
export class IpcRateLimitStore implements RateLimitStore {
  constructor(private readonly channel: PrimaryChannel) {}

  async consume(rules: LimitRule[], nowMs: number): Promise<ConsumeResult> {
    if (rules.length === 0) return { allowed: true, states: [] };
    const args: ConsumeArgs = { rules: rules.map((rule) => [rule.key, rule.limit, rule.windowSec]), nowMs };
    const reply = (await this.channel.call('consume', args, CONSUME_TIMEOUT_MS)) as ConsumeReply;
    if (typeof reply?.allowed !== 'boolean' || !Array.isArray(reply.counts) || reply.counts.length !== rules.length) {
      throw new Error('the primary answered a rate-limit count in an unexpected shape');
    }
    return buildConsumeResult(rules, reply.counts, reply.allowed, nowMs);
  }

  /** Nothing to release: the counters are the primary's, the channel is the process's. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The primary's answer to `consume`; throws on arguments no API process sends. */
export function answerConsume(store: MemoryStore, args: unknown): ConsumeReply {
  const { rules, nowMs } = (args ?? {}) as Partial<ConsumeArgs>;
  if (!Array.isArray(rules) || rules.length === 0 || rules.length > LIMITS.rulesPerCall || typeof nowMs !== 'number' || !Number.isFinite(nowMs)) {
    throw new Error('consume: bad arguments');
  }
  const parsed: LimitRule[] = rules.map((rule) => {
    const [key, limit, windowSec] = Array.isArray(rule) ? rule : [];
    if (typeof key !== 'string' || key.length > LIMITS.keyLength || !Number.isInteger(limit) || (limit as number) < 0) {
      throw new Error('consume: bad rule');
    }
    if (!Number.isInteger(windowSec) || (windowSec as number) < 1 || (windowSec as number) > 366 * 86_400) throw new Error('consume: bad rule');
    // Only the key, limit and window count; the names are the API process's business.
    return { key, limit: limit as number, windowSec: windowSec as number, policy: '', code: '' };
  });
  return store.count(parsed, nowMs);
}
