/**
 * PostgreSQL: a create the server aborts as a deadlock (40P01) or serialization failure (40001)
 * stored nothing and is run again (src/db/pg-retry.ts), on its own statement (a plain create) and
 * as a whole transaction (a create with an Idempotency-Key). A trigger raises the error while a
 * sequence (not rolled back with the transaction) is below a bound.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgConflictStats, PG_CONFLICT_ATTEMPTS } from '../../src/db/pg-retry.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/db.js';
import { countRows, post, simpleDoc } from '../modules/invoices/write-helpers.js';

describe.runIf(usingPostgres())('a create aborted as a deadlock or serialization failure is run again (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
    await sql`CREATE SEQUENCE conflict_budget MINVALUE -100`.execute(t.db.db);
    await sql`
      CREATE FUNCTION simulated_conflict() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('conflict_budget') <= 0 THEN
          IF NEW.number LIKE 'ser-%' THEN RAISE EXCEPTION 'simulated' USING ERRCODE = 'serialization_failure'; END IF;
          RAISE EXCEPTION 'simulated' USING ERRCODE = 'deadlock_detected';
        END IF;
        RETURN NEW;
      END $$`.execute(t.db.db);
    await sql`CREATE TRIGGER simulated_conflict BEFORE INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION simulated_conflict()`.execute(t.db.db);
  });
  afterAll(async () => t.close());

  /** The next `failures` inserts of an invoice fail. */
  const failNext = (failures: number) => sql`select setval('conflict_budget', ${1 - failures}, false)`.execute(t.db.db);

  it.each([
    ['a plain create (one statement on its own), deadlock', 'dl-1', {}],
    ['a plain create, serialization failure', 'ser-1', {}],
    ['a create with an Idempotency-Key (a transaction)', 'dl-2', { 'idempotency-key': 'conflict-retry-1' }],
  ])('%s: answered 200, stored once', async (_name, number, headers) => {
    const before = await countRows(t, 'invoices');
    const retried = pgConflictStats.retried;
    await failNext(PG_CONFLICT_ATTEMPTS - 1);
    const res = await post(t, { invoice: simpleDoc(number) }, headers);
    expect(res.statusCode).toBe(200);
    expect(pgConflictStats.retried - retried).toBe(PG_CONFLICT_ATTEMPTS - 1);
    expect(await countRows(t, 'invoices')).toBe(before + 1);
    const stored = await t.db.db.selectFrom('invoices').select('number').where('public_id', '=', res.json().public_id).execute();
    expect(stored).toEqual([{ number }]);
    if ('idempotency-key' in headers) {
      const replay = await post(t, { invoice: simpleDoc(number) }, headers);
      expect(replay.json().public_id).toBe(res.json().public_id);
      expect(await countRows(t, 'invoices')).toBe(before + 1);
    }
  });

  it('gives up after PG_CONFLICT_ATTEMPTS runs, storing nothing', async () => {
    const before = await countRows(t, 'invoices');
    await failNext(PG_CONFLICT_ATTEMPTS);
    const res = await post(t, { invoice: simpleDoc('dl-3') });
    expect(res.statusCode).toBe(500);
    expect(await countRows(t, 'invoices')).toBe(before);
    await failNext(0);
  });
});
