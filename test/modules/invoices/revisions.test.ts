/**
 * Revisions are paginated summaries (operating contract, section 5) and a
 * retention rule (INVOICING_REVISIONS_KEEP) bounds what each document keeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { countRows, createOk, put, simpleDoc } from './write-helpers.js';

const ACME = { 'x-api-key': 'ak_acme_erp_0001' };

describe('GET …/revisions: pages and retention', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_REVISIONS_KEEP: '5' } });
  });
  afterAll(async () => t.close());

  it('lists newest first in pages of `limit` with `total`, never the documents; keeps only the newest 5', async () => {
    const created = await createOk(t, { invoice: simpleDoc('keep-0') });
    const id = created.public_id as string;
    for (let i = 1; i <= 8; i++) expect((await put(t, id, { invoice: simpleDoc(`keep-${i}`) })).statusCode).toBe(200);
    // Revisions 1..8 were replaced; the newest five previous ones (4..8) are kept.
    expect(await countRows(t, 'invoice_revisions', id)).toBe(5);

    const page = async (query: string) => t.call({ method: 'GET', url: `/api/v1/invoices/${id}/revisions${query}`, headers: ACME });
    const first = (await page('?limit=2')).json();
    expect(first).toMatchObject({ current_revision: 9, total: 5, limit: 2, offset: 0 });
    expect(first.revisions.map((r: { revision: number }) => r.revision)).toEqual([8, 7]);
    const last = (await page('?limit=2&offset=4')).json();
    expect(last.revisions.map((r: { revision: number }) => r.revision)).toEqual([4]);
    expect(JSON.stringify(first)).not.toContain('keep-');

    const gone = await t.call({ method: 'GET', url: `/api/v1/invoices/${id}/revisions/3`, headers: ACME });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error).toBe('revision_not_found');
    const kept = await t.call({ method: 'GET', url: `/api/v1/invoices/${id}/revisions/4`, headers: ACME });
    expect(kept.json().invoice.number).toBe('keep-3');
  });

  it('refuses a limit out of 1–100 and a revision that is not a positive integer', async () => {
    const created = await createOk(t, { invoice: simpleDoc('bounds') });
    for (const q of ['?limit=0', '?limit=101', '?offset=-1']) {
      const res = await t.call({ method: 'GET', url: `/api/v1/invoices/${created.public_id}/revisions${q}`, headers: ACME });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().ok).toBe(false);
    }
    for (const n of ['0', '-1', 'abc', '99999999999']) {
      const res = await t.call({ method: 'GET', url: `/api/v1/invoices/${created.public_id}/revisions/${n}`, headers: ACME });
      expect(res.statusCode, n).toBe(400);
    }
  });
});
