/**
 * The SQLite write lock (src/db/write-lock.ts) across the API processes of one machine: the
 * primary holds a FIFO mutex; an API process's acquire() asks for it and resolves when granted,
 * release() gives it back. A process that dies holding it, or waiting for it, is dropped by
 * the primary when it sees the process go.
 */
import type { WriteLock } from '../db/write-lock.js';
import { CallTimeoutError, type PrimaryChannel } from './primary-channel.js';

/**
 * How long acquire() waits for its turn before it fails: the same bound as SQLite's own
 * busy_timeout (src/db/database.ts), after which a write fails with SQLITE_BUSY.
 */
export const WRITE_LOCK_TIMEOUT_MS = 5_000;

export class WriteLockTimeoutError extends Error {
  readonly code = 'SQLITE_BUSY';
  constructor() {
    super(`the SQLite write lock was not granted within ${WRITE_LOCK_TIMEOUT_MS} ms`);
    this.name = 'WriteLockTimeoutError';
  }
}

/** An API process's lock: asks the primary. */
export class IpcWriteLock implements WriteLock {
  /** The id of the grant this process holds, if any. */
  private held: number | null = null;

  constructor(private readonly channel: PrimaryChannel) {}

  async acquire(): Promise<void> {
    let granted: unknown;
    try {
      // Timed out: withdraw the request (the primary releases it if the grant crossed this).
      granted = await this.channel.call('lock', undefined, WRITE_LOCK_TIMEOUT_MS, (id) => this.channel.send({ kind: 'invoicing:lock-cancel', id }));
    } catch (err) {
      if (err instanceof CallTimeoutError) throw new WriteLockTimeoutError();
      throw err;
    }
    this.held = granted as number;
  }

  /** Gives the lock back; does nothing when none is held (e.g. after an acquire that failed). */
  release(): void {
    if (this.held === null) return;
    const id = this.held;
    this.held = null;
    this.channel.send({ kind: 'invoicing:lock-release', id });
  }
}

interface Turn {
  process: number;
  id: number;
  grant(): void;
}

/** The primary's mutex: one holder, the others in arrival order. */
export class WriteLockQueue {
  private holder: Turn | null = null;
  private waiting: Turn[] = [];

  /** Queues a request; `grant` runs when it is this request's turn. */
  request(turn: Turn): void {
    if (this.holder === null) {
      this.holder = turn;
      turn.grant();
    } else {
      this.waiting.push(turn);
    }
  }

  release(process: number, id: number): void {
    if (this.holder !== null && this.holder.process === process && this.holder.id === id) this.next();
  }

  /** A request given up by its process: out of the queue, or released if it was granted meanwhile. */
  cancel(process: number, id: number): void {
    if (this.holder !== null && this.holder.process === process && this.holder.id === id) {
      this.next();
      return;
    }
    this.waiting = this.waiting.filter((turn) => !(turn.process === process && turn.id === id));
  }

  /** A process is gone: its requests are dropped and its lock, if it held it, released. */
  drop(process: number): void {
    this.waiting = this.waiting.filter((turn) => turn.process !== process);
    if (this.holder?.process === process) this.next();
  }

  /** Requests waiting (for tests and diagnostics). */
  get queued(): number {
    return this.waiting.length;
  }

  private next(): void {
    this.holder = this.waiting.shift() ?? null;
    this.holder?.grant();
  }
}
