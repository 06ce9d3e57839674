import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQuery } from '../../src/db/prepared-query.js';
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
