/** How hard delivery tries: the bounded attempt of a request, retries and leases. */
import { checkOutboxPolicy, DEFAULT_OUTBOX_POLICY, type OutboxPolicy } from '../../shared/background-work.js';

export interface DeliveryPolicy extends OutboxPolicy {
  /**
   * The one attempt a create/update request makes, for all its recipients together; it counts
   * as the first of `maxAttempts`.
   */
  requestTimeoutMs: number;
}

export const DEFAULT_DELIVERY_POLICY: Readonly<DeliveryPolicy> = Object.freeze({
  ...DEFAULT_OUTBOX_POLICY,
  requestTimeoutMs: 10_000,
  maxAttempts: 8,
});

export function resolvePolicy(overrides: Partial<DeliveryPolicy> = {}): DeliveryPolicy {
  const policy = { ...DEFAULT_DELIVERY_POLICY, ...overrides };
  checkOutboxPolicy('delivery policy', policy, Math.max(policy.requestTimeoutMs, policy.attemptTimeoutMs));
  return policy;
}

export { retryDelayMs } from '../../shared/background-work.js';
