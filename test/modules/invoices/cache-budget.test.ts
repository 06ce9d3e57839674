/**
 * The read caches hold at most their byte budget (INVOICING_READ_CACHE_MB, of which the GET
 * detail cache gets half) and never a response above INVOICING_CACHE_ENTRY_MAX_KB: a team that
 * creates large documents and reads each once cannot grow a node's memory past the budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createOk, get, simpleDoc } from './write-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: { INVOICING_READ_CACHE_MB: '1', INVOICING_CACHE_ENTRY_MAX_KB: '64' } });
});

afterAll(async () => {
  await t?.close();
});

/** A document of about `kb` kilobytes: one item whose name is long text. */
function sizedDoc(number: string, kb: number): Record<string, unknown> {
  const items = Array.from({ length: Math.ceil(kb / 2) }, (_, i) => ({ name: `Позиция ${i} `.padEnd(500, 'ж'), qty: 1, price: 1, vat_pct: 22 }));
  return { ...simpleDoc(number), items };
}

describe('the read caches are bounded by bytes', () => {
  it('does not keep a response above the entry threshold, and serves it the same each time', async () => {
    const big = await createOk(t, sizedDoc('BIG-1', 200));
    const first = await get(t, big.public_id);
    const second = await get(t, big.public_id);
    expect(first.statusCode).toBe(200);
    expect(second.json().invoice).toEqual(first.json().invoice);
    const stats = t.app.invoices.detailCacheStats();
    expect(stats.size).toBe(0);
    expect(stats.bytes).toBe(0);
  });

  it('keeps documents under the threshold within the detail share of the budget, least recently used out first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await createOk(t, sizedDoc(`MID-${i}`, 20))).public_id);
    for (const id of ids) expect((await get(t, id)).statusCode).toBe(200);
    const stats = t.app.invoices.detailCacheStats();
    expect(stats.size).toBeGreaterThan(0);
    expect(stats.size).toBeLessThan(ids.length);
    expect(stats.bytes).toBeLessThanOrEqual(512 * 1024);
    // The most recent document is kept: read again, it is a hit.
    const before = t.app.invoices.detailCacheStats().hits;
    await get(t, ids[ids.length - 1] as string);
    expect(t.app.invoices.detailCacheStats().hits).toBe(before + 1);
  });

  it('keeps list pages and items within their shares too', async () => {
    for (let offset = 0; offset < 40; offset += 5) {
      const res = await t.call({ method: 'GET', url: `/api/v1/invoices?limit=5&offset=${offset}`, headers: { 'x-api-key': 'ak_acme_erp_0001' } });
      expect(res.statusCode).toBe(200);
    }
    const stats = t.app.invoices.detailCacheStats();
    expect(stats.listPageBytes).toBeLessThanOrEqual((1024 * 1024 * 3) / 16);
    expect(stats.listItemBytes).toBeLessThanOrEqual((1024 * 1024 * 4) / 16);
  });
});
