/** How hard EDO sync tries: send attempts, retries, leases and the change-feed poll. */
import { checkOutboxPolicy, DEFAULT_OUTBOX_POLICY, type OutboxPolicy } from '../../shared/background-work.js';

/** `attemptTimeoutMs` covers one send: preparing the PDF and the operator call. */
export interface EdoPolicy extends OutboxPolicy {
  /** The change feed: pause between reads, events per page, pages per read, the read's lease. */
  feedIntervalMs: number;
  feedPageSize: number;
  feedPagesPerPoll: number;
  feedLeaseMs: number;
}

export const DEFAULT_EDO_POLICY: Readonly<EdoPolicy> = Object.freeze({
  ...DEFAULT_OUTBOX_POLICY,
  maxAttempts: 10,
  feedIntervalMs: 5_000,
  feedPageSize: 100,
  feedPagesPerPoll: 10,
  feedLeaseMs: 2 * 60_000,
});

export function resolveEdoPolicy(overrides: Partial<EdoPolicy> = {}): EdoPolicy {
  const policy = { ...DEFAULT_EDO_POLICY, ...overrides };
  checkOutboxPolicy('EDO policy', policy, policy.attemptTimeoutMs, { feedPageSize: policy.feedPageSize, feedPagesPerPoll: policy.feedPagesPerPoll });
  return policy;
}
