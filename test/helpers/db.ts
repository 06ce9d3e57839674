/**
 * A freshly migrated database per test file: a new SQLite file in a temp directory, or,
 * when DATABASE_URL names PostgreSQL (as CI's second pass does), a new database on that server.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { DatabaseTarget } from '../../src/config/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';

export interface TestDatabase extends DatabaseHandle {
  target: DatabaseTarget;
  /** The DATABASE_URL form of the target, for child processes. */
  url: string;
  drop(): Promise<void>;
}

export function usingPostgres(): boolean {
  const url = process.env.DATABASE_URL ?? '';
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

/** Creates an empty database (not migrated) and returns its target. */
export async function createEmptyDatabase(): Promise<{ target: DatabaseTarget; url: string; drop: () => Promise<void> }> {
  const suffix = crypto.randomBytes(6).toString('hex');
  if (usingPostgres()) {
    const admin = new URL(process.env.DATABASE_URL as string);
    const name = `inv_test_${suffix}`;
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    const url = new URL(admin.toString());
    url.pathname = `/${name}`;
    return {
      target: { kind: 'postgres', url: url.toString() },
      url: url.toString(),
      drop: async () => {
        const c = new pg.Client({ connectionString: admin.toString() });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-test-'));
  const file = path.join(dir, 'test.sqlite');
  return {
    target: { kind: 'sqlite', file },
    url: `sqlite:${file}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** A new, migrated database; call `drop()` in afterAll. */
export async function createTestDb(): Promise<TestDatabase> {
  const empty = await createEmptyDatabase();
  const handle = openDatabase(empty.target);
  await migrateToLatest(handle.db);
  return {
    ...handle,
    target: empty.target,
    url: empty.url,
    drop: async () => {
      await handle.close();
      await empty.drop();
    },
  };
}
