/**
 * SQLite: reads whose cost a caller controls run on threads of their own, never on the event loop.
 *
 * better-sqlite3 runs a statement synchronously on the thread that calls it. Most reads take
 * microseconds (one document by its key, a cached list page's counters), but a few shapes walk
 * many rows whatever index serves them: a one- or two-character `q` (no trigram to look up, so
 * the team's documents are tested one by one: ~1.1 s at 1M documents), a deep `offset` (the list
 * index walked up to it), an events filter on a rare type. On the event loop each such request
 * would hold every other request of the process for that long. Here they run on a small pool of
 * worker threads (piscina), each with its own read-only connection to the file (WAL: readers see
 * the last commit and never wait for the writer), so the event loop stays free.
 *
 * Bounds (docs/security.md, "Heavy reads"): at most `maxQueue` statements wait for a thread and at
 * most `perTeam` heavy requests of one team run or wait at once (so one team cannot fill the
 * queue): beyond either, 503 `service_unavailable` with Retry-After. A statement running longer
 * than `timeoutMs` is stopped (its thread is ended and replaced) and answers 503 too.
 *
 * PostgreSQL needs none of this: its statements run in the server, and the statement timeout
 * bounds them.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import { Piscina } from 'piscina';
import { ApiError } from '../shared/errors.js';
import type { Database } from './types.js';

export interface ReadThreadsOptions {
  /** Threads (each with its own connection). Default 1. */
  threads?: number;
  /** Statements waiting for a thread; beyond, 503. Default 64. */
  maxQueue?: number;
  /** One statement's time on a thread; beyond, it is stopped and answers 503. Default 30 s. */
  timeoutMs?: number;
  /** Heavy requests of one team running or waiting at once; beyond, 503. Default 2. */
  perTeam?: number;
}

export interface ReadThreads {
  /** A Kysely instance whose statements run on the threads (reads only; no transactions). */
  db: Kysely<Database>;
  /**
   * Runs `work` (which reads through `db`) as one heavy request of `teamId`: refused at once
   * with 503 when the team already has `perTeam` of them running or waiting.
   */
  forTeam<T>(teamId: string, work: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

function unavailable(details: string): ApiError {
  return new ApiError('service_unavailable', { details, retry_after_sec: 1 }, { 'retry-after': '1' });
}

class ThreadConnection implements DatabaseConnection {
  constructor(private readonly threads: ThreadPool) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return { rows: (await this.threads.run(query.sql, query.parameters)) as R[] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('reading threads do not stream');
  }
}

class ThreadDriver implements Driver {
  constructor(private readonly threads: ThreadPool) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new ThreadConnection(this.threads);
  }
  async beginTransaction(): Promise<void> {
    throw new Error('reading threads run no transactions');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

class ThreadPool {
  private pool: Piscina | null;
  private waiting = 0;

  constructor(
    file: string,
    private readonly threads: number,
    private readonly maxQueue: number,
    private readonly timeoutMs: number,
  ) {
    // From the build the worker is JavaScript; from the sources (tsx, vitest), TypeScript through tsx.
    const fromSources = import.meta.url.endsWith('.ts');
    this.pool = new Piscina({
      filename: fileURLToPath(new URL(fromSources ? './read-thread-worker.ts' : './read-thread-worker.js', import.meta.url)),
      workerData: { file },
      minThreads: 0,
      maxThreads: threads,
      // Threads start on the first heavy read and end after a minute without one.
      idleTimeout: 60_000,
      ...(fromSources ? { execArgv: ['--import', 'tsx'] } : {}),
    });
  }

  async run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    const pool = this.pool;
    if (pool === null) throw unavailable('the service is shutting down');
    if (this.waiting >= this.threads + this.maxQueue) throw unavailable('too many searches and deep pages are running; retry in a moment');
    this.waiting++;
    try {
      return (await pool.run({ sql, parameters }, { signal: AbortSignal.timeout(this.timeoutMs) })) as unknown[];
    } catch (err) {
      if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') {
        throw unavailable(`the query ran longer than ${this.timeoutMs} ms and was stopped; narrow it (a longer q, a date range) and retry`);
      }
      throw err;
    } finally {
      this.waiting--;
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}

/** Reading threads for the SQLite file `file`. */
export function openReadThreads(file: string, options: ReadThreadsOptions = {}): ReadThreads {
  const threads = new ThreadPool(file, options.threads ?? Math.max(1, Math.min(2, os.availableParallelism() - 1)), options.maxQueue ?? 64, options.timeoutMs ?? 30_000);
  const dialect: Dialect = {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ThreadDriver(threads),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
  const db = new Kysely<Database>({ dialect });
  const perTeam = options.perTeam ?? 2;
  const running = new Map<string, number>();
  return {
    db,
    async forTeam(teamId, work) {
      const now = running.get(teamId) ?? 0;
      if (now >= perTeam) throw unavailable(`this team already has ${perTeam} searches or deep pages running; retry when they end`);
      running.set(teamId, now + 1);
      try {
        return await work(db);
      } finally {
        const left = (running.get(teamId) ?? 1) - 1;
        if (left === 0) running.delete(teamId);
        else running.set(teamId, left);
      }
    },
    close: () => threads.close(),
  };
}
