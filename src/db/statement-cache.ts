/**
 * Prepared-statement cache for better-sqlite3.
 *
 * Kysely's SQLite driver calls `database.prepare(sql)` for every query it runs, and
 * better-sqlite3 prepares the statement anew each time (`sqlite3_prepare_v3`: parse, plan,
 * allocate): on the read path that was the top self-time frame. `cachingSqlite()` hands Kysely
 * a database whose `prepare` returns the `Statement` it prepared before for the same SQL text,
 * from a bounded LRU. A statement stays valid across schema changes (SQLite re-prepares it
 * itself on SQLITE_SCHEMA). One that is busy (an `iterate()` still open, i.e. a streamed query)
 * is never handed out twice: a fresh, uncached one is prepared instead.
 *
 * Anyone holding the raw better-sqlite3 handle may use the same cache:
 *
 *   const cache = new SqliteStatementCache(sqlite, { max: 512 });
 *   cache.prepare('SELECT … WHERE id = ?').get(id);
 *
 * `openDatabase` (database.ts) installs one per SQLite file and exposes it as
 * `DatabaseHandle.statements`.
 */
import type SqliteDatabase from 'better-sqlite3';

type Statement = SqliteDatabase.Statement<unknown[], unknown>;

export interface StatementCacheStats {
  size: number;
  max: number;
  hits: number;
  misses: number;
  /** Statements prepared uncached because the cached one was busy (an open iterator). */
  busy: number;
}

export class SqliteStatementCache {
  private readonly statements = new Map<string, Statement>();
  private readonly max: number;
  private hits = 0;
  private misses = 0;
  private busy = 0;

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    options: { max?: number } = {},
  ) {
    this.max = Math.max(1, options.max ?? 512);
  }

  /** The prepared statement for `sql`, reused while it stays among the `max` most recent. */
  prepare(sql: string): Statement {
    const cached = this.statements.get(sql);
    if (cached !== undefined) {
      if (cached.busy) {
        this.busy++;
        return this.sqlite.prepare(sql);
      }
      this.hits++;
      // Most recently used goes last (Map keeps insertion order).
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    this.misses++;
    const statement = this.sqlite.prepare(sql);
    this.statements.set(sql, statement);
    if (this.statements.size > this.max) {
      const oldest = this.statements.keys().next().value as string;
      this.statements.delete(oldest);
    }
    return statement;
  }

  stats(): StatementCacheStats {
    return { size: this.statements.size, max: this.max, hits: this.hits, misses: this.misses, busy: this.busy };
  }

  clear(): void {
    this.statements.clear();
  }
}

/** The writing connection's statement cache of each SQLite database (openDatabase registers it). */
const writerCaches = new WeakMap<object, SqliteStatementCache>();

/** Registers `cache` as the one of the connection that runs the transactions of `db` (a Kysely instance). */
export function useStatementCache(db: object, cache: SqliteStatementCache): void {
  writerCaches.set(db, cache);
}

/**
 * The statement cache of the SQLite connection that runs `db`'s transactions, or null:
 * PostgreSQL, or a database nobody registered one for (the group commit then uses Kysely;
 * direct-execution.ts).
 */
export function statementCacheOf(db: object): SqliteStatementCache | null {
  return writerCaches.get(db) ?? null;
}

/** The data version probe of each SQLite database with a reading connection (openDatabase registers it). */
const dataVersions = new WeakMap<object, () => number>();

/**
 * Registers `probe` as `db`'s data version: SQLite's `PRAGMA data_version` read on the connection
 * that serves `db`'s reads outside transactions. Its value changes whenever any other connection
 * (this process's writing connection, another process's) has committed since the last read, so an
 * equal value means nothing stored has changed (sqlite.org/pragma.html#pragma_data_version).
 */
export function useDataVersion(db: object, probe: () => number): void {
  dataVersions.set(db, probe);
}

/**
 * `db`'s data version probe, or null: PostgreSQL, or a SQLite database with one connection
 * (`:memory:`), where the writes are on the connection that would be asked and do not move it.
 */
export function dataVersionOf(db: object): (() => number) | null {
  return dataVersions.get(db) ?? null;
}

/**
 * The better-sqlite3 database as Kysely's `SqliteDialect` wants it (`prepare` and `close`),
 * with `prepare` going through `cache`.
 */
export function cachingSqlite(sqlite: SqliteDatabase.Database, cache: SqliteStatementCache): { prepare(sql: string): Statement; close(): void } {
  return {
    prepare: (sql: string) => cache.prepare(sql),
    close: () => {
      cache.clear();
      sqlite.close();
    },
  };
}
