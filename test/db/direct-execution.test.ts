/**
 * Statements run straight on better-sqlite3 inside a group commit's SQLite transaction
 * (src/db/direct-execution.ts): they bypass Kysely's executor (its log never sees them), run in
 * the batch's transaction (a failing write is still rolled back to its savepoint alone, nothing
 * is visible before the COMMIT) and give the results Kysely's driver gives. A connection
 * without the statement cache, and anything outside a group commit, go through Kysely as before.
 */
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { directCacheOf } from '../../src/db/direct-execution.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { insertRows, preparedQuery, preparedStatement } from '../../src/db/prepared-query.js';
import { cachingSqlite, SqliteStatementCache, statementCacheOf, useStatementCache } from '../../src/db/statement-cache.js';
import type { Database } from '../../src/db/types.js';

const open: Array<Kysely<Database>> = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy();
});

/** A Kysely on an in-memory SQLite with a `teams` table, logging every query Kysely executes. */
async function kyselyOn(withCache: boolean): Promise<{ db: Kysely<Database>; logged: string[]; cache: SqliteStatementCache }> {
  const sqlite = new SqliteDatabase(':memory:');
  const cache = new SqliteStatementCache(sqlite);
  const logged: string[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withCache ? cachingSqlite(sqlite, cache) : sqlite }),
    log: (event) => {
      logged.push(event.query.sql);
    },
  });
  open.push(db);
  // As openDatabase does for its writing connection.
  if (withCache) useStatementCache(db, cache);
  await sql`create table teams (id text primary key, name text not null, tariff_id text, locale text not null, created_at text not null, updated_at text not null)`.execute(db);
  // What the batch's search-index flush reads and writes (src/modules/invoices/store/sqlite-search.ts).
  await sql`create table invoices (public_id text primary key, search_text text not null)`.execute(db);
  await sql`create table invoices_fts_pending (public_id text not null primary key) without rowid`.execute(db);
  await sql`create virtual table invoices_fts using fts5(search_text)`.execute(db);
  logged.length = 0;
  return { db, logged, cache };
}

const now = '2026-11-27T00:00:00.000Z';
const team = (id: string) => ({ id, name: `Team ${id}`, tariff_id: null, locale: 'ru', created_at: now, updated_at: now });
const renamed = preparedStatement<'id' | 'name', never>((db, p) => db.updateTable('teams').set({ name: p('name') }).where('id', '=', p('id')));
const byId = preparedQuery<'id', { id: string; name: string }>((db, p) => db.selectFrom('teams').select(['id', 'name']).where('id', '=', p('id')));

describe('direct execution in a group commit (SQLite)', () => {
  it('finds the statement cache of a cachingSqlite connection, and none otherwise', async () => {
    const cached = await kyselyOn(true);
    expect(statementCacheOf(cached.db)).toBe(cached.cache);
    const plain = await kyselyOn(false);
    expect(statementCacheOf(plain.db)).toBeNull();
  });

  it('runs the compiled statements and the savepoints on better-sqlite3, not through Kysely, in the batch transaction', async () => {
    const { db, logged } = await kyselyOn(true);
    const group = new GroupCommit(db);
    const seen: Array<{ id: string; name: string } | undefined> = [];
    const writes = ['a', 'b', 'c'].map((id) =>
      group.run(async (trx) => {
        expect(directCacheOf(trx)).toBeDefined();
        await insertRows(trx, 'teams', [team(id)]);
        const result = await renamed(trx, { id, name: `renamed ${id}` });
        seen.push((await byId(trx, { id }))[0]);
        if (id === 'b') throw new Error('refused after writing');
        return Number(result.numAffectedRows);
      }),
    );
    const results = await Promise.allSettled(writes);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[0] as PromiseFulfilledResult<number>).value).toBe(1);
    // Every write saw its own row inside the transaction; b's was rolled back to its savepoint.
    expect(seen).toEqual(['a', 'b', 'c'].map((id) => ({ id, name: `renamed ${id}` })));
    expect(await db.selectFrom('teams').select(['id', 'name']).orderBy('id').execute()).toEqual([
      { id: 'a', name: 'renamed a' },
      { id: 'c', name: 'renamed c' },
    ]);
    // Kysely ran the transaction's BEGIN and COMMIT only.
    expect(logged.filter((q) => !q.startsWith('select "id", "name" from "teams" order by'))).toEqual(['begin', 'commit']);
    expect(group.stats).toMatchObject({ batches: 1, writes: 2 });
  });

  it('a connection without the cache runs the same writes through Kysely', async () => {
    const { db, logged } = await kyselyOn(false);
    const group = new GroupCommit(db);
    await Promise.all(['a', 'b'].map((id) => group.run(async (trx) => {
      expect(directCacheOf(trx)).toBeUndefined();
      await insertRows(trx, 'teams', [team(id)]);
    })));
    expect((await db.selectFrom('teams').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual(['a', 'b']);
    expect(logged).toContain('savepoint group_write');
    expect(logged.some((q) => q.startsWith('insert into "teams"'))).toBe(true);
  });

  it('outside a group commit, and after its batch, nothing is bound', async () => {
    const { db, logged } = await kyselyOn(true);
    let kept: Kysely<Database> | undefined;
    await new GroupCommit(db).run(async (trx) => {
      kept = trx;
    });
    expect(kept && directCacheOf(kept)).toBeUndefined();
    expect(directCacheOf(db)).toBeUndefined();
    await insertRows(db, 'teams', [team('z')]);
    expect(logged.some((q) => q.startsWith('insert into "teams"'))).toBe(true);
  });
});
