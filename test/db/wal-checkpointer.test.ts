import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { DEFAULT_BACKSTOP_PAGES } from '../../src/db/wal-checkpointer.js';

/** SQLite only: the WAL and its checkpoints are SQLite's (src/db/wal-checkpointer.ts). */
describe('WAL checkpoints on a thread of their own (SQLite)', () => {
  const dirs: string[] = [];
  const handles: DatabaseHandle[] = [];
  afterEach(async () => {
    for (const h of handles.splice(0)) await h.close().catch(() => undefined);
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  function open(backgroundCheckpoints: boolean) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-ckpt-'));
    dirs.push(dir);
    const file = path.join(dir, 'db.sqlite');
    const handle = openDatabase({ kind: 'sqlite', file }, { backgroundCheckpoints });
    handles.push(handle);
    return { handle, file };
  }

  async function writeRows(handle: DatabaseHandle, commits: number) {
    await sql`create table if not exists t (id integer primary key, body text not null)`.execute(handle.db);
    const body = 'x'.repeat(3000);
    for (let c = 0; c < commits; c++) {
      await handle.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 20; i++) await sql`insert into t (body) values (${body})`.execute(trx);
      });
    }
  }

  const until = async (check: () => Promise<boolean>, ms = 5000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  };

  it('copies committed pages into the database file from the thread, leaving the connection only a backstop', async () => {
    const { handle, file } = open(true);
    expect(handle.checkpointer).toBeTruthy();
    const autocheckpoint = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(handle.db);
    expect(autocheckpoint.rows[0]?.wal_autocheckpoint).toBe(DEFAULT_BACKSTOP_PAGES);
    await writeRows(handle, 30);
    // Every frame of the WAL gets copied by the thread (nothing left for a checkpoint to do).
    expect(await until(async () => ((await handle.checkpointer!.stats()).frames > 0))).toBe(true);
    const stats = await handle.checkpointer!.stats();
    expect(stats.failures).toBe(0);
    // Well under the backstop: the thread kept the WAL from growing to it.
    expect(fs.statSync(`${file}-wal`).size).toBeLessThan(DEFAULT_BACKSTOP_PAGES * 4096);
    // A second process-like connection opened read-only sees every committed row in the main file
    // once the WAL is gone (close: thread first, then the node's connection, which removes the WAL).
    await handle.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const again = openDatabase({ kind: 'sqlite', file });
    handles.push(again);
    const n = await sql<{ n: number }>`select count(*) as n from t`.execute(again.db);
    expect(n.rows[0]?.n).toBe(600);
  });

  it('is off unless asked for: the connection checkpoints on its own, as SQLite does by default', async () => {
    const { handle } = open(false);
    expect(handle.checkpointer ?? null).toBeNull();
    const autocheckpoint = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(handle.db);
    expect(autocheckpoint.rows[0]?.wal_autocheckpoint).toBe(1000);
  });

  it('stops cleanly when closed twice and after its thread is gone', async () => {
    const { handle } = open(true);
    await writeRows(handle, 2);
    await handle.checkpointer!.stop();
    await handle.checkpointer!.stop();
    await expect(handle.checkpointer!.stats()).rejects.toThrow();
    await handle.close();
  });
});
