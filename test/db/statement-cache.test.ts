import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { SqliteStatementCache } from '../../src/db/statement-cache.js';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

describe('SqliteStatementCache', () => {
  it('hands back the statement prepared before for the same SQL, bounded', () => {
    const sqlite = new SqliteDatabase(':memory:');
    open.push(sqlite);
    const cache = new SqliteStatementCache(sqlite, { max: 2 });
    const a = cache.prepare('SELECT 1 AS one');
    expect(cache.prepare('SELECT 1 AS one')).toBe(a);
    cache.prepare('SELECT 2 AS two');
    cache.prepare('SELECT 3 AS three'); // evicts the least recently used: "SELECT 1"
    expect(cache.stats()).toMatchObject({ size: 2, max: 2, hits: 1, misses: 3 });
    expect(cache.prepare('SELECT 1 AS one')).not.toBe(a);
    expect(cache.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
  });

  it('never hands out a statement that is busy (an open iterator)', () => {
    const sqlite = new SqliteDatabase(':memory:');
    open.push(sqlite);
    const cache = new SqliteStatementCache(sqlite);
    const text = 'SELECT value FROM json_each(?)';
    const it1 = cache.prepare(text).iterate('[1,2,3]') as IterableIterator<{ value: number }>;
    expect(it1.next().value).toEqual({ value: 1 });
    // A second query with the same text while the first is still being read.
    expect(cache.prepare(text).all('[7]')).toEqual([{ value: 7 }]);
    expect([...it1].map((r) => r.value)).toEqual([2, 3]);
    expect(cache.stats().busy).toBe(1);
  });

  it('serves every Kysely write of an SQLite database (the writing connection’s cache)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stmt-cache-'));
    const handle = openDatabase({ kind: 'sqlite', file: path.join(dir, 'x.sqlite') } as never);
    open.push(handle);
    const cache = handle.statements;
    expect(cache).toBeTruthy();
    await sql`CREATE TABLE t (n INTEGER)`.execute(handle.db);
    for (let i = 0; i < 5; i++) await sql`INSERT INTO t (n) VALUES (${i})`.execute(handle.db);
    const stats = cache!.stats();
    expect(stats.misses).toBe(2);
    expect(stats.hits).toBe(4);
    // Reads outside a transaction run on the reading connection, with its own cache.
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(handle.db);
    expect(r.rows[0]?.n).toBe(5);
    expect(cache!.stats()).toMatchObject({ misses: 2, hits: 4 });
  });
});
