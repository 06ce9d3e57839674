/** How hard delivery tries: the bounded attempt of a request, retries and leases. */

export interface DeliveryPolicy {
  /** The one attempt a create/update request makes, for all its recipients together. */
  requestTimeoutMs: number;
  /** One background attempt of one e-mail. */
  attemptTimeoutMs: number;
  /** Attempts in all (the request's included) before an e-mail is given up as failed. */
  maxAttempts: number;
  /** Delay before the n-th retry: retryBaseMs × 2^(n−1), at most retryMaxMs, ±20 % jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** How long a claim holds; longer than any attempt, so a live claimer never loses its row. */
  leaseMs: number;
  /** E-mails sent at the same time by one request or one worker batch. */
  concurrency: number;
  /** Worker: rows claimed per batch, and the pause between polls when nothing is due. */
  batchSize: number;
  pollIntervalMs: number;
}

export const DEFAULT_DELIVERY_POLICY: Readonly<DeliveryPolicy> = Object.freeze({
  requestTimeoutMs: 10_000,
  attemptTimeoutMs: 30_000,
  maxAttempts: 8,
  retryBaseMs: 30_000,
  retryMaxMs: 60 * 60_000,
  leaseMs: 2 * 60_000,
  concurrency: 4,
  batchSize: 20,
  pollIntervalMs: 2_000,
});

export function resolvePolicy(overrides: Partial<DeliveryPolicy> = {}): DeliveryPolicy {
  const policy = { ...DEFAULT_DELIVERY_POLICY, ...overrides };
  const longest = Math.max(policy.requestTimeoutMs, policy.attemptTimeoutMs);
  if (policy.leaseMs <= longest) {
    throw new Error(`delivery policy: leaseMs (${policy.leaseMs}) must exceed the longest attempt (${longest} ms)`);
  }
  if (policy.maxAttempts < 1 || policy.concurrency < 1 || policy.batchSize < 1) {
    throw new Error('delivery policy: maxAttempts, concurrency and batchSize must be at least 1');
  }
  return policy;
}

export { retryDelayMs } from '../../shared/background-work.js';
