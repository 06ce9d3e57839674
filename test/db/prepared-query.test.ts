import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows, preparedQuery, preparedStatement } from '../../src/db/prepared-query.js';
import { createTestDb, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDb();
  const now = new Date().toISOString();
  for (const id of ['t1', 't2', 't3']) {
    await db.db.insertInto('teams').values({ id, name: `Team ${id}`, tariff_id: null, locale: id === 't3' ? 'en' : 'ru', created_at: now, updated_at: now }).execute();
  }
});
afterAll(async () => {
  await db?.close();
  await db?.drop();
});

describe('preparedQuery', () => {
  it('compiles once and binds new values on every call, keeping constants', async () => {
    const q = preparedQuery<'id', { id: string; name: string }>((k, p) =>
      k.selectFrom('teams').select(['id', 'name']).where('id', '=', p('id')).where('locale', '=', 'ru'),
    );
    expect(await q(db.db, { id: 't1' })).toEqual([{ id: 't1', name: 'Team t1' }]);
    expect(await q(db.db, { id: 't2' })).toEqual([{ id: 't2', name: 'Team t2' }]);
    expect(await q(db.db, { id: 't3' })).toEqual([]); // locale 'en': the constant still applies
    expect(await q(db.db, { id: 'none' })).toEqual([]);
    // Inside a transaction too.
    expect(await db.db.transaction().execute((trx) => q(trx, { id: 't2' }))).toEqual([{ id: 't2', name: 'Team t2' }]);
  });

  it('binds the same name used twice', async () => {
    const q = preparedQuery<'id', { id: string }>((k, p) =>
      k.selectFrom('teams').select('id').where((eb) => eb.or([eb('id', '=', p('id')), eb('name', '=', p('id'))])),
    );
    expect(await q(db.db, { id: 't3' })).toEqual([{ id: 't3' }]);
  });
});

describe('preparedStatement', () => {
  it('reports the rows a write changed', async () => {
    const rename = preparedStatement<'id' | 'name', never>((k, p) => k.updateTable('teams').set({ name: p('name') }).where('id', '=', p('id')));
    expect(Number((await rename(db.db, { id: 't1', name: 'Renamed' })).numAffectedRows)).toBe(1);
    expect(Number((await rename(db.db, { id: 'none', name: 'x' })).numAffectedRows)).toBe(0);
    expect((await db.db.selectFrom('teams').select('name').where('id', '=', 't1').executeTakeFirstOrThrow()).name).toBe('Renamed');
  });
});

describe('insertRows', () => {
  const team = (id: string, locale = 'ru') => ({ id, name: `Team ${id}`, tariff_id: null, locale, created_at: 'c', updated_at: 'u' });
  const stored = (ids: string[]) =>
    db.db.selectFrom('teams').selectAll().where('id', 'in', ids).orderBy('id').execute();

  it('inserts one row and several, binding each call’s values into the same shape', async () => {
    await insertRows(db.db, 'teams', [team('r1')]);
    await insertRows(db.db, 'teams', [team('r2', 'en')]);
    await insertRows(db.db, 'teams', [team('r3'), team('r4', 'en'), team('r5')]);
    await insertRows(db.db, 'teams', [team('r6'), team('r7'), team('r8', 'en')]);
    const rows = await stored(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8']);
    expect(rows.map((r) => [r.id, r.locale, r.name])).toEqual([
      ['r1', 'ru', 'Team r1'],
      ['r2', 'en', 'Team r2'],
      ['r3', 'ru', 'Team r3'],
      ['r4', 'en', 'Team r4'],
      ['r5', 'ru', 'Team r5'],
      ['r6', 'ru', 'Team r6'],
      ['r7', 'ru', 'Team r7'],
      ['r8', 'en', 'Team r8'],
    ]);
  });

  it('writes nothing for no rows, and rows that set different columns as Kysely would', async () => {
    await insertRows(db.db, 'teams', []);
    // The second row leaves tariff_id out (undefined): Kysely writes its default (NULL).
    await insertRows(db.db, 'teams', [team('m1'), { ...team('m2'), tariff_id: undefined }]);
    expect((await stored(['m1', 'm2'])).map((r) => [r.id, r.tariff_id])).toEqual([
      ['m1', null],
      ['m2', null],
    ]);
  });

  it('inserts inside a transaction and rolls back with it', async () => {
    await expect(
      db.db.transaction().execute(async (trx) => {
        await insertRows(trx, 'teams', [team('x1')]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await stored(['x1'])).toEqual([]);
    // A duplicate key fails the statement as a Kysely insert would.
    await expect(insertRows(db.db, 'teams', [team('r1')])).rejects.toThrow();
  });
});
