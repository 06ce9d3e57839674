/**
 * The unfiltered list's `total` comes from the per-team document counter kept in the creating
 * transaction: it stays exact (spec 2.6) after single creates, concurrent creates,
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

describe('date-range totals from the per-month counters', () => {
  /** The exact count, straight from the rows. */
  async function inRange(from: string | null, to: string | null): Promise<number> {
    let q = t.db.db.selectFrom('invoices').select((eb) => eb.fn.countAll<number | string>().as('n')).where('team_id', '=', 'acme');
    if (from !== null) q = q.where('date', '>=', from);
    if (to !== null) q = q.where('date', '<=', to);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  const RANGES: Array<[string | null, string | null]> = [
    ['2025-12-01', '2026-03-31'], // whole months only
    ['2026-01-31', '2026-03-01'], // partial first and last month
    ['2026-02-01', '2026-02-28'], // one whole month
    ['2026-02-10', '2026-02-20'], // inside one month
    ['2024-02-29', '2024-02-29'], // a leap day
    ['2026-01-15', null],
    [null, '2026-02-14'],
    [null, '2026-02-28'],
    ['2026-03-01', null],
  ];

  async function expectExact(): Promise<void> {
    for (const [from, to] of RANGES) {
      const query = `${from ? `&date_from=${from}` : ''}${to ? `&date_to=${to}` : ''}`;
      expect([from, to, await listTotal(ACME, query)]).toEqual([from, to, await inRange(from, to)]);
    }
  }

  it('stay exact across creates, a date moved to another month, and month edges', async () => {
    const dates = ['2024-02-29', '2025-12-31', '2026-01-01', '2026-01-31', '2026-02-01', '2026-02-14', '2026-02-28', '2026-03-01', '2026-03-31'];
    const ids: string[] = [];
    for (const date of dates) ids.push((await createOk(t, simpleDoc(`M-${date}`, { date }))).public_id);
    await expectExact();
    // Moved across months, and within one.
    expect((await put(t, ids[1] as string, { invoice: simpleDoc('M-moved', { date: '2026-02-15' }) })).statusCode).toBe(200);
    expect((await put(t, ids[5] as string, { invoice: simpleDoc('M-same', { date: '2026-02-02' }) })).statusCode).toBe(200);
    await expectExact();
    const counters = await t.db.db
      .selectFrom('team_month_counts')
      .select(['month', (eb) => eb.fn.sum<number | string>('documents').as('n')])
      .where('team_id', '=', 'acme')
      .groupBy('month')
      .execute();
    for (const c of counters) expect([c.month, Number(c.n)]).toEqual([c.month, await inRange(`${c.month}-01`, `${c.month}-31`)]);
  });

  it('changed_since counts its matches, not the whole team', async () => {
    const future = '2099-01-01T00:00:00Z';
    expect(await listTotal(ACME, `&changed_since=${future}`)).toBe(0);
  });
});
