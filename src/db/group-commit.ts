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
 *
 * Batch parts (`batchScopeOf`): a write may hand what adds up across writes to the end of its
 * batch instead of writing it itself, e.g. the daily e-mail quota (one row per team and day that
 * every e-mailing write would otherwise update). The part keeps what each write staged when the
 * write is released, drops it when the write is rolled back, and writes the sum once, before
 * COMMIT, in the same transaction: a write's share is stored exactly when the write is.
 */
import type { Transaction } from 'kysely';
import { dialectOf, type Db, type Executor } from './database.js';
import { executeSql, withDirectExecution } from './direct-execution.js';
import { statementCacheOf, type SqliteStatementCache } from './statement-cache.js';
import { retryPgConflicts } from './pg-retry.js';
import type { Database } from './types.js';
import { flushSearchIndex } from './text-search.js';
import { inSpan, SPAN, spansEnabled } from '../shared/tracing.js';

export type TransactionWork<T> = (trx: Transaction<Database>) => Promise<T>;

/** What a batch's writes add up, written once at the end of the batch (see above). */
export interface BatchPart {
  /** The write that staged something was released: keep it. */
  keep(): void;
  /** The write was rolled back to its savepoint: forget what it staged. */
  drop(): void;
  /** After the batch's last write, before COMMIT: write what was kept. */
  flush(trx: Executor): Promise<void>;
}

/** A batch's parts, one per key (a part's owner names it with an object of its own). */
export class BatchScope {
  private readonly parts = new Map<object, BatchPart>();

  /** The batch's part under `key`, made by `create` on first use in the batch. */
  part<T extends BatchPart>(key: object, create: () => T): T {
    let part = this.parts.get(key);
    if (part === undefined) {
      part = create();
      this.parts.set(key, part);
    }
    return part as T;
  }

  keep(): void {
    for (const part of this.parts.values()) part.keep();
  }

  drop(): void {
    for (const part of this.parts.values()) part.drop();
  }

  async flush(trx: Executor): Promise<void> {
    for (const part of this.parts.values()) await part.flush(trx);
  }
}

const scopes = new WeakMap<Executor, BatchScope>();

/** The batch `trx` runs, when it is a group commit's SQLite transaction (inside a write's work). */
export function batchScopeOf(trx: Executor): BatchScope | undefined {
  return scopes.get(trx);
}

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

  constructor(
    private readonly db: Db,
    private readonly maxBatch = MAX_BATCH,
  ) {
    this.batching = dialectOf(db) === 'sqlite';
    this.direct = this.batching ? statementCacheOf(db) : null;
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
        const scope = new BatchScope();
        const writes = async () => {
          for (const item of batch) {
            await executeSql(trx, 'savepoint group_write');
            try {
              const value = await item.work(trx);
              await executeSql(trx, 'release savepoint group_write');
              scope.keep();
              done.push({ item, value });
            } catch (err) {
              await executeSql(trx, 'rollback to savepoint group_write');
              await executeSql(trx, 'release savepoint group_write');
              scope.drop();
              settled.add(item);
              item.reject(err);
            }
          }
          await scope.flush(trx);
          // The batch's new documents into the search index at once (text-search.ts).
          if (done.length > 0) await flushSearchIndex(trx);
        };
        scopes.set(trx, scope);
        try {
          await (this.direct ? withDirectExecution(trx, this.direct, writes) : writes());
        } finally {
          scopes.delete(trx);
        }
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
