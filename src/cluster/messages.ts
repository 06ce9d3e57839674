/**
 * The messages between the primary of `invoicing serve` and its API processes, over Node's
 * IPC channel (JSON). Every one carries a `kind` starting with `invoicing:`, so they cannot be
 * confused with anything else on the channel. Those sent in one turn of the event loop travel
 * together as one `batch` (one write and one wakeup of the other side instead of one per request).
 *
 * An API process calls the primary (`call` → `reply` with the same id): count a request
 * against the rate limits, take the SQLite write lock (the reply is the grant), or get the
 * whole machine's metrics. One-way: the write lock's release and cancel (API process →
 * primary), `ready` and `startup-failed` (API process → primary), `open` (every API process
 * listens and the primary has printed what it prints: serve) and `shutdown` (primary → API
 * process). The primary asks each API process for its metrics (`collect-metrics` → `metrics`).
 */
import type { Registry } from 'prom-client';

/** What an API process may ask of the primary. */
export type CallOp = 'consume' | 'lock' | 'metrics';

export type ToPrimary =
  | Batch<ToPrimary>
  | { kind: 'invoicing:call'; id: number; op: CallOp; args?: unknown }
  | { kind: 'invoicing:lock-release'; id: number }
  | { kind: 'invoicing:lock-cancel'; id: number }
  | { kind: 'invoicing:ready' }
  | { kind: 'invoicing:startup-failed'; line: string; code: number }
  | { kind: 'invoicing:metrics'; id: number; metrics?: ProcessMetrics; error?: string };

export type ToApiProcess =
  | Batch<ToApiProcess>
  | { kind: 'invoicing:reply'; id: number; value?: unknown; error?: string }
  | { kind: 'invoicing:open' }
  | { kind: 'invoicing:shutdown' }
  | { kind: 'invoicing:collect-metrics'; id: number };

/** Messages sent in one write (src/cluster/batcher.ts), in the order they were sent. */
export interface Batch<T> {
  kind: 'invoicing:batch';
  messages: T[];
}

/** One process's metrics as prom-client's `getMetricsAsJSON()` gives them. */
export type ProcessMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/**
 * `consume` arguments: each rule as `[key, limit, windowSec]` (all the primary's counters need;
 * the policy names stay in the API process), and the caller's clock.
 */
export interface ConsumeArgs {
  rules: Array<[string, number, number]>;
  nowMs: number;
}

/** `consume` reply: as the Redis script answers (src/http/rate-limit/redis-store.ts). */
export interface ConsumeReply {
  allowed: boolean;
  counts: number[];
}

/** Bounds on what the primary accepts and sends (a message is parsed whole before it is looked at). */
export const LIMITS = {
  /** Rules in one `consume` (the API counts seven at most). */
  rulesPerCall: 16,
  /** Characters of one rule's key (`ip:…`, `key:…`, `team:…`, `link:…`). */
  keyLength: 512,
  /** Characters of a metrics exposition or of one process's metrics as JSON. */
  metricsChars: 16 * 1024 * 1024,
  /** Calls an API process has waiting for the primary; beyond, a call fails at once. */
  pendingCalls: 10_000,
  /** Metrics collections the primary runs at once. */
  collections: 16,
  /** Messages in one batch; a full batch is sent at once. */
  batch: 256,
} as const;

export function isOurs<T extends { kind: string }>(message: unknown): message is T {
  return typeof message === 'object' && message !== null && typeof (message as { kind?: unknown }).kind === 'string' && (message as { kind: string }).kind.startsWith('invoicing:');
}
