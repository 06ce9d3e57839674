/**
 * Kysely factory for the two supported databases. What must differ between SQLite and
 * PostgreSQL lives here and nowhere else.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  type DialectAdapter,
  type Driver,
  type MigrationLockOptions,
  type SqliteDialectConfig,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { DEFAULT_PG_BOUNDS, DEFAULT_PG_POOL_SIZE, type DatabaseTarget } from '../config/config.js';
import type { Database } from './types.js';
import { cachingSqlite, SqliteStatementCache, useDataVersion, useStatementCache } from './statement-cache.js';
import { useNamedStatements } from './pg-statements.js';
import { openBoundedPool, type ConnectionErrorListener } from './pg-pool.js';
import type { WriteLock } from './write-lock.js';
import { TwoConnectionSqliteDriver } from './sqlite-driver.js';
import { openReadThreads, type ReadThreads, type ReadThreadsOptions } from './read-threads.js';

export type Db = Kysely<Database>;
export type Executor = Kysely<Database> | Transaction<Database>;

export type SqlDialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Db;
  dialect: SqlDialect;
  /**
   * SQLite: the prepared-statement cache of the writing connection, which every transaction and
   * every write goes through (statement-cache.ts; reads outside transactions have a connection
   * and a cache of their own, sqlite-driver.ts). Null on PostgreSQL.
   */
  statements?: SqliteStatementCache | null;
  /**
   * SQLite file: the threads that run the reads whose cost a caller controls (searches, deep
   * pages; read-threads.ts), off the event loop. Null on PostgreSQL and for `:memory:`.
   */
  readThreads?: ReadThreads | null;
  /**
   * PostgreSQL: where the failures of connections go from now on (lost, refused, a server that
   * stopped answering: src/db/pg-pool.ts); the owner of a logger sets it. Never thrown.
   */
  onConnectionError?(listener: ConnectionErrorListener): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * SQLite file shared by several processes of one machine (src/cluster/): every write
   * transaction, and every write outside one, waits for this lock (asynchronously) before it
   * takes SQLite's. Without it a process wanting to write while another one does would sleep in
   * SQLite's busy handler, holding its event loop.
   */
  writeLock?: WriteLock;
  /** SQLite file: the reading threads' bounds (read-threads.ts); their defaults otherwise. */
  readThreads?: ReadThreadsOptions;
}

/** Statements kept per SQLite connection: the service's distinct SQL texts fit with room. */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * Which database a Kysely instance (or transaction, or a migration's untyped handle) talks
 * to, read off its adapter. The one switch for SQL that cannot be portable.
 */
export function dialectOf(db: Kysely<any>): SqlDialect {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  throw new Error(`unsupported database adapter ${adapter.constructor.name}`);
}

/**
 * Kysely's SQLite adapter takes no migration lock, so two processes starting on a fresh file
 * could both run a migration. Here migrations run in one transaction, begun IMMEDIATE (the
 * driver below) and whose first statement writes the lock row: the second process waits
 * (busy_timeout) until the first commits, then finds nothing left to do.
 */
class LockingSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  override async acquireMigrationLock(db: Kysely<any>, options: MigrationLockOptions): Promise<void> {
    await db.updateTable(options.lockTable).set({ is_locked: 1 }).where('id', '=', options.lockRowId).execute();
  }

  override async releaseMigrationLock(): Promise<void> {
    // The transaction's commit releases the write lock.
  }
}

class LockingSqliteDialect extends SqliteDialect {
  constructor(private readonly driver: TwoConnectionSqliteDriver) {
    // Kysely's dialect wants a database; the driver below is what runs the queries.
    super({ database: driver.writer as unknown as SqliteDialectConfig['database'] });
  }

  override createDriver(): Driver {
    return this.driver;
  }

  override createAdapter(): DialectAdapter {
    return new LockingSqliteAdapter();
  }
}

/** The application_name of the service's PostgreSQL connections (a URL's own `application_name` wins). */
export { PG_APPLICATION_NAME } from './pg-pool.js';

// PostgreSQL BIGINT (int8) arrives as a string by default; our integer columns fit in a double.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

export function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): DatabaseHandle {
  if (target.kind === 'sqlite') {
    if (target.file !== ':memory:') fs.mkdirSync(path.dirname(target.file), { recursive: true });
    const sqlite = new SqliteDatabase(target.file);
    // WAL with synchronous=FULL: an acknowledged commit survives power loss.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    // Kysely prepares every query it runs; the cache hands back the statement prepared before.
    const statements = new SqliteStatementCache(sqlite, { max: STATEMENT_CACHE_SIZE });
    // The reads outside transactions go to a connection of their own (sqlite-driver.ts); it never writes.
    let reader: ReturnType<typeof cachingSqlite> | null = null;
    let dataVersion: (() => number) | null = null;
    if (target.file !== ':memory:') {
      const readOnly = new SqliteDatabase(target.file);
      readOnly.pragma('busy_timeout = 5000');
      readOnly.pragma('query_only = ON');
      reader = cachingSqlite(readOnly, new SqliteStatementCache(readOnly, { max: STATEMENT_CACHE_SIZE }));
      // Asked on the reading connection, which never writes: every commit moves it.
      const probe = readOnly.prepare('PRAGMA data_version').pluck();
      dataVersion = () => probe.get() as number;
    }
    const driver = new TwoConnectionSqliteDriver(cachingSqlite(sqlite, statements), reader, options.writeLock ?? null);
    const db = new Kysely<Database>({ dialect: new LockingSqliteDialect(driver) });
    if (dataVersion !== null) useDataVersion(db, dataVersion);
    // The group commit runs its statements straight on this cache (direct-execution.ts).
    useStatementCache(db, statements);
    // Threads start on the first heavy read only: commands that never search start none.
    const readThreads = target.file !== ':memory:' ? openReadThreads(target.file, options.readThreads) : null;
    return {
      db,
      dialect: 'sqlite',
      statements,
      readThreads,
      close: async () => {
        // The threads' connections first: the last connection to close checkpoints and removes the WAL.
        await readThreads?.close();
        await db.destroy();
      },
    };
  }
  // The hot queries run as named prepared statements (pg-statements.ts), unless turned off
  // (INVOICING_PG_NAMED_STATEMENTS=false, e.g. behind a transaction pooler that cannot keep them).
  const bounded = openBoundedPool({
    url: target.url,
    max: target.poolSize ?? DEFAULT_PG_POOL_SIZE,
    bounds: target.bounds ?? DEFAULT_PG_BOUNDS,
    ...(target.namedStatements !== false ? { setup: useNamedStatements } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: bounded.pool }) });
  return { db, dialect: 'postgres', onConnectionError: bounded.onConnectionError, close: () => db.destroy() };
}
