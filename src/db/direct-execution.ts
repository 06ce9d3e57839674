/**
 * Statements run straight on better-sqlite3 inside a group commit's transaction (issue 13).
 *
 * Kysely runs every statement through an asynchronous chain (the executor, the connection
 * provider and its mutex, the driver; about ten promise hops), although better-sqlite3 itself
 * is synchronous. Inside a group commit's SQLite transaction (group-commit.ts) that chain buys
 * nothing: the batch holds the one connection from BEGIN to COMMIT, so no other statement can
 * run on it meanwhile. There the transaction is bound to its connection's statement cache
 * (statement-cache.ts) and the statements compiled once (prepared-query.ts: `preparedQuery`,
 * `preparedStatement`, `insertRows`, `executeCompiled`) run on it synchronously: the same SQL
 * text, the same prepared statement, the same parameters and results as through Kysely, on the
 * same connection and in the same transaction. Anything else (a query Kysely builds) still
 * goes through Kysely on the same transaction, as before. Outside a bound transaction, and on
 * PostgreSQL, nothing changes.
 */
import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { Executor } from './database.js';
import { SqliteStatementCache, STATEMENT_CACHE_PROBE } from './statement-cache.js';

const bound = new WeakMap<Executor, SqliteStatementCache>();

/**
 * The statement cache of the SQLite connection behind `db` (a `cachingSqlite` one, as
 * `openDatabase` builds), or null: PostgreSQL, or a connection without the cache.
 */
export async function statementCacheOf(db: Kysely<any>): Promise<SqliteStatementCache | null> {
  try {
    const { rows } = await db.executeQuery(CompiledQuery.raw(STATEMENT_CACHE_PROBE));
    const cache = (rows[0] as { cache?: unknown } | undefined)?.cache;
    return cache instanceof SqliteStatementCache ? cache : null;
  } catch {
    // PostgreSQL (a comment is no statement there either) or a plain better-sqlite3 connection.
    return null;
  }
}

/**
 * Runs `work` with `trx` bound to `cache`: the compiled statements it runs on `trx` go straight
 * to better-sqlite3. Only for a transaction that holds the connection until `work` has settled
 * (the group commit's); the binding ends with `work`.
 */
export async function withDirectExecution<T>(trx: Executor, cache: SqliteStatementCache, work: () => Promise<T>): Promise<T> {
  bound.set(trx, cache);
  try {
    return await work();
  } finally {
    bound.delete(trx);
  }
}

/** The statement cache `db` is bound to, when it is a group commit's SQLite transaction. */
export function directCacheOf(db: Executor): SqliteStatementCache | undefined {
  return bound.get(db);
}

/**
 * Runs `query` on `cache` as Kysely's SQLite driver would (`all` for a statement that returns
 * rows, else `run`, the parameters bound as one array), synchronously.
 */
export function runOnCache<R>(cache: SqliteStatementCache, query: { sql: string; parameters: ReadonlyArray<unknown> }): QueryResult<R> {
  const statement = cache.prepare(query.sql);
  if (statement.reader) return { rows: statement.all(query.parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(query.parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** A compiled query on `db`: straight on better-sqlite3 when `db` is bound (above), else through Kysely. */
export async function executeCompiled<R>(db: Executor, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const cache = bound.get(db);
  if (cache !== undefined) return runOnCache<R>(cache, query);
  return db.executeQuery(query);
}

/** `sql` (no parameters) on `db`, as executeCompiled. */
export async function executeSql(db: Executor, sql: string): Promise<void> {
  await executeCompiled(db, CompiledQuery.raw(sql));
}
