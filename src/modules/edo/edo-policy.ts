/** How hard EDO sync tries: send attempts, retries, leases and the change-feed poll. */

export interface EdoPolicy {
  /** One send attempt: preparing the PDF and the operator call. */
  attemptTimeoutMs: number;
  /** Attempts in all before a send is given up as `failed`. */
  maxAttempts: number;
  /** Delay before the n-th retry: retryBaseMs × 2^(n−1), at most retryMaxMs, ±20 % jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** How long a claimed send holds; longer than any attempt. */
  leaseMs: number;
  concurrency: number;
  /** Sends claimed per batch, and the pause between polls when nothing is due. */
  batchSize: number;
  pollIntervalMs: number;
  /** The change feed: pause between reads, events per page, pages per read, the read's lease. */
  feedIntervalMs: number;
  feedPageSize: number;
  feedPagesPerPoll: number;
  feedLeaseMs: number;
}

export const DEFAULT_EDO_POLICY: Readonly<EdoPolicy> = Object.freeze({
  attemptTimeoutMs: 30_000,
  maxAttempts: 10,
  retryBaseMs: 30_000,
  retryMaxMs: 60 * 60_000,
  leaseMs: 2 * 60_000,
  concurrency: 4,
  batchSize: 20,
  pollIntervalMs: 2_000,
  feedIntervalMs: 5_000,
  feedPageSize: 100,
  feedPagesPerPoll: 10,
  feedLeaseMs: 2 * 60_000,
});

export function resolveEdoPolicy(overrides: Partial<EdoPolicy> = {}): EdoPolicy {
  const policy = { ...DEFAULT_EDO_POLICY, ...overrides };
  if (policy.leaseMs <= policy.attemptTimeoutMs) {
    throw new Error(`EDO policy: leaseMs (${policy.leaseMs}) must exceed attemptTimeoutMs (${policy.attemptTimeoutMs})`);
  }
  if (policy.maxAttempts < 1 || policy.concurrency < 1 || policy.batchSize < 1 || policy.feedPageSize < 1 || policy.feedPagesPerPoll < 1) {
    throw new Error('EDO policy: maxAttempts, concurrency, batchSize, feedPageSize and feedPagesPerPoll must be at least 1');
  }
  return policy;
}
