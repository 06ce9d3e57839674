/**
 * The `q` search stays exact whoever writes `search_text`: on SQLite a new row goes into the FTS5 trigram index once per group
 * commit (migration 2026-11-26T1510_search_index_batched), and rows inserted outside it (the
 * bench seeding, SQL by hand) wait in `invoices_fts_pending` until the next flush, found all
 * the same. On PostgreSQL the same searches run against its own index.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { flushSearchIndex, PENDING_ROWIDS, PENDING_TEXTS } from '../../../src/modules/invoices/store/sqlite-search.js';
import { ACME, createOk, put, simpleDoc, storedRow } from './write-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

async function numbersFor(q: string): Promise<string[]> {
  const res = await t.call({ method: 'GET', url: `/api/v1/invoices?q=${encodeURIComponent(q)}&limit=200`, headers: ACME });
  expect(res.statusCode).toBe(200);
  const body = res.json();
  expect(body.total).toBe(body.items.length);
  return body.items.map((i: { number: string }) => i.number).sort();
}

const sqlite = !usingPostgres();

async function pending(): Promise<number> {
  if (!sqlite) return 0;
  const { rows } = await sql<{ n: number }>`select count(*) as n from invoices_fts_pending`.execute(t.db.db);
  return Number(rows[0]?.n);
}

/** FTS5 compares its index with the content table (rank 1: also against `invoices`): throws when they disagree. */
async function indexIntact(): Promise<void> {
  if (sqlite) await sql`insert into invoices_fts(invoices_fts, rank) values ('integrity-check', 1)`.execute(t.db.db);
}

/** A copy of a stored document under a new id and buyer, inserted by hand (no group commit). */
async function insertByHand(fromId: string, publicId: string, number: string, buyer: string): Promise<void> {
  const row = await storedRow(t, fromId);
  if (!row) throw new Error(`no document ${fromId}`);
  const searchText = [number, row.seller_name, row.seller_inn, buyer].join('\u001f').toLowerCase();
  await t.db.db
    .insertInto('invoices')
    .values({ ...row, public_id: publicId, package_public_id: `${publicId}-p`, number, buyer_name: buyer, buyer_inn: null, search_text: searchText })
    .execute();
  const links = await t.db.db.selectFrom('share_links').selectAll().where('public_id', '=', fromId).execute();
  await t.db.db
    .insertInto('share_links')
    .values(links.map((l) => ({ ...l, public_id: publicId, token: `${publicId}-${l.kind}-${l.sort_order}` })))
    .execute();
}

async function deleteByHand(publicId: string): Promise<void> {
  for (const table of ['share_links', 'invoice_items', 'invoice_revisions'] as const) {
    await t.db.db.deleteFrom(table).where('public_id', '=', publicId).execute();
  }
  await t.db.db.deleteFrom('invoices').where('public_id', '=', publicId).execute();
}

describe('the search index, whoever writes search_text', () => {
  it('indexes created documents in the same commit: nothing left pending, found by number and buyer', async () => {
    const created = await Promise.all(
      ['SI-CREATE-1', 'SI-CREATE-2', 'SI-CREATE-3'].map((n, i) => createOk(t, { invoice: simpleDoc(n, { buyer: { name: `ООО «Трилистник ${i}»` } }) })),
    );
    expect(created).toHaveLength(3);
    expect(await pending()).toBe(0);
    expect(await numbersFor('si-create')).toEqual(['SI-CREATE-1', 'SI-CREATE-2', 'SI-CREATE-3']);
    expect(await numbersFor('трилистник 1')).toEqual(['SI-CREATE-2']);
    await indexIntact();
  });

  it('finds rows inserted outside the group commit before and after the next flush, and updates and deletes keep the index exact', async () => {
    const base = await createOk(t, { invoice: simpleDoc('SI-BASE', { buyer: { name: 'ООО «Основа»' } }) });
    await insertByHand(base.public_id, 'si-hand-1', 'SI-HAND-1', 'ООО «Подснежник»');
    await insertByHand(base.public_id, 'si-hand-2', 'SI-HAND-2', 'ООО «Подорожник»');
    await insertByHand(base.public_id, 'si-hand-3', 'SI-HAND-3', 'ООО «Лютик»');
    if (sqlite) expect(await pending()).toBe(3);
    // Not flushed yet, found all the same.
    expect(await numbersFor('si-hand')).toEqual(['SI-HAND-1', 'SI-HAND-2', 'SI-HAND-3']);
    expect(await numbersFor('подснежник')).toEqual(['SI-HAND-1']);
    // A PUT of a pending row: the flush indexes its text as it is then, not the inserted one.
    const renamed = await put(t, 'si-hand-1', { invoice: simpleDoc('SI-HAND-1', { buyer: { name: 'ООО «Колокольчик»' } }) });
    expect(renamed.statusCode).toBe(200);
    // A pending row deleted by hand leaves nothing behind.
    await deleteByHand('si-hand-3');
    expect(await pending()).toBe(0); // the PUT's group commit flushed the rest
    expect(await numbersFor('подснежник')).toEqual([]);
    expect(await numbersFor('колокольчик')).toEqual(['SI-HAND-1']);
    expect(await numbersFor('лютик')).toEqual([]);
    expect(await numbersFor('si-hand')).toEqual(['SI-HAND-1', 'SI-HAND-2']);
    await indexIntact();
    // An indexed row: PUT replaces its terms, a delete removes them.
    expect((await put(t, 'si-hand-2', { invoice: simpleDoc('SI-HAND-2', { buyer: { name: 'ООО «Ромашка полевая»' } }) })).statusCode).toBe(200);
    expect(await numbersFor('подорожник')).toEqual([]);
    expect(await numbersFor('ромашка полевая')).toEqual(['SI-HAND-2']);
    await deleteByHand('si-hand-2');
    expect(await numbersFor('ромашка полевая')).toEqual([]);
    await indexIntact();
  });

  it('flushSearchIndex puts pending rows into the trigram table and empties the list', async () => {
    const base = await createOk(t, { invoice: simpleDoc('SI-FLUSH-BASE') });
    await insertByHand(base.public_id, 'si-flush-1', 'SI-FLUSH-1', 'ООО «Василёк»');
    if (sqlite) {
      expect(await pending()).toBe(1);
      const inIndex = async () =>
        (await sql<{ n: number }>`select count(*) as n from invoices_fts where invoices_fts match '"василёк"'`.execute(t.db.db)).rows[0]?.n;
      expect(Number(await inIndex())).toBe(0);
      await flushSearchIndex(t.db.db);
      expect(await pending()).toBe(0);
      expect(Number(await inIndex())).toBe(1);
    }
    expect(await numbersFor('василёк')).toEqual(['SI-FLUSH-1']);
    await indexIntact();
  });

  it.runIf(sqlite)('looks pending rows up from the pending list, never by scanning the documents', async () => {
    const plan = async (query: string) =>
      (await sql<{ detail: string }>`explain query plan ${sql.raw(query)}`.execute(t.db.db)).rows.map((r) => r.detail).join(' | ');
    for (const query of [PENDING_ROWIDS.compile(t.db.db).sql, PENDING_TEXTS.compile(t.db.db).sql]) {
      const detail = await plan(query);
      expect(detail).toMatch(/SCAN p\b/);
      expect(detail).toMatch(/SEARCH i USING (COVERING )?INDEX/);
    }
  });
});
