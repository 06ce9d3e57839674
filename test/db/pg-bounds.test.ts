/**
 * The PostgreSQL bounds of src/db/pg-pool.ts on a real server, in process: the settings reach
 * the server's sessions, a statement past its limit and a transaction left idle are ended by
 * the server, a connection that gets no answer is given up a second after the statement
 * timeout, a refused or silent server fails a checkout within the connect timeout, and every
 * one of these is a failure the API answers 503 (databaseUnavailableReason). PostgreSQL pass only.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PG_BOUNDS, type PgBounds } from '../../src/config/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { DatabaseUnavailableError, databaseUnavailableReason } from '../../src/db/errors.js';
import { STATEMENT_GRACE_MS } from '../../src/db/pg-pool.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../helpers/db.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

/** What `work` rejected with (fails the test if it resolved), and after how long. */
async function failure(work: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  try {
    await work();
  } catch (err) {
    return { err, ms: performance.now() - started };
  }
  throw new Error('expected a failure');
}

describe.skipIf(!usingPostgres())('PostgreSQL bounds', () => {
  let base: TestDatabase;
  const opened: DatabaseHandle[] = [];
  const proxies: TcpProxy[] = [];

  /** A handle on the test database with `bounds`, optionally through `proxy`. */
  function open(bounds: Partial<PgBounds>, proxy?: TcpProxy): DatabaseHandle {
    if (base.target.kind !== 'postgres') throw new Error('PostgreSQL only');
    const url = proxy ? proxy.through(base.target.url) : base.target.url;
    const handle = openDatabase({ kind: 'postgres', url, poolSize: 2, bounds: { ...DEFAULT_PG_BOUNDS, ...bounds } });
    opened.push(handle);
    return handle;
  }

  async function proxy(): Promise<TcpProxy> {
    const server = new URL(base.url);
    const started = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
    proxies.push(started);
    return started;
  }

  beforeAll(async () => {
    base = await createTestDb();
  });
  afterEach(async () => {
    for (const p of proxies.splice(0)) await p.close();
    for (const handle of opened.splice(0)) await handle.close().catch(() => undefined);
  });
  afterAll(async () => base?.drop());

  it('sends the statement and idle-in-transaction timeouts to the server as session settings', async () => {
    const db = open({ statementTimeoutMs: 1_234, idleInTransactionTimeoutMs: 4_321 }).db;
    const { rows } = await sql<{ s: string; i: string }>`select current_setting('statement_timeout') as s, current_setting('idle_in_transaction_session_timeout') as i`.execute(db);
    expect(rows[0]).toEqual({ s: '1234ms', i: '4321ms' });
  });

  it('a statement past INVOICING_PG_STATEMENT_TIMEOUT_MS is cancelled by the server (57014): a 503 reason, nothing stored', async () => {
    const { err, ms } = await failure(() => sql`select pg_sleep(5)`.execute(open({ statementTimeoutMs: 200 }).db));
    expect((err as { code?: string }).code).toBe('57014');
    expect(ms).toBeLessThan(2_000);
    expect(databaseUnavailableReason(err)).toMatch(/time limit; nothing was stored/);
  });

  it('a transaction left idle past INVOICING_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS loses its session: a 503 reason, the process unharmed', async () => {
    const handle = open({ idleInTransactionTimeoutMs: 200 });
    const { err } = await failure(() =>
      handle.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await new Promise((r) => setTimeout(r, 600));
        await sql`select 1`.execute(trx);
      }),
    );
    expect(databaseUnavailableReason(err)).not.toBeNull();
    // The pool replaced the lost connection.
    expect((await sql<{ one: number }>`select 1 as one`.execute(handle.db)).rows).toEqual([{ one: 1 }]);
  });

  it('a statement with no answer at all is given up STATEMENT_GRACE_MS after the statement timeout, and its connection closed', async () => {
    const through = await proxy();
    // A long connect timeout: the probe of a silent server (after half of it) does not come first.
    const handle = open({ statementTimeoutMs: 300, connectTimeoutMs: 60_000 }, through);
    await sql`select 1`.execute(handle.db);
    through.stall();
    const { err, ms } = await failure(() => sql`select 1`.execute(handle.db));
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(ms).toBeGreaterThanOrEqual(300 + STATEMENT_GRACE_MS - 50);
    expect(ms).toBeLessThan(300 + STATEMENT_GRACE_MS + 1_000);
    await through.pass();
    expect((await sql<{ one: number }>`select 1 as one`.execute(handle.db)).rows).toEqual([{ one: 1 }]);
  });

  it('a server that accepts and never answers, or refuses, fails a checkout within INVOICING_PG_CONNECT_TIMEOUT_MS', async () => {
    const through = await proxy();
    through.stall();
    const silent = await failure(() => sql`select 1`.execute(open({ connectTimeoutMs: 400 }, through).db));
    expect(silent.err).toBeInstanceOf(DatabaseUnavailableError);
    expect(silent.ms).toBeLessThan(400 + 500);
    await through.refuse();
    const refused = await failure(() => sql`select 1`.execute(open({ connectTimeoutMs: 400 }, through).db));
    expect(refused.err).toBeInstanceOf(DatabaseUnavailableError);
    expect(databaseUnavailableReason(refused.err)).toMatch(/did not answer in time/);
  });
});
