/**
 * Statements sent to the database while `work` runs: on PostgreSQL its round trips (node-postgres
 * ends each extended-protocol statement with one Sync and sends a simple query as one Query
 * message; a named statement already parsed sends no text, so its entry is the text of the last
 * Parse on that connection or `(prepared)`), on SQLite the calls of better-sqlite3's statement
 * methods with their SQL. For tests that pin how many statements a request costs; run nothing
 * else meanwhile.
 */
import Sqlite from 'better-sqlite3';
import pg from 'pg';

type Method = (...args: unknown[]) => unknown;

export async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const texts: string[] = [];
  const restore: Array<() => void> = [];
  const wrap = (proto: Record<string, unknown>, name: string, textOf: (self: unknown, args: unknown[]) => string) => {
    const original = proto[name] as Method;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      texts.push(textOf(this, args));
      return original.apply(this, args);
    };
    restore.push(() => {
      proto[name] = original;
    });
  };
  // The connection's messages, not Client.query: the pool's clients hold a bound query (pg-statements.ts).
  const connection = pg.Connection.prototype as unknown as Record<string, unknown>;
  const lastParse = new WeakMap<object, string>();
  const parse = connection.parse as Method;
  connection.parse = function (this: object, ...args: unknown[]) {
    lastParse.set(this, String((args[0] as { text?: string }).text));
    return parse.apply(this, args);
  };
  restore.push(() => {
    connection.parse = parse;
  });
  wrap(connection, 'sync', (self) => {
    const text = lastParse.get(self as object) ?? '(prepared)';
    lastParse.delete(self as object);
    return text;
  });
  wrap(connection, 'query', (_, args) => String(args[0]));
  const probe = new Sqlite(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
  probe.close();
  for (const m of ['all', 'get', 'run', 'iterate']) wrap(statementProto, m, (self) => String((self as { source: string }).source));
  try {
    await work();
  } finally {
    for (const r of restore) r();
  }
  return texts;
}
