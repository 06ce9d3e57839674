/**
 * A lock that serializes SQLite write transactions across the processes of one machine that
 * share a database file (the API processes of `invoicing serve`, src/cluster/).
 *
 * SQLite lets one connection write at a time; a second one waiting for the file lock sleeps
 * inside better-sqlite3's synchronous call (busy_timeout), holding its event loop. With this
 * lock a process waits for its turn asynchronously, before `BEGIN IMMEDIATE`, and goes on
 * serving requests meanwhile. `openDatabase(target, { writeLock })` takes one; without it
 * (one process, PostgreSQL) nothing is awaited.
 */
export interface WriteLock {
  /** Resolves when this process may write. Every acquire is followed by exactly one release. */
  acquire(): Promise<void>;
  /** Lets the next waiting process write. */
  release(): void;
}

/**
 * A first-come, first-served `WriteLock` for holders in one process: what two database handles
 * of one process share to take turns. (The primary of `invoicing serve` keeps a queue of its own,
 * src/cluster/write-lock.ts, which also withdraws a request that waited too long and drops the
 * requests and the lock of an API process that died.)
 */
export class FifoWriteLock implements WriteLock {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }

  /** Holders waiting for their turn (observability, tests). */
  get queued(): number {
    return this.waiting.length;
  }
}
