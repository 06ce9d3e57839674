/**
 * A write that does not get SQLite's write lock within the busy timeout (another process holds
 * it: `invoicing worker`, a CLI command, a second service on the file) wrote nothing and is
 * answered 503 `not_ready` with Retry-After, in the error shape: never a 500. SQLite only.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseBusy } from '../../src/db/errors.js';
import { WriteLockTimeoutError } from '../../src/cluster/write-lock.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/db.js';
import { ACME_KEY } from '../helpers/fixtures.js';
import { simpleDoc } from '../modules/invoices/write-helpers.js';

describe.skipIf(usingPostgres())('a write while another process holds the SQLite write lock', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('is answered 503 not_ready with Retry-After, writes nothing, and goes through once the lock is free', async () => {
    const target = t.db.target;
    if (target.kind !== 'sqlite') throw new Error('SQLite only');
    const other = new Database(target.file);
    const create = () =>
      t.call({ method: 'POST', url: '/api/v1/invoices', headers: { 'x-api-key': ACME_KEY, 'content-type': 'application/json' }, payload: simpleDoc('BUSY-1') });
    try {
      other.exec('BEGIN IMMEDIATE');
      const refused = await create();
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      const body = refused.json();
      expect(body).toMatchObject({ ok: false, error: 'not_ready', retry_after_sec: 1 });
      expect(body.details).toMatch(/busy.*nothing was written/);
      other.exec('ROLLBACK');
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    const list = await t.call({ method: 'GET', url: '/api/v1/invoices?q=BUSY-1', headers: { 'x-api-key': ACME_KEY } });
    expect(list.json().total).toBe(0);
    const accepted = await create();
    expect(accepted.statusCode).toBe(200);
  }, 60_000);

  it('counts the cluster write lock timing out as busy, and nothing else', () => {
    expect(isDatabaseBusy(new WriteLockTimeoutError())).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY_SNAPSHOT' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('locked'), { code: 'SQLITE_LOCKED' }))).toBe(false);
    expect(isDatabaseBusy(Object.assign(new Error('unique'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBe(false);
    expect(isDatabaseBusy(null)).toBe(false);
  });
});
