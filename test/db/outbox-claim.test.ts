/**
 * The outbox claim chosen with the database (`stores.outbox`, src/db/outbox-claim.ts): claimers
 * running at the same moment take disjoint rows, each row once until its lease lapses, only due
 * rows of the kind asked for, oldest due first, and a lapsed lease makes the row claimable again
 * with its attempt counted. On PostgreSQL the rows are read `FOR UPDATE SKIP LOCKED`; on SQLite
 * the write lock orders the claims. Same answers on both.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertOutboxRows } from '../../src/db/outbox.js';
import type { OutboxTable } from '../../src/db/types.js';
import { createStores, type Stores } from '../../src/stores.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createOk, simpleDoc } from '../modules/invoices/write-helpers.js';

let t: TestApp;
let stores: Stores;
/** The document every row is about (an outbox row belongs to a stored document). */
let publicId: string;

beforeAll(async () => {
  t = await buildTestApp();
  stores = createStores(t.db);
  publicId = String((await createOk(t, simpleDoc('CLAIM-1'))).public_id);
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.db.db.deleteFrom('outbox').where('team_id', '=', 'acme').where('public_id', '=', publicId).execute();
});

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();

function row(n: number, overrides: Partial<OutboxTable> = {}): OutboxTable {
  return {
    team_id: 'acme',
    id: `row-${String(n).padStart(3, '0')}`,
    kind: 'email',
    public_id: publicId,
    revision: 1,
    position: n,
    recipient: `r${n}@buyer.example`,
    idem_key: `${publicId}:1:r${n}@buyer.example`,
    message_id: `<m${n}@invoices.example>`,
    payload: '{}',
    state: 'pending',
    attempts: 0,
    max_attempts: 5,
    // Row n is due n seconds after T0: the claim takes the oldest due first.
    next_attempt_at: at(n),
    locked_by: null,
    locked_until: null,
    last_error: null,
    last_error_code: null,
    sent_at: null,
    created_at: at(0),
    updated_at: at(0),
    traceparent: null,
    ...overrides,
  };
}

const claim = (owner: string, limit: number, now: Date, kind: OutboxTable['kind'] = 'email') =>
  stores.outbox.claimDue(t.db.db, { kind, owner, limit, now, leaseMs: 60_000 });

describe('the outbox claim', () => {
  it('claims only due rows of the kind asked for, oldest due first, leased to the claimer', async () => {
    await insertOutboxRows(t.db.db, [row(3), row(1), row(2), row(50), row(4, { kind: 'edo_send' }), row(5, { state: 'sent' })]);
    const now = new Date(at(10));
    const got = await claim('worker-a', 2, now);
    expect(got.map((r) => r.id)).toEqual(expect.arrayContaining(['row-001', 'row-002']));
    expect(got).toHaveLength(2);
    for (const r of got) expect(r).toMatchObject({ state: 'sending', locked_by: 'worker-a', attempts: 1, locked_until: new Date(now.getTime() + 60_000).toISOString() });
    // The rest that is due: row 3 only (row 50 is not due yet, row 4 is another kind, row 5 is done).
    expect((await claim('worker-b', 10, now)).map((r) => r.id)).toEqual(['row-003']);
    expect(await claim('worker-c', 10, now)).toEqual([]);
    expect((await claim('worker-c', 10, now, 'edo_send')).map((r) => r.id)).toEqual(['row-004']);
  });

  it('hands each row to one of several claimers running at once', async () => {
    await insertOutboxRows(t.db.db, Array.from({ length: 40 }, (_, i) => row(i + 1)));
    const now = new Date(at(100));
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(`worker-${i}`, 7, now)));
    const ids = claims.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Whatever a claimer found taken (SKIP LOCKED, or the write lock's order), later claims pick up.
    const rest = await claim('sweeper', 40, now);
    expect(new Set([...ids, ...rest.map((r) => r.id)]).size).toBe(40);
    expect(ids.length + rest.length).toBe(40);
  });

  it('makes a row claimable again once its lease lapses, counting the attempt', async () => {
    await insertOutboxRows(t.db.db, [row(1)]);
    const [first] = await claim('worker-a', 1, new Date(at(10)));
    expect(first).toMatchObject({ id: 'row-001', attempts: 1 });
    // Still leased a second before the lease ends; free at its end.
    expect(await claim('worker-b', 1, new Date(at(69)))).toEqual([]);
    const [again] = await claim('worker-b', 1, new Date(at(70)));
    expect(again).toMatchObject({ id: 'row-001', locked_by: 'worker-b', attempts: 2 });
  });

  it('claims nothing for a limit of zero', async () => {
    await insertOutboxRows(t.db.db, [row(1)]);
    expect(await claim('worker-a', 0, new Date(at(10)))).toEqual([]);
  });
});
