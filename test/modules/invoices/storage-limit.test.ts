/**
 * Tariff `max_storage_mb`: the stored size of a team's documents and kept revisions. The
 * counter (`team_document_counts.stored_bytes`, kept by triggers) follows creates, updates and
 * pruned revisions exactly; a create or PUT that would pass the limit is 403
 * storage_over_tariff_limit and saves nothing; other teams are not affected.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { bootstrapFixture, BETA_KEY } from '../../helpers/fixtures.js';
import { countRows, createOk, post, put, simpleDoc } from './write-helpers.js';

let t: TestApp;

beforeAll(async () => {
  const bootstrap = bootstrapFixture();
  (bootstrap.tariffs.basic as Record<string, unknown>).max_storage_mb = 1;
  // Three revisions kept per document: pruning is counted too.
  t = await buildTestApp({ bootstrap, env: { INVOICING_REVISIONS_KEEP: '3' } });
});

afterAll(async () => {
  await t?.close();
});

/** A document of about `kb` kilobytes of stored JSON (an item holds ~2 KB: 1,000 Cyrillic characters). */
function sizedDoc(number: string, kb: number): Record<string, unknown> {
  const items = Array.from({ length: Math.ceil(kb / 2) }, (_, i) => ({ name: `Позиция ${i} `.padEnd(1000, 'ж'), qty: 1, price: 1, vat_pct: 22 }));
  return { ...simpleDoc(number), items };
}

/** What the triggers counted, and what the tables actually hold, for a team. */
async function storage(team: string): Promise<{ counted: number; actual: number }> {
  const counted = await t.db.db
    .selectFrom('team_document_counts')
    .select((eb) => eb.fn.sum<number | string | null>('stored_bytes').as('n'))
    .where('team_id', '=', team)
    .executeTakeFirst();
  const actual = await sql<{ n: number | string | null }>`
    select sum(n) as n from (
      select octet_length(document) as n from invoices where team_id = ${team}
      union all select octet_length(document) as n from invoice_revisions where team_id = ${team}) s`.execute(t.db.db);
  return { counted: Number(counted?.n ?? 0), actual: Number(actual.rows[0]?.n ?? 0) };
}

describe('storage per team (tariff max_storage_mb)', () => {
  let id = '';

  it('counts every stored document and kept revision, through creates, updates and pruning', async () => {
    id = (await createOk(t, sizedDoc('S-1', 100))).public_id;
    for (let i = 2; i <= 6; i++) {
      const res = await put(t, id, { invoice: sizedDoc(`S-${i}`, 20 * i) });
      expect(res.statusCode).toBe(200);
    }
    expect(await countRows(t, 'invoice_revisions', id)).toBe(3);
    const { counted, actual } = await storage('acme');
    expect(actual).toBeGreaterThan(100_000);
    expect(counted).toBe(actual);
  });

  it('refuses a create past the limit with 403 storage_over_tariff_limit and saves nothing', async () => {
    const before = await countRows(t, 'invoices');
    let refused: Record<string, any> | null = null;
    for (let i = 0; i < 10 && refused === null; i++) {
      const res = await post(t, sizedDoc(`FILL-${i}`, 150));
      if (res.statusCode === 403) refused = res.json();
      else expect(res.statusCode).toBe(200);
    }
    expect(refused).toMatchObject({ ok: false, error: 'storage_over_tariff_limit' });
    expect(String(refused?.details)).toContain('1 MB');
    const { counted, actual } = await storage('acme');
    expect(counted).toBe(actual);
    expect(actual).toBeLessThanOrEqual(1024 * 1024);
    expect(await countRows(t, 'invoices')).toBeLessThan(before + 10);
  });

  it('refuses a PUT past the limit and keeps the document as it was', async () => {
    const res = await put(t, id, { invoice: sizedDoc('S-HUGE', 900) });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'storage_over_tariff_limit' });
    const current = await t.call({ method: 'GET', url: `/api/v1/invoices/${id}`, headers: { 'x-api-key': 'ak_acme_erp_0001' } });
    expect(current.json().invoice.number).toBe('S-6');
  });

  it('still takes a small document, and another team is not affected', async () => {
    const small = await post(t, simpleDoc('SMALL'));
    // The team may be just under the limit (then a small document fits) or just over it.
    expect([200, 403]).toContain(small.statusCode);
    const beta = await t.call({
      method: 'POST',
      url: '/api/v1/invoices',
      headers: { 'x-api-key': BETA_KEY },
      payload: { ...simpleDoc('B-1'), seller: { inn: '500100732259' } },
    });
    expect(beta.statusCode).toBe(200);
  });
});
