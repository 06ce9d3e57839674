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
