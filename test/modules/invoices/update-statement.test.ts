/**
 * A full update's rows. On PostgreSQL an update that sends nothing (no e-mail, no EDO job
 * before or after) is written by one statement outside any transaction (store/postgres-statements.ts
 * `updateDocument`): the invoice row, its revision, the retention's delete, the items (changed
 * lines only, lines past the new count deleted), the recipient links and the events. What it
 * writes is checked row by row here, on both databases (SQLite writes the same rows in its
 * transaction), and what it costs in round trips and when it must not apply, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rotateShareLinks } from '../../../src/modules/invoices/index.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { statementsDuring } from '../../helpers/statements.js';
import { createOk, get, put, simpleDoc } from './write-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: { INVOICING_REVISIONS_KEEP: '2' } });
});
afterAll(async () => t?.close());

const items3 = [
  { name: 'Первая', qty: 1, price: 100, vat_pct: 22 },
  { name: 'Вторая', qty: 2, price: 200, vat_pct: 22 },
  { name: 'Третья', qty: 3, price: 300, vat_pct: null },
];

async function rowsOf(id: string) {
  const db = t.db.db;
  return {
    invoice: await db.selectFrom('invoices').selectAll().where('public_id', '=', id).executeTakeFirstOrThrow(),
    items: await db.selectFrom('invoice_items').selectAll().where('public_id', '=', id).orderBy('line_no').execute(),
    links: await db.selectFrom('share_links').selectAll().where('public_id', '=', id).orderBy('sort_order').execute(),
    revisions: await db.selectFrom('invoice_revisions').selectAll().where('public_id', '=', id).orderBy('revision').execute(),
    events: await db.selectFrom('events').selectAll().where('public_id', '=', id).orderBy('tx_id').orderBy('seq').execute(),
  };
}

async function monthCounts(): Promise<Record<string, number>> {
  const rows = await t.db.db
    .selectFrom('team_month_counts')
    .select((eb) => ['month', eb.fn.sum<number | string>('documents').as('n')])
    .where('team_id', '=', 'acme')
    .groupBy('month')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.month, Number(r.n)]));
}

async function putOk(id: string, etag: string, invoice: Record<string, unknown>) {
  const res = await put(t, id, { invoice }, { 'if-match': etag });
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.json(), etag: String(res.headers.etag) };
}

describe('an update writes the same rows as its transaction would', () => {
  it('invoice, revision, items, links, events and the list counters', async () => {
    const recipients = [
      { email: 'anna@buyer.example', name: 'Анна', position: 'Бухгалтер' },
      { email: 'boris@buyer.example', name: 'Борис' },
    ];
    const created = await createOk(t, simpleDoc('upd-1', { seller_status: 'draft', items: items3, api_recipients: recipients }));
    const id = created.public_id as string;
    const before = await rowsOf(id);
    const [stateBefore, monthsBefore] = [await t.stores.invoices.listState('acme'), await monthCounts()];

    // Line 2 changed, line 3 dropped; Анна renamed and moved after a new recipient, Борис gone;
    // the date moved to April; the status moved on.
    const invoice = simpleDoc('upd-1b', {
      date: '2026-04-10',
      seller_status: 'issued',
      items: [items3[0], { ...items3[1], qty: 5 }],
      api_recipients: [{ email: 'vera@buyer.example', name: 'Вера' }, { email: 'ANNA@buyer.example', name: 'Анна Петровна', position: 'Гл. бухгалтер' }],
    });
    const { body, etag } = await putOk(id, String((await get(t, id)).headers.etag), invoice);
    const after = await rowsOf(id);

    expect(after.invoice).toMatchObject({ number: 'upd-1b', date: '2026-04-10', seller_status: 'issued', revision: 2 });
    expect(after.invoice.link_epoch).toBe(before.invoice.link_epoch);
    // The revision keeps the document as it was.
    expect(after.revisions.map((r) => [r.revision, r.document, r.seller_status, r.total, r.modified_at])).toEqual([
      [1, before.invoice.document, before.invoice.seller_status, before.invoice.total, before.invoice.last_modified_at],
    ]);
    // Line 1 as it was (not rewritten), line 2 with the new quantity and totals, no line 3.
    expect(after.items.map((i) => [i.line_no, i.name, i.qty])).toEqual([
      [1, 'Первая', '1'],
      [2, 'Вторая', '5'],
    ]);
    expect(after.items[0]).toEqual(before.items[0]);
    expect(Number(after.items[1]?.gross)).toBe(body.totals.lines[1].gross);
    // Buyer and colleague links untouched; Анна keeps her token with the new order, name and
    // position; Борис's link is gone; Вера has a new one.
    const anna = before.links.find((l) => l.email === 'anna@buyer.example');
    const boris = before.links.find((l) => l.email === 'boris@buyer.example');
    expect(after.links.slice(0, 2)).toEqual(before.links.slice(0, 2));
    expect(after.links.slice(2).map((l) => [l.kind, l.email, l.name, l.position, l.sort_order])).toEqual([
      ['recipient', 'vera@buyer.example', 'Вера', null, 2],
      ['recipient', 'anna@buyer.example', 'Анна Петровна', 'Гл. бухгалтер', 3],
    ]);
    expect(after.links[3]?.token).toBe(anna?.token);
    expect(after.links.map((l) => l.token)).not.toContain(boris?.token);
    // The answer shows the links as stored.
    for (const l of after.links) expect(JSON.stringify(body)).toContain(l.token);
    expect(JSON.stringify(body)).not.toContain(String(boris?.token));
    // Events: the update, then the status change, in one transaction, after the creation.
    const added = after.events.slice(before.events.length);
    expect(added.map((e) => [e.type, JSON.parse(e.data)])).toEqual([
      ['invoice.updated', { public_id: id, revision: 2, previous_revision: 1 }],
      ['invoice.status_changed', { public_id: id, revision: 2, status: 'seller_status', from: 'draft', to: 'issued' }],
    ]);
    expect(new Set(added.map((e) => String(e.tx_id))).size).toBe(1);
    // The list counters: the version moved, the document moved from March to April.
    const [stateAfter, monthsAfter] = [await t.stores.invoices.listState('acme'), await monthCounts()];
    expect(stateAfter.documents).toBe(stateBefore.documents);
    expect(stateAfter.version).toBeGreaterThan(stateBefore.version);
    expect(monthsAfter['2026-03']).toBe((monthsBefore['2026-03'] ?? 0) - 1);
    expect(monthsAfter['2026-04']).toBe((monthsBefore['2026-04'] ?? 0) + 1);
    // A GET answers what the PUT answered.
    const read = (await get(t, id)).json();
    expect({ ...read, api: undefined }).toEqual({ ...body, api: undefined });

    // More lines than before: line 3 comes back; the retention (2 kept) deletes revision 1 at the 4th.
    const third = await putOk(id, etag, { ...invoice, items: items3 });
    expect((await rowsOf(id)).items.map((i) => [i.line_no, i.name, i.qty])).toEqual([
      [1, 'Первая', '1'],
      [2, 'Вторая', '2'],
      [3, 'Третья', '3'],
    ]);
    await putOk(id, third.etag, { ...invoice, number: 'upd-1d' });
    expect((await rowsOf(id)).revisions.map((r) => r.revision)).toEqual([2, 3]);
  });
});

describe.runIf(usingPostgres())('PostgreSQL: one statement', () => {
  it('an update that sends nothing is three round trips: authentication, the read, the write', async () => {
    const created = await createOk(t, simpleDoc('upd-rt', { items: items3 }));
    const id = created.public_id as string;
    const etag = String((await get(t, id)).headers.etag);
    let status = 0;
    const texts = await statementsDuring(async () => {
      const res = await put(t, id, { invoice: simpleDoc('upd-rt-2', { items: items3 }) }, { 'if-match': etag });
      status = res.statusCode;
    });
    expect(status).toBe(200);
    expect(texts).toHaveLength(3);
  });

  it('writes nothing when the revision or the link epoch moved since the read', async () => {
    const created = await createOk(t, simpleDoc('upd-stale', { items: items3 }));
    const id = created.public_id as string;
    const before = await rowsOf(id);
    const update = (expectedRevision: number, expectedLinkEpoch: number) =>
      t.stores.invoices.updateDocumentAlone({
        teamId: 'acme',
        publicId: id,
        expectedRevision,
        expectedLinkEpoch,
        set: { number: 'never', revision: expectedRevision + 1 },
        revision: { ...before.revisions[0], team_id: 'acme', public_id: id, revision: 1, document: '{}', seller_status: 'issued', total: '0', editor_mode: 'api', modified_at: 'x', modified_by_login: null, api_key_id: null, superseded_at: 'x' },
        pruneUpTo: 0,
        items: [],
        links: { moved: [], removed: before.links.map((l) => l.token), fresh: [] },
        events: [{ teamId: 'acme', now: 'x', type: 'invoice.updated', data: { public_id: id, revision: 2, previous_revision: 1 } }],
      });
    expect(await update(7, before.invoice.link_epoch)).toEqual({ revision: 1 });
    await rotateShareLinks(t.db.db, id);
    // Rotated since the read: the revision is the one expected, the epoch is not.
    expect(await update(1, before.invoice.link_epoch)).toEqual({ revision: 1 });
    const after = await rowsOf(id);
    expect(after.invoice.number).toBe('upd-stale');
    expect(after.items).toEqual(before.items);
    expect(after.revisions).toEqual([]);
    expect(after.links).toHaveLength(before.links.length);
    expect(after.events).toEqual(before.events);
  });

  it('a rotation between the read and the write: the update is read again and applies, with the rotated links', async () => {
    const created = await createOk(t, simpleDoc('upd-rot', { api_recipients: [{ email: 'anna@buyer.example' }] }));
    const id = created.public_id as string;
    const etag = String((await get(t, id)).headers.etag);
    // Rotate right after the update's read (the statement that reads the links with the row).
    const store = t.stores.invoices;
    const original = store.findForUpdate.bind(store);
    let rotated = false;
    const spy = vi.spyOn(store, 'findForUpdate').mockImplementation(async (teamId, publicId) => {
      const read = await original(teamId, publicId);
      if (!rotated) {
        rotated = true;
        await rotateShareLinks(t.db.db, id);
      }
      return read;
    });
    try {
      const res = await put(t, id, { invoice: simpleDoc('upd-rot-2', { api_recipients: [{ email: 'anna@buyer.example', name: 'Анна' }] }) }, { 'if-match': etag });
      expect(res.statusCode, res.body).toBe(200);
      const links = (await rowsOf(id)).links;
      for (const l of links) expect(res.body).toContain(l.token);
      expect(links.find((l) => l.kind === 'recipient')?.name).toBe('Анна');
      // Read twice: the first write did not apply (the epoch had moved), the second did.
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
    expect(rotated).toBe(true);
  });
});
