/**
 * Named prepared statements on PostgreSQL for the hot queries.
 *
 * node-postgres sends every query as an unnamed statement: Parse, Bind, Execute, so the server
 * parses and plans it anew each time (0.3–0.5 ms of planning for 0.1 ms of execution on the
 * list page). With a name (`{ name, text, values }`) the client parses a statement once per
 * connection and afterwards only binds it; the server keeps the parsed statement and, after
 * a few executions, a generic plan.
 *
 * Which texts get a name: the ones `preparedQuery` (prepared-query.ts) compiled, registered
 * here with `nameStatement(sql)`. Their number is bounded by the code (one per call site), and
 * a cap keeps it so. The name is derived from the text, so every connection and every node
 * uses the same name for the same text.
 *
 * Only outside a transaction. A migration that changes a table under a running node (a
 * rolling restart) makes a statement prepared before it fail once with SQLSTATE 0A000, "cached
 * plan must not change result type" (e.g. `select *` after a column was added). Outside a
 * transaction the statement is then deallocated on that connection and the query run again
 * unnamed, so the request does not fail, and the next use prepares the new shape. Inside a
 * transaction that error would abort the transaction, so there statements stay unnamed.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** More than the service's compiled-once queries; beyond it texts just stay unnamed. */
export const MAX_NAMED_STATEMENTS = 256;

const names = new Map<string, string>();

/** Asks for `sql` to run as a named prepared statement on PostgreSQL (outside transactions). */
export function nameStatement(sql: string): void {
  if (names.has(sql) || names.size >= MAX_NAMED_STATEMENTS) return;
  names.set(sql, `q_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`);
}

export interface NamedStatementStats {
  /** Queries run through a named statement. */
  named: number;
  /** Named statements that failed with 0A000 and were run again unnamed. */
  replanned: number;
}

export const namedStatementStats: NamedStatementStats = { named: 0, replanned: 0 };

type QueryResult = pg.QueryResult<Record<string, unknown>>;
type Query = (text: unknown, values?: unknown) => Promise<QueryResult>;

interface ParsedStatements {
  parsedStatements?: Record<string, string>;
  submittedNamedStatements?: Record<string, string>;
}

function isStaleCachedPlan(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '0A000';
}

/**
 * Makes `client.query(text, values)` use the statement's name when `text` was registered and
 * the connection is not inside a transaction. Installed once per connection (the pool's
 * `connect` event); every other call (cursors, query objects) passes through unchanged.
 */
export function useNamedStatements(client: pg.PoolClient): void {
  const plain = client.query.bind(client) as Query;
  const connection = (client as unknown as { connection?: ParsedStatements }).connection;
  const named = async (text: unknown, values?: unknown): Promise<QueryResult> => {
    const name = typeof text === 'string' && Array.isArray(values) ? names.get(text) : undefined;
    if (name === undefined || client.getTransactionStatus?.() !== 'I') return plain(text, values);
    namedStatementStats.named++;
    try {
      return await plain({ name, text, values });
    } catch (err) {
      if (!isStaleCachedPlan(err)) throw err;
      // The table changed under the prepared statement: forget it here and on the server.
      namedStatementStats.replanned++;
      if (connection?.parsedStatements) delete connection.parsedStatements[name];
      if (connection?.submittedNamedStatements) delete connection.submittedNamedStatements[name];
      await plain(`DEALLOCATE ${name}`).catch(() => undefined);
      return plain(text, values);
    }
  };
  (client as unknown as { query: Query }).query = named;
}
