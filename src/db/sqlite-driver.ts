/**
 * The Kysely driver for a SQLite file: one connection that writes, one that reads.
 *
 * Kysely's own SQLite driver has one connection behind a mutex, so a read waits for every
 * transaction in flight: under write load, for a whole group-commit batch (src/db/group-commit.ts),
 * several milliseconds. In WAL mode a second connection reads the last committed state while the
 * first one writes, so here:
 *
 * - a statement outside a transaction that does not write (better-sqlite3's `readonly`) runs on
 *   the read connection at once, whatever is being written (a PRAGMA excepted: it is about a
 *   connection, and the writer's settings are the ones that matter);
 * - a transaction takes the writer: the in-process write mutex, then the cross-process
 *   `WriteLock` when there is one (write-lock.ts: several processes on one file), then
 *   `BEGIN IMMEDIATE`; COMMIT or ROLLBACK gives both back. Every statement of the transaction
 *   runs on the write connection, reads included (they see the transaction's own writes);
 * - a write outside a transaction (autocommit) takes the writer for its one statement.
 *
 * IMMEDIATE takes SQLite's write lock when the transaction starts, so no other connection can
 * commit between its first read and its first write. A deferred BEGIN that read and then wrote
 * after another process had committed fails at once with SQLITE_BUSY_SNAPSHOT (the busy timeout
 * does not apply): with several processes on one file a request would get a 500 for a conflict
 * it never had.
 *
 * A reader outside a transaction sees what is committed, never a transaction's work in progress
 * (with one connection it waited for the commit instead). `:memory:` databases are one
 * connection each, so there the reads take the writer too, as Kysely's driver did.
 */
import {
  CompiledQuery,
  SelectQueryNode,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type RawBuilder,
  sql,
} from 'kysely';
import { FifoWriteLock, type WriteLock } from './write-lock.js';

/** A prepared statement, as better-sqlite3 gives it. */
export interface Statement {
  readonly reader: boolean;
  readonly readonly: boolean;
  all(parameters: readonly unknown[]): unknown[];
  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters: readonly unknown[]): IterableIterator<unknown>;
}

/** A connection: the (cached) statement of a SQL text, and closing. */
export interface SqliteConnectionSource {
  prepare(sql: string): Statement;
  close(): void;
}

/** A PRAGMA reads or sets a connection's own state: the writer's is the one that counts. */
const PRAGMA = /^\s*pragma\b/i;

/**
 * The reading connection's statement for `sql` when it only reads, else null (a write, or a text
 * the reading connection cannot prepare: the writer runs it, and reports its error if any).
 */
function readingStatement(reader: SqliteConnectionSource, sql: string): Statement | null {
  try {
    const statement = reader.prepare(sql);
    return statement.readonly ? statement : null;
  } catch {
    return null;
  }
}

/** A statement's result as Kysely's SQLite driver gives it: a reader's rows, or the changes made. */
export function resultOf<R>(statement: Statement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return {
    numAffectedRows: BigInt(changes),
    insertId: BigInt(lastInsertRowid),
    rows: [],
  };
}

function execute<R>(connection: SqliteConnectionSource, query: CompiledQuery): QueryResult<R> {
  return resultOf<R>(connection.prepare(query.sql), query.parameters);
}

/** One `acquireConnection()`: Kysely holds it for a query, or for a transaction from BEGIN to its end. */
class SqliteSession implements DatabaseConnection {
  inTransaction = false;

  constructor(private readonly driver: TwoConnectionSqliteDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, reader } = this.driver;
    if (this.inTransaction) return execute<R>(writer, query);
    const reading = reader !== null && !PRAGMA.test(query.sql) ? readingStatement(reader, query.sql) : null;
    if (reading !== null) return resultOf<R>(reading, query.parameters);
    await this.driver.takeWriter();
    try {
      return execute<R>(writer, query);
    } finally {
      this.driver.releaseWriter();
    }
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('Sqlite driver only supports streaming of select queries');
    const connection = this.inTransaction || this.driver.reader === null ? this.driver.writer : this.driver.reader;
    for (const row of connection.prepare(query.sql).iterate(query.parameters)) yield { rows: [row as R] };
  }
}

export class TwoConnectionSqliteDriver implements Driver {
  /** The writer within this process: one transaction or autocommit write at a time. */
  private readonly writerTurn = new FifoWriteLock();

  /**
   * `reader`: a second connection to the same file, or null for `:memory:` (one connection).
   * `writeLock`: the turn among processes sharing the file, or null.
   */
  constructor(
    readonly writer: SqliteConnectionSource,
    readonly reader: SqliteConnectionSource | null,
    private readonly writeLock: WriteLock | null,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SqliteSession(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.takeWriter();
    try {
      execute(this.writer, CompiledQuery.raw('begin immediate'));
    } catch (err) {
      this.releaseWriter();
      throw err;
    }
    (connection as SqliteSession).inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A failed COMMIT is followed by Kysely's ROLLBACK, which gives the writer back.
    execute(this.writer, CompiledQuery.raw('commit'));
    this.endTransaction(connection);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      execute(this.writer, CompiledQuery.raw('rollback'));
    } finally {
      this.endTransaction(connection);
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compileQuery(savepointCommand('savepoint', name), createQueryId()));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compileQuery(savepointCommand('rollback to', name), createQueryId()));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compileQuery(savepointCommand('release', name), createQueryId()));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    this.reader?.close();
    this.writer.close();
  }

  /** The in-process turn first, then the cross-process one: a process never holds the file's turn while it queues locally. */
  async takeWriter(): Promise<void> {
    await this.writerTurn.acquire();
    if (this.writeLock === null) return;
    try {
      await this.writeLock.acquire();
    } catch (err) {
      this.writerTurn.release();
      throw err;
    }
  }

  releaseWriter(): void {
    this.writeLock?.release();
    this.writerTurn.release();
  }

  private endTransaction(connection: DatabaseConnection): void {
    const session = connection as SqliteSession;
    if (!session.inTransaction) return;
    session.inTransaction = false;
    this.releaseWriter();
  }
}

let queryIds = 0;
function createQueryId(): { readonly queryId: string } {
  return { queryId: `sqlite-savepoint-${++queryIds}` };
}

/** `SAVEPOINT name` and its kin, as Kysely's own driver writes them (its parser is not exported). */
function savepointCommand(command: 'savepoint' | 'rollback to' | 'release', name: string): Parameters<QueryCompiler['compileQuery']>[0] {
  const raw: RawBuilder<unknown> = sql`${sql.raw(command)} ${sql.id(name)}`;
  return raw.toOperationNode();
}
