/** Small pieces shared by the background workers (e-mail outbox, EDO sync). */
import os from 'node:os';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { randomToken } from './tokens.js';

/** A token naming a lease holder: host, process and a random part (one per claimer). */
export function newLeaseOwner(): string {
  return `${os.hostname().slice(0, 30)}:${process.pid}:${randomToken(9)}`;
}

/**
 * Runs `work` over `items`, at most `limit` at a time. Each lane yields to the event loop's I/O
 * between items: work that is mostly CPU (a PDF rendered per e-mail or EDO send) and database
 * calls that never wait (better-sqlite3) would otherwise chain through promise callbacks for a
 * whole batch and keep the node's HTTP requests waiting until it is done.
 */
export async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      await work(items[next++] as T);
      await yieldToIo();
    }
  });
  await Promise.all(lanes);
}

/** Lets pending I/O (HTTP requests, sockets) run before the caller goes on. */
export function yieldToIo(): Promise<void> {
  return setImmediatePromise();
}

/** pino-compatible. */
export interface WorkLogger {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Exponential backoff: the delay after `attempts` failed attempts (1, 2, …); `random` in [0, 1). */
export function retryDelayMs(attempts: number, policy: { retryBaseMs: number; retryMaxMs: number }, random: number = Math.random()): number {
  const exponential = policy.retryBaseMs * 2 ** Math.max(0, attempts - 1);
  const capped = Math.min(exponential, policy.retryMaxMs);
  return Math.max(1, Math.round(capped * (0.8 + 0.4 * random)));
}

/**
 * How long a job that met a busy step (`BusyError`) waits before it is due again: the wait the
 * step asked for, ±20 % so that the jobs it turned away do not all come back at once.
 */
export function postponementMs(busy: { retryAfterMs: number }, random: number = Math.random()): number {
  return Math.max(1, Math.round(busy.retryAfterMs * (0.8 + 0.4 * random)));
}

/** How long a record a worker could not write is left out of its batches (`SetAsideRecords`). */
export const SET_ASIDE_MS = 10 * 60_000;

/**
 * Records (keys) a worker could not write, left out of its batches for `SET_ASIDE_MS` and then
 * tried again: the worker neither retries a broken record on every poll nor stalls behind it
 * (it asks for as many more records as it holds set aside). A record of a newer release seen by
 * an older worker during a rolling upgrade is taken by a newer one meanwhile. At most `max` are
 * held, the oldest dropped first (a dropped one is only tried again sooner).
 */
export class SetAsideRecords {
  private readonly until = new Map<string, number>();

  constructor(private readonly max = 1_000) {}

  add(key: string, nowMs: number): void {
    this.until.delete(key);
    this.until.set(key, nowMs + SET_ASIDE_MS);
    for (const oldest of this.until.keys()) {
      if (this.until.size <= this.max) break;
      this.until.delete(oldest);
    }
  }

  /** How many are set aside at `nowMs` (those whose time is up are let go). */
  count(nowMs: number): number {
    for (const [key, until] of this.until) if (until <= nowMs) this.until.delete(key);
    return this.until.size;
  }

  has(key: string, nowMs: number): boolean {
    const until = this.until.get(key);
    return until !== undefined && until > nowMs;
  }
}

/** How an outbox kind is worked off (e-mail, EDO sends): attempts, retries, leases, polling. */
export interface OutboxPolicy {
  /** One background attempt of one row. */
  attemptTimeoutMs: number;
  /** Attempts in all before a row is given up as failed. */
  maxAttempts: number;
  /** Delay before the n-th retry: retryBaseMs × 2^(n−1), at most retryMaxMs, ±20 % jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** How long a claim holds; longer than any attempt, so a live claimer never loses its row. */
  leaseMs: number;
  /** Rows attempted at the same time by one worker batch. */
  concurrency: number;
  /** Rows claimed per batch, and the pause between polls when nothing is due. */
  batchSize: number;
  pollIntervalMs: number;
}

export const DEFAULT_OUTBOX_POLICY: Readonly<Omit<OutboxPolicy, 'maxAttempts'>> = Object.freeze({
  attemptTimeoutMs: 30_000,
  retryBaseMs: 30_000,
  retryMaxMs: 60 * 60_000,
  leaseMs: 2 * 60_000,
  concurrency: 4,
  batchSize: 20,
  pollIntervalMs: 2_000,
});

/**
 * Throws when a policy cannot work: a lease no longer than the longest attempt (a live claimer
 * would lose its row), or a count below 1 (`counts` adds the kind's own).
 */
export function checkOutboxPolicy(name: string, policy: OutboxPolicy, longestAttemptMs: number, counts: Record<string, number> = {}): void {
  if (policy.leaseMs <= longestAttemptMs) {
    throw new Error(`${name}: leaseMs (${policy.leaseMs}) must exceed the longest attempt (${longestAttemptMs} ms)`);
  }
  const all: Record<string, number> = { maxAttempts: policy.maxAttempts, concurrency: policy.concurrency, batchSize: policy.batchSize, ...counts };
  const low = Object.entries(all).filter(([, value]) => !(value >= 1)).map(([key]) => key);
  if (low.length > 0) throw new Error(`${name}: ${low.join(', ')} must be at least 1`);
}

/** What one batch of outbox attempts did (e-mail and EDO workers alike). */
export interface OutboxBatchResult {
  claimed: number;
  sent: number;
  retrying: number;
  failed: number;
}

/**
 * Attempts each claimed row once, `concurrency` at a time, each under its own timeout and the
 * worker's abort signal, and counts the outcomes.
 */
export async function attemptClaimedRows<Row>(
  rows: readonly Row[],
  policy: { concurrency: number; attemptTimeoutMs: number },
  abort: AbortSignal,
  attempt: (row: Row, signal: AbortSignal) => Promise<string | null>,
): Promise<OutboxBatchResult> {
  const result: OutboxBatchResult = { claimed: rows.length, sent: 0, retrying: 0, failed: 0 };
  await forEachLimited(rows, policy.concurrency, async (row) => {
    const signal = AbortSignal.any([AbortSignal.timeout(policy.attemptTimeoutMs), abort]);
    const state = await attempt(row, signal);
    if (state === 'sent') result.sent++;
    else if (state === 'pending') result.retrying++;
    else if (state === 'failed') result.failed++;
  });
  return result;
}
