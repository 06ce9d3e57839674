/**
 * The unfiltered list's `total` comes from the per-team document counter kept in the creating
 * transaction (issue 12): it stays exact (spec 2.6) after single creates, concurrent creates,
 * an idempotent replay, refused creates and updates, and per team.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { ACME, BETA_ORG_INN, createOk, post, put, simpleDoc } from './write-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});

afterAll(async () => {
  await t?.close();
});

async function listTotal(headers: Record<string, string> = ACME, query = ''): Promise<number> {
  const res = await t.call({ method: 'GET', url: `/api/v1/invoices?limit=1${query}`, headers });
  expect(res.statusCode).toBe(200);
  return res.json().total;
}

async function rows(teamId: string): Promise<number> {
  const r = await t.db.db.selectFrom('invoices').select((eb) => eb.fn.countAll<number | string>().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('the unfiltered total from the document counter', () => {
  it('counts creates one by one', async () => {
    expect(await listTotal()).toBe(0);
    for (let i = 1; i <= 3; i++) {
      await createOk(t, simpleDoc(`T-${i}`));
      expect(await listTotal()).toBe(i);
    }
    expect(await listTotal()).toBe(await rows('acme'));
  });

  it('stays exact under concurrent creates', async () => {
    const before = await listTotal();
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => post(t, simpleDoc(`C-${i}`))));
    expect(results.map((r) => r.statusCode)).toEqual(Array(25).fill(200));
    expect(await listTotal()).toBe(before + 25);
    expect(await listTotal()).toBe(await rows('acme'));
  });

  it('counts an idempotent replay once, concurrent or not', async () => {
    const before = await listTotal();
    const key = { 'idempotency-key': 'total-replay-1' };
    const all = await Promise.all([1, 2, 3].map(() => post(t, simpleDoc('I-1'), key)));
    const again = await post(t, simpleDoc('I-1'), key);
    const ok = [...all, again].filter((r) => r.statusCode === 200);
    expect(ok.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ok.map((r) => r.json().public_id)).size).toBe(1);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await listTotal()).toBe(before + 1);
    expect(await listTotal()).toBe(await rows('acme'));
  });

  it('does not count refused creates, and updates change nothing', async () => {
    const before = await listTotal();
    const created = await createOk(t, simpleDoc('R-1', { public_id: 'total-fixed-id-1' }));
    expect((await post(t, simpleDoc('R-2', { public_id: 'total-fixed-id-1' }))).statusCode).toBe(409);
    expect((await post(t, { number: 'bad' })).statusCode).toBe(400);
    expect((await put(t, created.public_id, { invoice: simpleDoc('R-1b') })).statusCode).toBe(200);
    expect(await listTotal()).toBe(before + 1);
    expect(await listTotal()).toBe(await rows('acme'));
  });

  it('is per team, and filtered totals still count the matches', async () => {
    const beta = { 'x-api-key': BETA_KEY };
    expect(await listTotal(beta)).toBe(0);
    const res = await post(t, simpleDoc('B-1', { seller: { inn: BETA_ORG_INN } }), beta);
    expect(res.statusCode).toBe(200);
    expect(await listTotal(beta)).toBe(1);
    expect(await listTotal()).toBe(await rows('acme'));
    expect(await listTotal(ACME, '&q=r-1')).toBe(1);
    expect(await listTotal(ACME, '&date_from=2026-03-02&date_to=2026-03-02')).toBe(await rows('acme'));
  });
});
