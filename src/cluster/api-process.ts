/**
 * An API process's link to the primary (src/cluster/primary.ts): the shared rate-limit store
 * and write lock, the machine's metrics, and the start-up and shutdown messages.
 */
import cluster from 'node:cluster';
import type { Registry } from 'prom-client';
import type { WriteLock } from '../db/write-lock.js';
import type { RateLimitStore } from '../http/rate-limit/rate-limit.types.js';
import { shareMetrics } from './metrics.js';
import { PrimaryChannel } from './primary-channel.js';
import { IpcRateLimitStore } from './rate-limits.js';
import { IpcWriteLock } from './write-lock.js';

export interface ApiProcessLink {
  /** The primary's rate-limit counters; null when REDIS_URL shares them already. */
  rateLimitStore: RateLimitStore | null;
  /** The primary's SQLite write lock; null on PostgreSQL. */
  writeLock: WriteLock | null;
  /** Given this process's registry, what `/metrics` answers: the machine's aggregate. */
  exposeMetrics(local: Registry): () => Promise<string>;
  /** `worker`: this process's number among the API processes (a replacement gets the next one). */
  logBase: { worker: number };
  /** Tells the primary this process listens. */
  ready(): void;
  /** Settles when the primary opens the service: every API process listens, the demo key is printed. */
  opened: Promise<void>;
  /** Tells the primary why this process could not start; resolves once the message is sent. */
  startupFailed(line: string, code: number): Promise<void>;
  /** Runs `listener` when the primary asks this process to shut down. */
  onShutdown(listener: () => void): void;
}

export function connectToPrimary(options: { rateLimits: boolean; writeLock: boolean }): ApiProcessLink {
  const channel = new PrimaryChannel();
  const opened = new Promise<void>((resolve) => channel.on('invoicing:open', () => resolve()));
  return {
    opened,
    rateLimitStore: options.rateLimits ? new IpcRateLimitStore(channel) : null,
    writeLock: options.writeLock ? new IpcWriteLock(channel) : null,
    exposeMetrics: (local) => shareMetrics(channel, local),
    logBase: { worker: cluster.worker?.id ?? 0 },
    ready: () => channel.send({ kind: 'invoicing:ready' }),
    startupFailed: (line, code) => new Promise<void>((resolve) => channel.sendNow({ kind: 'invoicing:startup-failed', line, code }, resolve)),
    onShutdown: (listener) => channel.on('invoicing:shutdown', listener),
  };
}
