/**
 * The list over a volume large enough for every query plan of the invoices store's list
 * (store/portable-list.ts, store/sqlite-search.ts: few, many and capped trigram candidates;
 * collected or walked pages): each answer is checked against a brute-force filter of the
 * stored rows.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTemplate, seedDocuments } from '../../../bench/seed.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { ACME, createOk, put, simpleDoc } from './write-helpers.js';

const COUNT = 12_000;

interface Row {
  public_id: string;
  date: string;
  created_at: string;
  last_modified_at: string;
  search_text: string;
}

describe('GET /api/v1/invoices over 12 000 documents', () => {
  let t: TestApp;
  let rows: Row[];

  async function loadRows(): Promise<void> {
    rows = await t.db.db
      .selectFrom('invoices')
      .select(['public_id', 'date', 'created_at', 'last_modified_at', 'search_text'])
      .where('team_id', '=', 'acme')
      .execute();
  }

  /** What the list must answer, computed without SQL. */
  function expected(filter: { q?: string; from?: string; to?: string; since?: string }): string[] {
    const q = filter.q?.trim().toLowerCase();
    return rows
      .filter((r) => (q === undefined || r.search_text.includes(q)) && (!filter.from || r.date >= filter.from) && (!filter.to || r.date <= filter.to))
      .filter((r) => !filter.since || r.last_modified_at >= filter.since)
      .sort((a, b) =>
        a.date !== b.date ? (a.date < b.date ? 1 : -1) : a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.public_id < b.public_id ? 1 : -1,
      )
      .map((r) => r.public_id);
  }

  async function page(query: string, offset: number, limit = 50): Promise<{ total: number; ids: string[] }> {
    const res = await t.call({ method: 'GET', url: `/api/v1/invoices?${query}&limit=${limit}&offset=${offset}`, headers: ACME });
    if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body}`);
    const body = res.json();
    return { total: body.total, ids: body.items.map((i: { public_id: string }) => i.public_id) };
  }

  async function expectSameAsBruteForce(query: string, filter: Parameters<typeof expected>[0], minMatches = 1): Promise<void> {
    const all = expected(filter);
    expect(all.length).toBeGreaterThanOrEqual(minMatches);
    for (const offset of [0, 137, Math.max(0, all.length - 20)]) {
      const got = await page(query, offset);
      expect(got.total).toBe(all.length);
      expect(got.ids).toEqual(all.slice(offset, offset + 50));
    }
  }

  beforeAll(async () => {
    t = await buildTestApp();
    const template = await createOk(t, simpleDoc('TEMPLATE'));
    await seedDocuments(t.db.db, { teamId: 'acme', template: await readTemplate(t.db.db, 'acme', template.public_id), count: COUNT });
    await loadRows();
  }, 120_000);
  afterAll(async () => t.close());

  it('the first pages without filters', async () => {
    await expectSameAsBruteForce('x=1', {}, COUNT);
  });

  it.each([
    ['ten matches (every candidate named by the trigram table)', 'сч-000300'],
    ['one buyer form, ~2 400 matches (candidates counted, collected, page walked)', 'ип «'],
    ['three buyer forms, ~7 200 matches (walked)', 'ао «'],
    ['every document (walked)', 'ромашка'],
    ['two characters (LIKE alone)', 'ип'],
    ['nothing', 'нет такого'],
  ])('q: %s', async (_name, q) => {
    await expectSameAsBruteForce(`q=${encodeURIComponent(q)}`, { q }, q === 'нет такого' ? 0 : 1);
  });

  it.skipIf(usingPostgres())('SQLite: a walked search tests search_text on the list index entry (the index carries it)', async () => {
    const columns = await sql<{ name: string }>`select name from pragma_index_info('invoices_team_list_idx') order by seqno`.execute(t.db.db);
    expect(columns.rows.map((c) => c.name)).toEqual(['team_id', 'date', 'created_at', 'public_id', 'search_text']);
    // The page of a q matching many (~7 200) walks that index in list order.
    const plan = await sql<{ detail: string }>`explain query plan
      select public_id, number, total from invoices where team_id = 'acme' and search_text like '%ао «%' escape '\'
      order by date desc, created_at desc, public_id desc limit 50`.execute(t.db.db);
    expect(plan.rows.map((r) => r.detail).join(' | ')).toBe('SEARCH invoices USING INDEX invoices_team_list_idx (team_id=?)');
    await expectSameAsBruteForce(`q=${encodeURIComponent('ао «')}`, { q: 'ао «' }, 5000);
  });

  it('q with a date range: candidates many, matches in range few (collected page)', async () => {
    // Two of the four seeded years: ~6 000 rows in range, ~1 200 of them "ИП".
    const from = '2023-01-01';
    const to = '2024-12-31';
    await expectSameAsBruteForce(`q=${encodeURIComponent('ип «')}&date_from=${from}&date_to=${to}`, { q: 'ип «', from, to });
    await expectSameAsBruteForce(`q=${encodeURIComponent('ао «')}&date_from=${from}&date_to=${to}`, { q: 'ао «', from, to });
  });

  it('a date range alone', async () => {
    await expectSameAsBruteForce('date_from=2025-02-01&date_to=2025-05-31', { from: '2025-02-01', to: '2025-05-31' });
  });

  it('updated_since: one old document edited (collected), and every document (walked)', async () => {
    const oldest = expected({}).at(-1)!;
    const since = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await put(t, oldest, { invoice: simpleDoc('EDITED', { date: '2023-01-01' }) });
    expect(res.statusCode).toBe(200);
    await loadRows();
    await expectSameAsBruteForce(`updated_since=${encodeURIComponent(since)}`, { since });
    // Seeded documents run to the end of 2026, so a few "future" ones match too; the edited one,
    // the oldest of all, comes last.
    const all = expected({ since });
    expect(all.at(-1)).toBe(oldest);
    expect(all.length).toBeLessThan(1000);
    await expectSameAsBruteForce('updated_since=2000-01-01T00:00:00Z', { since: '2000-01-01T00:00:00.000Z' }, COUNT);
    await expectSameAsBruteForce(`updated_since=${encodeURIComponent(since)}&q=edited`, { since, q: 'edited' });
  });
});
