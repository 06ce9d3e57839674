/**
 * Group commit (src/db/group-commit.ts) on a real database: writes arriving together share
 * one transaction on SQLite, each in its own savepoint; a failing write is rolled back alone
 * and its neighbours are stored; nobody is told "stored" before the commit.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/db/group-commit.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDb();
});

afterAll(async () => {
  await db?.drop();
});

const now = '2026-11-26T00:00:00.000Z';

function team(id: string) {
  return { id, name: `Team ${id}`, tariff_id: null, locale: 'ru', created_at: now, updated_at: now };
}

async function teamIds(prefix: string): Promise<string[]> {
  const rows = await db.db.selectFrom('teams').select('id').where('id', 'like', `${prefix}%`).orderBy('id').execute();
  return rows.map((r) => r.id);
}

describe('GroupCommit', () => {
  it('stores every write of a burst, rolls back only the one that fails, and shares transactions on SQLite', async () => {
    const group = new GroupCommit(db.db);
    await db.db.insertInto('teams').values(team('gc-taken')).execute();
    const writes = Array.from({ length: 40 }, (_, i) =>
      group.run(async (trx) => {
        // Two statements per write: the failing one's first statement must not survive either.
        await trx.insertInto('teams').values(team(`gc-${String(i).padStart(2, '0')}`)).execute();
        if (i === 17) await trx.insertInto('teams').values(team('gc-taken')).execute();
        return i;
      }),
    );
    const results = await Promise.allSettled(writes);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[17]?.status).toBe('rejected');
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual(
      Array.from({ length: 40 }, (_, i) => i).filter((i) => i !== 17),
    );
    const stored = await teamIds('gc-');
    expect(stored).toHaveLength(40); // 39 writes + gc-taken
    expect(stored).not.toContain('gc-17');
    if (!usingPostgres()) {
      // 40 writes queued in one tick: far fewer transactions than writes.
      expect(group.stats.writes).toBe(39);
      expect(group.stats.batches).toBeLessThan(5);
      expect(group.stats.largest).toBeGreaterThan(8);
    }
  });

  it('resolves a write only once its batch is committed (visible to a new reader)', async () => {
    const group = new GroupCommit(db.db);
    const seen: boolean[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        group.run(async (trx) => {
          await trx.insertInto('teams').values(team(`gv-${i}`)).execute();
        }).then(async () => {
          const row = await db.db.selectFrom('teams').select('id').where('id', '=', `gv-${i}`).executeTakeFirst();
          seen.push(row !== undefined);
        }),
      ),
    );
    expect(seen).toEqual(Array(10).fill(true));
  });

  it('a write that throws without touching the database leaves the batch intact', async () => {
    const group = new GroupCommit(db.db);
    const a = group.run(async (trx) => trx.insertInto('teams').values(team('gt-a')).execute());
    const b = group.run(async () => {
      throw new Error('refused');
    });
    const c = group.run(async (trx) => trx.insertInto('teams').values(team('gt-c')).execute());
    await expect(b).rejects.toThrow('refused');
    await a;
    await c;
    expect(await teamIds('gt-')).toEqual(['gt-a', 'gt-c']);
  });

  it.skipIf(usingPostgres())('when the COMMIT fails, no write of the batch is stored and every one is told so', async () => {
    const group = new GroupCommit(db.db);
    const good = [0, 1, 2].map((i) => group.run(async (trx) => trx.insertInto('teams').values(team(`gf-${i}`)).execute()));
    // A foreign key checked only at COMMIT (SQLite's defer_foreign_keys): the statement passes,
    // the batch's COMMIT fails.
    const poisoned = group.run(async (trx) => {
      await sql`pragma defer_foreign_keys = on`.execute(trx);
      await trx
        .insertInto('api_keys')
        .values({ id: 990077, team_id: 'no-such-team', kind: 'live', name: 'x', secret_hash: 'f'.repeat(64), active: 1, created_at: now, updated_at: now } as never)
        .execute();
    });
    const results = await Promise.allSettled([...good, poisoned]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/i);
    expect(await teamIds('gf-')).toEqual([]);
    // The queue goes on with the next batch.
    await group.run(async (trx) => trx.insertInto('teams').values(team('gf-after')).execute());
    expect(await teamIds('gf-')).toEqual(['gf-after']);
  });
});
