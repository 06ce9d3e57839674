/**
 * Rate-limit core types. Limits are fixed windows aligned to multiples of `windowSec`
 * since the epoch, so every instance (and the Redis store) agrees on window boundaries
 * without coordination.
 */

/** One counter a request must fit into. */
export interface LimitRule {
  /** Name shown in the IETF `RateLimit`/`RateLimit-Policy` headers, e.g. "key-sec". */
  policy: string;
  /** Scope and window named in the 429 body's `code`, e.g. "key_per_sec". */
  code: string;
  /** Bucket identity, e.g. "key:101"; rules with the same key and window share a counter. */
  key: string;
  /** Requests allowed per window; 0 refuses everything. */
  limit: number;
  /** Window length in whole seconds (≥ 1). */
  windowSec: number;
}

/** A rule's counter as seen by this request. */
export interface LimitState {
  rule: LimitRule;
  /** Requests left in the window after this request (never negative). */
  remaining: number;
  /** Seconds until this window resets, integer ≥ 1 (what `Retry-After` needs). */
  resetSec: number;
}

export interface ConsumeResult {
  allowed: boolean;
  /** One state per rule, in the order the rules were given. */
  states: LimitState[];
  /**
   * When refused: the exhausted rule with the longest reset, because the request can
   * only pass once every exhausted window has reset.
   */
  refused?: LimitState;
}

/**
 * Checks all rules and, only if every one has room, counts the request against all of
 * them, atomically: a refused request consumes nothing, so a client hammering a
 * per-second limit does not burn its per-day quota.
 */
export interface RateLimitStore {
  /** `nowMs` is passed in (not read from the clock) so tests and callers control time. */
  consume(rules: LimitRule[], nowMs: number): Promise<ConsumeResult>;
  close(): Promise<void>;
  /** A store kept in a server (Redis): whether its connection is up now (`invoicing_dependency_up`). */
  reachable?(): boolean;
}
