/**
 * A database that cannot serve a request now is answered 503 `service_unavailable` with
 * Retry-After, never a 500 (src/db/errors.ts `databaseUnavailableReason`, the error handler):
 * which failures count, which keep their own mapping, and SQLite's full disk end to end. The
 * PostgreSQL faults themselves: test/db/postgres-faults.test.ts and pg-bounds.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, isPgConnectionFailure } from '../../src/db/errors.js';
import { DATABASE_RETRY_AFTER_SEC, toApiError } from '../../src/http/error-handler.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/db.js';
import { ACME_KEY } from '../helpers/fixtures.js';
import { simpleDoc } from '../modules/invoices/write-helpers.js';

/** An error as node-postgres reports the server's: an SQLSTATE and a severity. */
function serverError(code: string): Error {
  return Object.assign(new Error(`server error ${code}`), { code, severity: 'ERROR' });
}

describe('which failures are answered 503 service_unavailable', () => {
  it('a connection that failed or timed out, a statement past its limit, a server shutting down or out of resources, a full disk', () => {
    const failures = [
      new DatabaseUnavailableError('no connection'),
      ...['57014', '57P01', '57P02', '57P03', '08006', '08001', '25P03', '53100', '53200', '53300'].map(serverError),
      Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
    ];
    for (const failure of failures) {
      const mapped = toApiError(failure);
      expect(mapped?.status).toBe(503);
      expect(mapped?.body).toMatchObject({ ok: false, error: 'service_unavailable', retry_after_sec: DATABASE_RETRY_AFTER_SEC });
      expect(mapped?.headers).toEqual({ 'retry-after': String(DATABASE_RETRY_AFTER_SEC) });
      expect(mapped?.body.details).toMatch(/retry after Retry-After$/);
      // Nothing of the database's internals reaches the client.
      expect(mapped?.body.details).not.toMatch(/postgres|sqlite|pg_|\b\d{2}[0-9A-Z]{3}\b/i);
    }
    expect(toApiError(new DatabaseUnavailableError('x'))?.body.details).toMatch(/may have been stored.*Idempotency-Key/);
    expect(toApiError(serverError('53100'))?.body.details).toMatch(/no disk space left; nothing was stored/);
  });

  it('leaves every other failure its own mapping: a unique violation, a conflict, SQLite busy, a fault of the program', () => {
    // Unique violations and conflicts are handled by the services (409, a retry); unhandled they stay 500.
    expect(toApiError(serverError('23505'))).toBeNull();
    expect(toApiError(serverError('40P01'))).toBeNull();
    expect(toApiError(serverError('42601'))).toBeNull();
    expect(toApiError(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }))?.body.error).toBe('not_ready');
    expect(toApiError(new TypeError('x is undefined'))).toBeNull();
    // A refused connection of anything but the database (it is wrapped where the pool connects).
    expect(toApiError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:25'), { code: 'ECONNREFUSED' }))).toBeNull();
  });

  it('tells node-postgres connection failures from the server refusing a statement', () => {
    expect(isPgConnectionFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isPgConnectionFailure(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isPgConnectionFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isPgConnectionFailure(serverError('57P01'))).toBe(false);
    expect(isPgConnectionFailure(new Error('Cannot read properties of undefined'))).toBe(false);
  });
});

describe.skipIf(usingPostgres())('SQLite with no disk space left', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const create = (number: string) =>
    t.call({ method: 'POST', url: '/api/v1/invoices', headers: { 'x-api-key': ACME_KEY, 'content-type': 'application/json' }, payload: simpleDoc(number) });

  it('a write is answered 503 service_unavailable with Retry-After and stores nothing; writes go through again once there is room', async () => {
    // The writing connection may not grow the file past its size now: SQLite answers SQLITE_FULL.
    const writer = t.db.statements;
    if (!writer) throw new Error('SQLite only');
    const pages = writer.prepare('pragma page_count').pluck().get() as number;
    writer.prepare(`pragma max_page_count = ${pages}`).get();
    let refused: { number: string; status: number; body: Record<string, unknown>; retryAfter: unknown } | null = null;
    try {
      for (let i = 0; i < 200 && refused === null; i++) {
        const res = await create(`FULL-${i}`);
        if (res.statusCode !== 200) refused = { number: `FULL-${i}`, status: res.statusCode, body: res.json(), retryAfter: res.headers['retry-after'] };
      }
    } finally {
      writer.prepare('pragma max_page_count = 1073741823').get();
    }
    expect(refused).not.toBeNull();
    expect(refused!.status).toBe(503);
    expect(refused!.body).toMatchObject({ ok: false, error: 'service_unavailable', retry_after_sec: DATABASE_RETRY_AFTER_SEC });
    expect(refused!.body.details).toMatch(/no disk space left; nothing was stored/);
    expect(refused!.retryAfter).toBe(String(DATABASE_RETRY_AFTER_SEC));
    const list = await t.call({ method: 'GET', url: `/api/v1/invoices?q=${refused!.number}`, headers: { 'x-api-key': ACME_KEY } });
    expect(list.json().total).toBe(0);
    expect((await create(refused!.number)).statusCode).toBe(200);
  });
});
