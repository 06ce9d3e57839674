/**
 * Kysely factory for the two supported databases. What must differ between SQLite and
 * PostgreSQL lives here and nowhere else.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../config/config.js';
import type { Database } from './types.js';

export type Db = Kysely<Database>;
export type Executor = Kysely<Database> | Transaction<Database>;

export interface DatabaseHandle {
  db: Db;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

// PostgreSQL BIGINT (int8) arrives as a string by default; our integer columns fit in a double.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

export function openDatabase(target: DatabaseTarget): DatabaseHandle {
  if (target.kind === 'sqlite') {
    if (target.file !== ':memory:') fs.mkdirSync(path.dirname(target.file), { recursive: true });
    const sqlite = new SqliteDatabase(target.file);
    // WAL with synchronous=FULL: an acknowledged commit survives power loss.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const pool = new pg.Pool({ connectionString: target.url, max: 10 });
  // An idle client's error (e.g. the server restarting) must not crash the process.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}
