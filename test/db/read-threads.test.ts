/**
 * SQLite's reading threads (src/db/read-threads.ts): a statement that walks many rows runs off
 * the event loop, a statement past the time bound is stopped and answers 503 while the threads
 * go on serving, and one team cannot hold more than its share of them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { openReadThreads, type ReadThreads } from '../../src/db/read-threads.js';
import { ApiError } from '../../src/shared/errors.js';
import { usingPostgres } from '../helpers/db.js';

/** A statement that takes about as long as `n` rows walked, reading no table. */
const busy = (n: number) => sql<{ n: number }>`with recursive c(i) as (select 1 union all select i + 1 from c where i < ${n}) select count(*) as n from c`;

describe.skipIf(usingPostgres())('reading threads (SQLite)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let threads: ReadThreads;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-threads-'));
    handle = openDatabase({ kind: 'sqlite', file: path.join(dir, 'db.sqlite') });
    await migrateToLatest(handle.db);
    threads = openReadThreads(path.join(dir, 'db.sqlite'), { threads: 1, maxQueue: 2, timeoutMs: 4_000, perTeam: 2 });
  });

  afterAll(async () => {
    await threads?.close();
    await handle?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs a long statement off the event loop: timers fire while it runs', async () => {
    // Warm the thread (its start is not what is measured).
    await busy(10).execute(threads.db);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      // On the event loop the statement would run synchronously: no tick before it ended.
      const ticksAtEnd = await busy(600_000)
        .execute(threads.db)
        .then(({ rows }) => {
          expect(Number(rows[0]?.n)).toBe(600_000);
          return ticks;
        });
      expect(ticksAtEnd).toBeGreaterThanOrEqual(2);
    } finally {
      clearInterval(timer);
    }
  });

  it('sees what the writing connection committed', async () => {
    await handle.db.insertInto('settings').values({ key: 'read-threads-probe', value: 'x' }).execute();
    const row = await threads.db.selectFrom('settings').select('value').where('key', '=', 'read-threads-probe').executeTakeFirst();
    expect(row?.value).toBe('x');
  });

  it('refuses a write', async () => {
    await expect(threads.db.insertInto('settings').values({ key: 'k', value: 'v' }).execute()).rejects.toThrow(/only statements that read/);
  });

  it('stops a statement past the time bound with 503 service_unavailable, and the next one is served', async () => {
    const err = await busy(1_000_000_000)
      .execute(threads.db)
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).body.error).toBe('service_unavailable');
    const { rows } = await busy(10).execute(threads.db);
    expect(Number(rows[0]?.n)).toBe(10);
  });

  it('gives one team at most its share; beyond it, 503 at once; another team is still served', async () => {
    const slow = () => threads.forTeam('acme', (db) => busy(200_000).execute(db));
    const running = [slow(), slow()];
    const third = await threads.forTeam('acme', (db) => busy(10).execute(db)).then(() => null, (e: unknown) => e);
    expect((third as ApiError).body.error).toBe('service_unavailable');
    const other = await threads.forTeam('beta', (db) => busy(10).execute(db));
    expect(Number(other.rows[0]?.n)).toBe(10);
    await Promise.all(running);
  });
});
