/**
 * Rate limits in Redis, counted in this process while Redis cannot be used (operating contract,
 * section 7; docs/operations.md, "Faults: PostgreSQL and Redis"). A limit is never lifted: when
 * a count fails (Redis refused, unreachable, or no answer within the store's `timeoutMs`, 500
 * ms), that request and every one after it are counted in this process's own counters, with the
 * same rules, until Redis answers a PING again; then the shared counters are used again. Each
 * process counts alone meanwhile, so N processes (or nodes) let at most N times a limit through.
 *
 * Only the requests whose count was in flight when Redis stopped answering wait, at most the
 * store's `timeoutMs`; after that no request waits on Redis. A probe (one PING, bounded the same
 * way) runs every `probeIntervalMs` while degraded, whether or not requests come.
 */
import type { ConsumeResult, LimitRule, RateLimitStore, StoreLogger } from './rate-limit.types.js';
import { MemoryStore } from './memory-store.js';

/** The shared store as this one uses it: counts, and a probe that resolves when it answers. */
export interface ProbedStore extends RateLimitStore {
  probe(): Promise<void>;
}

export interface FallbackStoreOptions {
  /** Pause between probes of a degraded shared store. */
  probeIntervalMs?: number;
}

/** Default pause between probes: Redis back is used again within about a second. */
export const PROBE_INTERVAL_MS = 1_000;

export class FallbackRateLimitStore implements RateLimitStore {
  private degraded = false;
  private probing = false;
  private timer: NodeJS.Timeout | null = null;
  private log: StoreLogger | null = null;
  private readonly probeIntervalMs: number;

  constructor(
    private readonly shared: ProbedStore,
    private readonly local: MemoryStore = new MemoryStore(),
    options: FallbackStoreOptions = {},
  ) {
    this.probeIntervalMs = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
  }

  async consume(rules: LimitRule[], nowMs: number): Promise<ConsumeResult> {
    if (!this.degraded) {
      try {
        return await this.shared.consume(rules, nowMs);
      } catch (err) {
        this.degrade(err);
      }
    }
    return this.local.consume(rules, nowMs);
  }

  redisState(): 'ok' | 'degraded' {
    return this.degraded ? 'degraded' : 'ok';
  }

  reportTo(log: StoreLogger): void {
    this.log = log;
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.shared.close();
    await this.local.close();
  }

  private degrade(err: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log?.warn({ err }, 'Redis does not answer: rate limits are counted in this process until it does');
    this.timer = setInterval(() => this.probe(), this.probeIntervalMs);
    this.timer.unref();
  }

  private probe(): void {
    if (this.probing) return;
    this.probing = true;
    this.shared.probe().then(
      () => {
        this.probing = false;
        if (!this.degraded) return;
        this.degraded = false;
        if (this.timer !== null) clearInterval(this.timer);
        this.timer = null;
        this.log?.info({}, 'Redis answers again: rate limits are counted in Redis');
      },
      () => {
        this.probing = false;
      },
    );
  }
}
