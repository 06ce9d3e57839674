/**
 * Group commit for SQLite: writes that arrive together share one transaction and so one
 * fsync (`synchronous=FULL` stays), each in its own SAVEPOINT.
 *
 * better-sqlite3 is synchronous, so a COMMIT's fsync holds the event loop; one transaction
 * per document made the fsync the largest single cost of a create. Here a write is queued;
 * when no batch is running, the writes waiting (at most `maxBatch`) become one batch:
 *
 *   BEGIN; SAVEPOINT w; <write 1>; RELEASE w; SAVEPOINT w; <write 2>; RELEASE w; …; COMMIT
 *
 * A write that throws is rolled back to its savepoint and rejected at once: nothing of it is
 * stored and its neighbours go on. The others resolve only after the COMMIT returned (the
 * WAL is on disk): a caller is never told "stored" before it is. If the COMMIT itself fails,
 * every write of the batch is rejected (none is stored). Writes queued while a batch runs form
 * the next batch, so under load batches grow by themselves and without load a write waits for
 * nobody (a batch of one).
 *
 * A write sees only `trx`: a write through the database handle itself inside would wait for the
 * writer the batch holds (a read through it would see only what was committed before the batch). On SQLite `trx` is bound to the connection's statement cache for
 * the batch (direct-execution.ts): the savepoints, the search-index flush and every statement
 * compiled once (prepared-query.ts) run straight on better-sqlite3, without Kysely's
 * asynchronous path per statement. PostgreSQL gets no batching (a transaction per write on the
 * pool, whose server already groups concurrent commits' WAL flushes); there a transaction the
 * server aborted as a deadlock or serialization failure is run again (pg-retry.ts), so `work`
 * must be re-runnable (database writes on `trx` only).
 */
import type { Transaction } from 'kysely';
import { dialectOf, type Db, type Executor } from './database.js';
import { executeSql, withDirectExecution } from './direct-execution.js';
import { statementCacheOf, type SqliteStatementCache } from './statement-cache.js';
import { retryPgConflicts } from './pg-retry.js';
import type { Database } from './types.js';
import { inSpan, SPAN, spansEnabled } from '../shared/tracing.js';

export type TransactionWork<T> = (trx: Transaction<Database>) => Promise<T>;

interface Queued {
  work: TransactionWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Enough to share an fsync widely; small enough that a batch holds the loop briefly. */
export const MAX_BATCH = 64;

export class GroupCommit {
  private readonly queue: Queued[] = [];
  private running = false;
  private readonly batching: boolean;
  /** SQLite: the writing connection's statement cache (null: none, run through Kysely). */
  private readonly direct: SqliteStatementCache | null;
  /** Batches committed and writes in them (observability and tests). */
  readonly stats = { batches: 0, writes: 0, largest: 0 };
  /** Run last in every batch that kept a write, before COMMIT (`atBatchEnd`). */
  private readonly batchEnds = new Set<(trx: Executor) => Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly maxBatch = MAX_BATCH,
  ) {
    this.batching = dialectOf(db) === 'sqlite';
    this.direct = this.batching ? statementCacheOf(db) : null;
  }

  /**
   * `work` runs last in every SQLite batch that kept a write, before COMMIT, in its transaction
   * (the invoices store's search-index flush: one FTS5 segment per batch, not per document). A
   * function given twice runs once.
   */
  atBatchEnd(work: (trx: Executor) => Promise<void>): void {
    this.batchEnds.add(work);
  }

  /**
   * Runs `work` in a transaction (shared with other writes on SQLite); resolves after commit.
   * Traced (`invoicing.group_commit`): the wait for the batch, the batch and its COMMIT, i.e.
   * the write's time in the database.
   */
  run<T>(work: TransactionWork<T>): Promise<T> {
    if (spansEnabled()) return inSpan(SPAN.groupCommit, {}, () => this.runUntraced(work));
    return this.runUntraced(work);
  }

  private runUntraced<T>(work: TransactionWork<T>): Promise<T> {
    if (!this.batching) return retryPgConflicts(() => this.db.transaction().execute(work));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work: work as TransactionWork<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        // Let the writes whose requests are already parsed join this batch.
        await new Promise<void>((r) => setImmediate(r));
        await this.commitBatch();
      }
    } finally {
      this.running = false;
    }
  }

  private async commitBatch(): Promise<void> {
    const done: Array<{ item: Queued; value: unknown }> = [];
    const settled = new Set<Queued>();
    let batch: Queued[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        // Taken once BEGIN has the writer (and, with several processes on the file, its turn,
        // sqlite-driver.ts): the writes queued while it waited join this batch.
        batch = this.queue.splice(0, this.maxBatch);
        const writes = async () => {
          for (const item of batch) {
            await executeSql(trx, 'savepoint group_write');
            try {
              const value = await item.work(trx);
              await executeSql(trx, 'release savepoint group_write');
              done.push({ item, value });
            } catch (err) {
              await executeSql(trx, 'rollback to savepoint group_write');
              await executeSql(trx, 'release savepoint group_write');
              settled.add(item);
              item.reject(err);
            }
          }
          if (done.length > 0) for (const end of this.batchEnds) await end(trx);
        };
        await (this.direct ? withDirectExecution(trx, this.direct, writes) : writes());
      });
    } catch (err) {
      // BEGIN, a savepoint statement or the COMMIT failed: nothing of the batch is stored. (When
      // BEGIN failed, the batch is the writes that were waiting for it.)
      if (batch.length === 0) batch = this.queue.splice(0, this.maxBatch);
      for (const item of batch) if (!settled.has(item)) item.reject(err);
      return;
    }
    this.stats.batches += 1;
    this.stats.writes += done.length;
    this.stats.largest = Math.max(this.stats.largest, batch.length);
    for (const { item, value } of done) item.resolve(value);
  }
}

const perDatabase = new WeakMap<Db, GroupCommit>();

/** The one group-commit queue of a database handle (every writer of it must share it). */
export function groupCommitFor(db: Db): GroupCommit {
  let group = perDatabase.get(db);
  if (!group) {
    group = new GroupCommit(db);
    perDatabase.set(db, group);
  }
  return group;
}
