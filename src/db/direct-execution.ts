/**
 * Statements run straight on better-sqlite3 inside a group commit's transaction (a create
 * −14 % CPU in-process).
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
import { CompiledQuery, type QueryResult } from 'kysely';
import type { Executor } from './database.js';
import type { SqliteStatementCache } from './statement-cache.js';
import { resultOf } from './sqlite-driver.js';

const bound = new WeakMap<Executor, SqliteStatementCache>();

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

/** Runs `query` on `cache` as our SQLite driver does (sqlite-driver.ts `resultOf`), synchronously. */
export function runOnCache<R>(cache: SqliteStatementCache, query: { sql: string; parameters: ReadonlyArray<unknown> }): QueryResult<R> {
  return resultOf<R>(cache.prepare(query.sql), query.parameters);
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
