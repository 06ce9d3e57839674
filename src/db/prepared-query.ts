/**
 * Queries compiled once. Kysely builds an operation tree and compiles it to SQL on
 * every call: on the hottest reads (one document by id, its share links, a team, a tariff)
 * that costs as much CPU as running the statement. `preparedQuery` builds and compiles the
 * query once per dialect, with named placeholders, and afterwards only binds the values:
 *
 *   const byId = preparedQuery<'teamId' | 'publicId', InvoiceRow>((db, p) =>
 *     db.selectFrom('invoices').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')));
 *   const rows = await byId(db, { teamId, publicId });
 *
 * The SQL text is identical on every call, so SQLite's statement cache (statement-cache.ts)
 * reuses its prepared statement too; on PostgreSQL the text runs as a named prepared statement
 * outside transactions (pg-statements.ts). Only for queries whose shape does not depend on the
 * values (no `in` lists of varying length, no optional conditions).
 *
 * `preparedStatement` is the same for writes whose effect is checked (the whole result, with
 * `numAffectedRows`), and `insertRows` the same for multi-row INSERTs: compiled once
 * per table, column list and row count.
 *
 * Each also binds without running (`statement.bind(db, values)`, `insertRowsQuery`): a write can
 * bind its statements before its transaction and only run them inside (`executeCompiled`). In a
 * group commit's SQLite transaction all of them run straight on better-sqlite3
 * (direct-execution.ts).
 */
import { CompiledQuery, type Compilable, type Insertable, type Kysely, type QueryResult } from 'kysely';
import { dialectOf, type Executor, type SqlDialect } from './database.js';
import { directCacheOf, runOnCache } from './direct-execution.js';
import { nameStatement } from './pg-statements.js';
import type { Database } from './types.js';

/** Runs `sql` with `parameters` on `db`: straight on better-sqlite3 in a bound transaction, else through Kysely. */
async function execute<R>(db: Executor, sql: string, parameters: unknown[]): Promise<QueryResult<R>> {
  const cache = directCacheOf(db);
  if (cache !== undefined) return runOnCache<R>(cache, { sql, parameters });
  return db.executeQuery<R>(CompiledQuery.raw(sql, parameters) as CompiledQuery<R>);
}

const MARK = '\u0000param:';

type Plan<P> = { sql: string; slots: Array<{ name: P } | { value: unknown }> };

/** A statement compiled once: run it, or bind it now and run it later with `executeCompiled`. */
export interface PreparedStatement<P extends string, R> {
  (db: Executor, values: Record<P, unknown>): Promise<QueryResult<R>>;
  bind(db: Executor, values: Record<P, unknown>): CompiledQuery<R>;
}

export function preparedStatement<P extends string, R>(
  build: (db: Kysely<Database>, param: (name: P) => any) => Compilable<R>,
): PreparedStatement<P, R> {
  const compiled = new Map<SqlDialect, Plan<P>>();
  const planFor = (db: Executor): Plan<P> => {
    const dialect = dialectOf(db);
    let plan = compiled.get(dialect);
    if (plan === undefined) {
      const query = build(db as Kysely<Database>, (name) => `${MARK}${name}`).compile();
      const slots = query.parameters.map((p) =>
        typeof p === 'string' && p.startsWith(MARK) ? { name: p.slice(MARK.length) as P } : { value: p },
      );
      plan = { sql: query.sql, slots };
      compiled.set(dialect, plan);
      // PostgreSQL: parsed and planned once per connection, not per call (pg-statements.ts).
      if (dialect === 'postgres') nameStatement(plan.sql);
    }
    return plan;
  };
  const parametersOf = (plan: Plan<P>, values: Record<P, unknown>) => plan.slots.map((s) => ('name' in s ? values[s.name] : s.value));
  const run = async (db: Executor, values: Record<P, unknown>): Promise<QueryResult<R>> => {
    const plan = planFor(db);
    return execute<R>(db, plan.sql, parametersOf(plan, values));
  };
  return Object.assign(run, {
    bind: (db: Executor, values: Record<P, unknown>): CompiledQuery<R> => {
      const plan = planFor(db);
      return CompiledQuery.raw(plan.sql, parametersOf(plan, values)) as CompiledQuery<R>;
    },
  });
}

export function preparedQuery<P extends string, R>(
  build: (db: Kysely<Database>, param: (name: P) => any) => Compilable<R>,
): (db: Executor, values: Record<P, unknown>) => Promise<R[]> {
  const statement = preparedStatement(build);
  return async (db, values) => (await statement(db, values)).rows;
}

/** How many INSERT shapes (dialect, table, columns, row count) stay compiled. */
const INSERT_PLANS_MAX = 256;
const insertPlans = new Map<string, { sql: string; slots: Array<{ row: number; column: string } | { value: unknown }> }>();

/** The columns a row sets (Kysely leaves out keys whose value is undefined). */
function definedColumns(row: Record<string, unknown>): string[] {
  const columns: string[] = [];
  for (const key in row) if (row[key] !== undefined) columns.push(key);
  return columns;
}

/**
 * `INSERT INTO table (…) VALUES (…), (…)` of `rows`, as `db.insertInto(table).values(rows)` would
 * write it, but compiled by Kysely only once per dialect, table, column list and row count (a
 * bounded map of plans). Rows that set different columns go through Kysely as usual.
 */
export async function insertRows<T extends keyof Database & string>(
  db: Executor,
  table: T,
  rows: ReadonlyArray<Insertable<Database[T]>>,
): Promise<void> {
  const query = insertRowsQuery(db, table, rows);
  if (query !== null) await execute(db, query.sql, query.parameters as unknown[]);
}

/** `insertRows` bound but not run (null for no rows), for `executeCompiled` on `db` or a transaction of it. */
export function insertRowsQuery<T extends keyof Database & string>(
  db: Executor,
  table: T,
  rows: ReadonlyArray<Insertable<Database[T]>>,
): CompiledQuery | null {
  const first = rows[0] as Record<string, unknown> | undefined;
  if (first === undefined) return null;
  const columns = definedColumns(first);
  const sameShape = rows.every((row) => {
    const r = row as Record<string, unknown>;
    return definedColumns(r).length === columns.length && columns.every((c) => r[c] !== undefined);
  });
  if (!sameShape) return (db as Kysely<Database>).insertInto(table).values(rows as never).compile();
  const dialect = dialectOf(db);
  const key = `${dialect}\u0000${table}\u0000${rows.length}\u0000${columns.join(',')}`;
  let plan = insertPlans.get(key);
  if (plan === undefined) {
    const markers = rows.map((_, r) => Object.fromEntries(columns.map((c) => [c, `${MARK}${r}:${c}`])));
    const query = (db as Kysely<Database>).insertInto(table).values(markers as never).compile();
    const slots = query.parameters.map((p) => {
      if (typeof p !== 'string' || !p.startsWith(MARK)) return { value: p };
      const [row, column] = p.slice(MARK.length).split(/:(.*)/s) as [string, string];
      return { row: Number(row), column };
    });
    plan = { sql: query.sql, slots };
    if (insertPlans.size >= INSERT_PLANS_MAX) insertPlans.delete(insertPlans.keys().next().value as string);
    insertPlans.set(key, plan);
  }
  const parameters = plan.slots.map((s) => ('value' in s ? s.value : (rows[s.row] as Record<string, unknown>)[s.column]));
  return CompiledQuery.raw(plan.sql, parameters);
}
