import type { ConsumeResult, LimitRule, RateLimitStore } from './rate-limit.types.js';
import { buildConsumeResult, windowOf } from './rules.js';

export interface MemoryStoreOptions {
  /** How often (in the `nowMs` time the caller passes) expired counters are dropped. */
  sweepIntervalMs?: number;
}

interface Counter {
  count: number;
  /** End of the counter's window; after it the entry is garbage. */
  expiresAtMs: number;
}

/**
 * In-process counters for a single instance (no `REDIS_URL`). Consume is synchronous
 * inside, so check-then-increment is atomic on the event loop. Expired counters are
 * swept lazily from `consume` at most once per interval, driven by the caller's `nowMs`
 * rather than a timer: memory stays bounded under many distinct IPs (per-second buckets
 * live about one interval), there is no timer to leak, and tests stay deterministic.
 */
export class MemoryStore implements RateLimitStore {
  private readonly counters = new Map<string, Counter>();
  private readonly sweepIntervalMs: number;
  private nextSweepAtMs = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryStoreOptions = {}) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 5_000;
  }

  /** Number of live entries; for tests and metrics. */
  get size(): number {
    return this.counters.size;
  }

  consume(rules: LimitRule[], nowMs: number): Promise<ConsumeResult> {
    const { allowed, counts } = this.count(rules, nowMs);
    return Promise.resolve(buildConsumeResult(rules, counts, allowed, nowMs));
  }

  /**
   * The check-and-count itself, synchronous: whether the request is allowed, and each rule's
   * count (after this request when allowed, the current one when refused), as the Redis script
   * answers. The primary of `invoicing serve` answers its API processes with it (src/cluster/).
   */
  count(rules: readonly LimitRule[], nowMs: number): { allowed: boolean; counts: number[] } {
    this.sweepIfDue(nowMs);
    const slots = rules.map((rule) => {
      const window = windowOf(rule, nowMs);
      const id = `${rule.key}:${rule.windowSec}:${window.index}`;
      const existing = this.counters.get(id);
      const live = existing !== undefined && existing.expiresAtMs > nowMs ? existing : undefined;
      return { id, endMs: window.endMs, count: live?.count ?? 0 };
    });
    const allowed = rules.every((rule, i) => (slots[i]?.count ?? 0) < rule.limit);
    if (!allowed) return { allowed, counts: slots.map((s) => s.count) };

    // Re-read per slot: two rules with the same key and window must share one counter.
    const counts = slots.map((slot) => {
      const current = this.counters.get(slot.id);
      if (current !== undefined && current.expiresAtMs > nowMs) {
        // Counted in place: no new entry per request (the same count and expiry as a new one).
        current.count += 1;
        current.expiresAtMs = slot.endMs;
        return current.count;
      }
      this.counters.set(slot.id, { count: 1, expiresAtMs: slot.endMs });
      return 1;
    });
    return { allowed, counts };
  }

  close(): Promise<void> {
    this.counters.clear();
    return Promise.resolve();
  }

  private sweepIfDue(nowMs: number): void {
    if (nowMs < this.nextSweepAtMs) return;
    this.nextSweepAtMs = nowMs + this.sweepIntervalMs;
    for (const [id, counter] of this.counters) {
      if (counter.expiresAtMs <= nowMs) this.counters.delete(id);
    }
  }
}
