/**
 * SQLite writes from several handles (processes) on one file (src/db/database.ts's driver,
 * src/db/write-lock.ts): transactions begin IMMEDIATE, so a transaction that read first is never
 * refused its write because another process committed in between; with a shared WriteLock, a
 * handle waits for its turn asynchronously, its event loop free, and the turns are first come,
 * first served.
 */
import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { FifoWriteLock } from '../../src/db/write-lock.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../helpers/db.js';
import { REPO_ROOT } from '../helpers/process.js';

const now = '2026-11-27T00:00:00.000Z';
const team = (id: string) => ({ id, name: `Team ${id}`, tariff_id: null, locale: 'ru', created_at: now, updated_at: now });

describe.skipIf(usingPostgres())('SQLite writes from several handles on one file', () => {
  let db: TestDatabase;
  const others: DatabaseHandle[] = [];

  beforeAll(async () => {
    db = await createTestDb();
  });
  afterAll(async () => {
    for (const handle of others) await handle.close();
    await db?.drop();
  });

  function anotherHandle(writeLock?: FifoWriteLock): DatabaseHandle {
    if (db.target.kind !== 'sqlite') throw new Error('SQLite only');
    const handle = openDatabase(db.target, writeLock ? { writeLock } : {});
    others.push(handle);
    return handle;
  }

  it('a transaction that read, then wrote after another process committed, still commits (BEGIN IMMEDIATE)', async () => {
    if (db.target.kind !== 'sqlite') return;
    const handle = anotherHandle();
    let childCommitted = false;
    let child: ReturnType<typeof spawn> | null = null;
    const childDone = new Promise<number | null>((resolve) => {
      const childCode = `
        const Database = require('better-sqlite3');
        const db = new Database(${JSON.stringify(db.target.kind === 'sqlite' ? db.target.file : '')});
        db.pragma('busy_timeout = 10000');
        process.stdout.write('trying\\n');
        db.prepare("insert into teams (id, name, tariff_id, locale, created_at, updated_at) values ('snap-child', 'c', null, 'ru', '${now}', '${now}')").run();
        process.stdout.write('committed\\n');
        db.close();`;
      child = spawn(process.execPath, ['-e', childCode], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        if (chunk.includes('committed')) childCommitted = true;
      });
      child.on('close', (code) => resolve(code));
    });
    const inTransaction = await handle.db.transaction().execute(async (trx) => {
      // The transaction's snapshot starts with this read.
      const before = await trx.selectFrom('teams').select('id').where('id', 'like', 'snap-%').execute();
      // Give the other process the time to commit, as it could under a deferred BEGIN (then this
      // transaction's write below fails at once with SQLITE_BUSY_SNAPSHOT); under IMMEDIATE it
      // waits for this transaction instead.
      for (let i = 0; i < 40 && !childCommitted; i++) await new Promise((r) => setTimeout(r, 25));
      await trx.insertInto('teams').values(team('snap-parent')).execute();
      return { before: before.length, childCommittedMeanwhile: childCommitted };
    });
    expect(inTransaction).toEqual({ before: 0, childCommittedMeanwhile: false });
    expect(await childDone).toBe(0);
    const ids = (await db.db.selectFrom('teams').select('id').where('id', 'like', 'snap-%').orderBy('id').execute()).map((r) => r.id);
    expect(ids).toEqual(['snap-child', 'snap-parent']);
    expect(child).not.toBeNull();
  });

  it('with a shared WriteLock, a second handle waits for the first one’s transaction without blocking the event loop, and turns go first come, first served', async () => {
    const lock = new FifoWriteLock();
    const a = anotherHandle(lock);
    const b = anotherHandle(lock);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = a.db.transaction().execute(async (trx) => {
      await trx.insertInto('teams').values(team('turn-a')).execute();
      order.push('a wrote');
      await held;
      order.push('a commits');
    });
    // Let A take the lock and begin.
    while (!order.includes('a wrote')) await new Promise((r) => setImmediate(r));
    // B: an autocommit write (it waits for A's turn to end) and a transaction (it waits behind
    // B's own writer first: a process never queues for the file's turn twice).
    const autocommit = b.db.insertInto('teams').values(team('turn-b1')).execute().then(() => order.push('b autocommit'));
    const transaction = b.db.transaction().execute(async (trx) => {
      await trx.insertInto('teams').values(team('turn-b2')).execute();
      order.push('b transaction');
    });
    // Reads go on meanwhile, on either handle (what is committed), and the event loop keeps turning.
    let ticks = 0;
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 5));
      ticks++;
    }
    expect((await b.db.selectFrom('teams').select('id').where('id', '=', 'turn-a').execute()).length).toBe(0);
    expect(ticks).toBe(20);
    expect(lock.queued).toBe(1);
    expect(order).toEqual(['a wrote']);
    release();
    await Promise.all([first, autocommit, transaction]);
    expect(order).toEqual(['a wrote', 'a commits', 'b autocommit', 'b transaction']);
    expect(lock.queued).toBe(0);
    const ids = (await db.db.selectFrom('teams').select('id').where('id', 'like', 'turn-%').orderBy('id').execute()).map((r) => r.id);
    expect(ids).toEqual(['turn-a', 'turn-b1', 'turn-b2']);
  });

  it('releases the lock after a failed transaction and after a failed autocommit write', async () => {
    const lock = new FifoWriteLock();
    const a = anotherHandle(lock);
    await a.db.insertInto('teams').values(team('fail-1')).execute();
    await expect(
      a.db.transaction().execute(async (trx) => {
        await trx.insertInto('teams').values(team('fail-2')).execute();
        await trx.insertInto('teams').values(team('fail-1')).execute();
      }),
    ).rejects.toThrow(/UNIQUE/);
    await expect(a.db.insertInto('teams').values(team('fail-1')).execute()).rejects.toThrow(/UNIQUE/);
    // A read takes no turn; the next write gets one at once.
    await sql`select 1`.execute(a.db);
    await a.db.insertInto('teams').values(team('fail-3')).execute();
    expect(lock.queued).toBe(0);
    const ids = (await db.db.selectFrom('teams').select('id').where('id', 'like', 'fail-%').orderBy('id').execute()).map((r) => r.id);
    expect(ids).toEqual(['fail-1', 'fail-3']);
  });
});

describe.skipIf(usingPostgres())('SQLite: the reading connection', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDb();
  });
  afterAll(async () => db?.drop());

  it('serves reads while a transaction writes, showing only what is committed; a write it cannot prepare goes to the writer', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let wrote = false;
    const writing = db.db.transaction().execute(async (trx) => {
      await trx.insertInto('teams').values(team('reader-1')).execute();
      wrote = true;
      await held;
    });
    while (!wrote) await new Promise((r) => setImmediate(r));
    // Not waiting for the transaction (it has not committed, so the row is not there yet).
    expect(await db.db.selectFrom('teams').select('id').where('id', '=', 'reader-1').execute()).toEqual([]);
    release();
    await writing;
    expect(await db.db.selectFrom('teams').select('id').where('id', '=', 'reader-1').execute()).toEqual([{ id: 'reader-1' }]);
    // A temporary table exists on the writing connection only: the reader cannot prepare a
    // statement on it, so the statement runs (and reads) on the writer.
    await sql`create temp table scratch (n integer)`.execute(db.db);
    await sql`insert into scratch (n) values (7)`.execute(db.db);
    const rows = await sql<{ n: number }>`select n from scratch`.execute(db.db);
    expect(rows.rows).toEqual([{ n: 7 }]);
  });
});
