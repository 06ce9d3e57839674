/**
 * PostgreSQL: the pool size of INVOICING_PG_POOL_SIZE, the hot queries as named prepared
 * statements (src/db/pg-statements.ts), and a migration changing a table under a running node
 * (SQLSTATE 0A000, "cached plan must not change result type"): the request still succeeds.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { namedStatementStats } from '../../src/db/pg-statements.js';
import { preparedQuery } from '../../src/db/prepared-query.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../helpers/db.js';

describe.runIf(usingPostgres())('PostgreSQL connections and named statements', () => {
  let db: TestDatabase;
  /** One connection only, so the prepared statements seen are this handle's. */
  let single: DatabaseHandle;
  let admin: pg.Client;
  const url = () => (db.target.kind === 'postgres' ? db.target.url : '');

  beforeAll(async () => {
    db = await createTestDb();
    single = openDatabase({ kind: 'postgres', url: url(), poolSize: 1 });
    admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    await admin.query('CREATE TABLE rolling_probe (id integer PRIMARY KEY, a text NOT NULL)');
    await admin.query("INSERT INTO rolling_probe VALUES (1, 'one'), (2, 'two')");
  });
  afterAll(async () => {
    await admin?.end();
    await single?.close();
    await db?.close();
    await db?.drop();
  });

  // `select *` of a table the Database type does not know: the shape a migration can change.
  const byId = preparedQuery<'id', Record<string, unknown>>((k, p) => k.selectFrom('rolling_probe' as never).selectAll().where('id' as never, '=', p('id')));

  const preparedOnConnection = async (h: DatabaseHandle) =>
    (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(h.db)).rows;

  it('runs a compiled-once query as a named statement, parsed once per connection', async () => {
    const before = namedStatementStats.named;
    expect(await byId(single.db, { id: 1 })).toEqual([{ id: 1, a: 'one' }]);
    expect(await byId(single.db, { id: 2 })).toEqual([{ id: 2, a: 'two' }]);
    expect(namedStatementStats.named - before).toBe(2);
    const statements = await preparedOnConnection(single);
    expect(statements.filter((s) => s.statement.includes('rolling_probe'))).toHaveLength(1);
  });

  it('keeps statements unnamed inside a transaction (an error there would abort it)', async () => {
    const before = namedStatementStats.named;
    const rows = await single.db.transaction().execute((trx) => byId(trx, { id: 2 }));
    expect(rows).toEqual([{ id: 2, a: 'two' }]);
    expect(namedStatementStats.named).toBe(before);
  });

  it('survives a column added under a prepared `select *` (rolling restart with a migration)', async () => {
    expect(await byId(single.db, { id: 1 })).toEqual([{ id: 1, a: 'one' }]);
    const [prepared] = (await preparedOnConnection(single)).filter((s) => s.statement.includes('rolling_probe'));
    expect(prepared).toBeDefined();

    await admin.query("ALTER TABLE rolling_probe ADD COLUMN b text NOT NULL DEFAULT 'new'");

    // The statement as prepared fails now: this is what a node that merely named it would answer.
    const raw = new pg.Client({ connectionString: url() });
    await raw.connect();
    try {
      const text = prepared!.statement;
      await raw.query({ name: 'stale_probe', text, values: [1] });
      await admin.query('ALTER TABLE rolling_probe ADD COLUMN c integer');
      await expect(raw.query({ name: 'stale_probe', text, values: [1] })).rejects.toMatchObject({ code: '0A000' });
    } finally {
      await raw.end();
    }

    const replanned = namedStatementStats.replanned;
    expect(await byId(single.db, { id: 1 })).toEqual([{ id: 1, a: 'one', b: 'new', c: null }]);
    expect(namedStatementStats.replanned).toBe(replanned + 1);
    // The name was dropped and prepared again with the new shape: later calls just work.
    expect(await byId(single.db, { id: 2 })).toEqual([{ id: 2, a: 'two', b: 'new', c: null }]);
    expect(namedStatementStats.replanned).toBe(replanned + 1);
    expect((await preparedOnConnection(single)).filter((s) => s.statement.includes('rolling_probe'))).toHaveLength(1);
  });

  it('runs everything unnamed with INVOICING_PG_NAMED_STATEMENTS=false (e.g. behind an older transaction pooler)', async () => {
    const plain = openDatabase({ kind: 'postgres', url: url(), poolSize: 1, namedStatements: false });
    try {
      const before = namedStatementStats.named;
      expect(await byId(plain.db, { id: 1 })).toMatchObject({ 0: { id: 1, a: 'one' } });
      expect(await byId(plain.db, { id: 1 })).toMatchObject({ 0: { id: 1, a: 'one' } });
      expect(namedStatementStats.named).toBe(before);
      expect(await preparedOnConnection(plain)).toEqual([]);
    } finally {
      await plain.close();
    }
  });

  it('never opens more connections than INVOICING_PG_POOL_SIZE', async () => {
    const two = openDatabase({ kind: 'postgres', url: url(), poolSize: 2 });
    try {
      // Ten queries at once, each holding its connection until the last has started.
      const backends = await Promise.all(
        Array.from({ length: 10 }, () =>
          sql<{ pid: number }>`select pg_backend_pid() as pid from pg_sleep(0.05)`.execute(two.db).then((r) => r.rows[0]!.pid),
        ),
      );
      expect(new Set(backends).size).toBeLessThanOrEqual(2);
      expect(new Set(backends).size).toBeGreaterThanOrEqual(1);
    } finally {
      await two.close();
    }
  });
});
