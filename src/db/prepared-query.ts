/**
 * Queries compiled once (issue 12). Kysely builds an operation tree and compiles it to SQL on
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
 */
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import { dialectOf, type Executor, type SqlDialect } from './database.js';
import { nameStatement } from './pg-statements.js';
import type { Database } from './types.js';

const MARK = '\u0000param:';

export function preparedQuery<P extends string, R>(
  build: (db: Kysely<Database>, param: (name: P) => any) => Compilable<R>,
): (db: Executor, values: Record<P, unknown>) => Promise<R[]> {
  const compiled = new Map<SqlDialect, { sql: string; slots: Array<{ name: P } | { value: unknown }> }>();
  return async (db, values) => {
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
    const parameters = plan.slots.map((s) => ('name' in s ? values[s.name] : s.value));
    const result = await db.executeQuery<R>(CompiledQuery.raw(plan.sql, parameters) as CompiledQuery<R>);
    return result.rows;
  };
}
