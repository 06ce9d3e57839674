/**
 * The events feed: every change writes its event in the change's transaction, the
 * feed pages in order with a cursor, `changed_at` moves and `changed_since` filters, another
 * team sees nothing of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { request } from '../sharing/link-helpers.js';
import { ACME, post, put, simpleDoc } from '../invoices/write-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

async function feed(query = '', headers: Record<string, string> = ACME) {
  const res = await t.call({ method: 'GET', url: `/api/v1/events${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { items: Array<{ id: string; type: string; created_at: string; data: any }>; next_cursor: string | null; has_more: boolean };
}

async function all(headers: Record<string, string> = ACME) {
  const items: Awaited<ReturnType<typeof feed>>['items'] = [];
  let after = '';
  for (;;) {
    const page = await feed(`?limit=2${after ? `&after=${after}` : ''}`, headers);
    items.push(...page.items);
    if (!page.has_more) return items;
    after = page.next_cursor as string;
  }
}

describe('events feed', () => {
  it('records create, update, status change and a buyer view, in order, paged with the cursor', async () => {
    const created = await post(t, simpleDoc('E-1'));
    expect(created.statusCode).toBe(200);
    const doc = created.json();
    const id = doc.public_id as string;
    expect((await put(t, id, { invoice: simpleDoc('E-1', { seller_status: 'paid' }) })).statusCode).toBe(200);
    await request(t, doc.invoice_url);
    await request(t, doc.invoice_url); // a second open is no news

    // On PostgreSQL an event shows once every older transaction of the service has ended.
    let mine: Awaited<ReturnType<typeof all>> = [];
    for (const deadline = Date.now() + 20_000; mine.length < 4 && Date.now() < deadline; ) {
      mine = (await all()).filter((e) => e.data.public_id === id);
      if (mine.length < 4) await new Promise((r) => setTimeout(r, 50));
    }
    expect(mine.map((e) => e.type)).toEqual(['invoice.created', 'invoice.updated', 'invoice.status_changed', 'invoice.viewed']);
    expect(mine[0]!.data).toMatchObject({ public_id: id, revision: 1, seller_status: 'issued', number: 'E-1' });
    expect(mine[1]!.data).toMatchObject({ revision: 2, previous_revision: 1 });
    expect(mine[2]!.data).toMatchObject({ revision: 2, status: 'seller_status', from: 'issued', to: 'paid' });
    expect(mine[3]!.data).toMatchObject({ revision: 2, buyer_status: 'viewed' });
    const ids = mine.map((e) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);

    const onlyViews = await feed('?types=invoice.viewed');
    expect(onlyViews.items.map((e) => e.type)).toEqual(['invoice.viewed']);
    const rest = await feed(`?after=${ids[1]}`);
    expect(rest.items.map((e) => e.id)).toEqual(ids.slice(2));
    const empty = await feed(`?after=${ids.at(-1)}`);
    expect(empty).toMatchObject({ items: [], next_cursor: ids.at(-1), has_more: false });
  });

  it('moves changed_at with a buyer view and filters the list with changed_since', async () => {
    const doc = (await post(t, simpleDoc('E-2'))).json();
    const before = doc.metadata.changed_at as string;
    expect(before).toBeTruthy();
    const mark = new Date(Date.now() + 5).toISOString();
    await new Promise((r) => setTimeout(r, 10));
    await request(t, doc.invoice_url);
    const read = (await t.call({ method: 'GET', url: `/api/v1/invoices/${doc.public_id}`, headers: ACME })).json();
    expect(read.metadata.changed_at > before).toBe(true);
    expect(read.metadata.last_modified_at).toBe(doc.metadata.last_modified_at);

    const list = (await t.call({ method: 'GET', url: `/api/v1/invoices?changed_since=${encodeURIComponent(mark)}`, headers: ACME })).json();
    expect(list.items.map((i: any) => i.public_id)).toEqual([doc.public_id]);
    expect(list.items[0].changed_at).toBe(read.metadata.changed_at);
    const byUpdate = (await t.call({ method: 'GET', url: `/api/v1/invoices?updated_since=${encodeURIComponent(mark)}`, headers: ACME })).json();
    expect(byUpdate.items).toEqual([]);
  });

  it('refuses a malformed cursor or an unknown type with 400 invalid_query', async () => {
    for (const q of ['?after=nope', '?types=invoice.exploded', '?limit=0', '?limit=201']) {
      const res = await t.call({ method: 'GET', url: `/api/v1/events${q}`, headers: ACME });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error).toBe('invalid_query');
    }
  });

  it('shows another team none of these events', async () => {
    const beta = await feed('', { 'x-api-key': BETA_KEY });
    expect(beta.items).toEqual([]);
  });

  it('records one event per change under concurrent writes', async () => {
    const doc = (await post(t, simpleDoc('E-3'))).json();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => put(t, doc.public_id, { invoice: simpleDoc(`E-3.${i}`) })));
    const ok = results.filter((r) => r.statusCode === 200).length;
    const rows = await t.db.db.selectFrom('events').select(['type', 'revision']).where('public_id', '=', doc.public_id).execute();
    const updates = rows.filter((r) => r.type === 'invoice.updated');
    expect(updates).toHaveLength(ok);
    expect(new Set(updates.map((u) => u.revision)).size).toBe(ok);
    const stored = await t.db.db.selectFrom('invoices').select('revision').where('public_id', '=', doc.public_id).executeTakeFirstOrThrow();
    expect(stored.revision).toBe(ok + 1);
  });
});
