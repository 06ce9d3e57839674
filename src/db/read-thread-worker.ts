/**
 * One reading thread of `read-threads.ts`: its own read-only connection to the SQLite file, its
 * prepared statements kept by SQL text. It runs one statement at a time and answers the rows.
 */
import { workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

const connection = new SqliteDatabase((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
connection.pragma('busy_timeout = 5000');

/** The service's heavy reads are a few dozen texts; kept with room, oldest out first. */
const STATEMENTS_MAX = 256;
const statements = new Map<string, SqliteDatabase.Statement>();

function statementOf(sql: string): SqliteDatabase.Statement {
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = connection.prepare(sql);
    if (!statement.reader || !statement.readonly) throw new Error('a reading thread runs only statements that read');
    statements.set(sql, statement);
    if (statements.size > STATEMENTS_MAX) statements.delete(statements.keys().next().value as string);
  }
  return statement;
}

export default function run(task: { sql: string; parameters: unknown[] }): unknown[] {
  return statementOf(task.sql).all(task.parameters);
}
