/**
 * The rows a create stores beside the invoice: its items, share links and events. On PostgreSQL
 * they are written by one fixed statement that takes each column as an array (store/postgres-statements.ts
 * `insertNewDocument`), so values an array literal must escape are what this checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { countRows, createOk, simpleDoc } from './write-helpers.js';

describe('a new document stores its items, share links and events as given', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const awkward = ['Кавычки "двойные" и \'одинарные\'', 'Обратная \\ косая', '{фигурные, скобки}', 'NULL', ' пробелы по краям ', 'Эмодзи 🧾'];

  it('items with characters an array literal escapes, a line without VAT, and recipients with and without a position', async () => {
    const doc = simpleDoc('rows-1', {
      items: [
        ...awkward.map((name, i) => ({ name, qty: i + 1, unit: i === 2 ? 'м²' : 'шт', price: 10.5 * (i + 1), vat_pct: 22 })),
        { name: 'Без НДС', qty: 1, price: 1000, vat_pct: null },
      ],
      api_recipients: [
        { email: 'anna@buyer.example', name: 'Анна "Бух"', position: 'Бухгалтер, {гл.}' },
        { email: 'boris@buyer.example', name: 'NULL' },
      ],
    });
    const body = await createOk(t, { invoice: doc });
    const id = body.public_id as string;
    const items = await t.db.db.selectFrom('invoice_items').selectAll().where('public_id', '=', id).orderBy('line_no').execute();
    expect(items.map((r) => [r.team_id, r.line_no, r.name, r.unit, r.vat_pct])).toEqual([
      ...awkward.map((name, i) => ['acme', i + 1, name.trim() === name ? name : expect.any(String), i === 2 ? 'м²' : 'шт', '22']),
      ['acme', 7, 'Без НДС', 'шт', null],
    ]);
    // What the response says each line is, the rows say too.
    expect(items.map((r) => r.name)).toEqual(body.invoice.items.map((i: { name: string }) => i.name));
    expect(items.map((r) => [r.qty, r.price])).toEqual(body.invoice.items.map((i: { qty: number; price: number }) => [String(i.qty), String(i.price)]));
    expect(items.map((r) => Number(r.gross))).toEqual(body.totals.lines.map((l: { gross: number }) => l.gross));
    const links = await t.db.db.selectFrom('share_links').selectAll().where('public_id', '=', id).orderBy('sort_order').execute();
    expect(links.map((l) => [l.team_id, l.kind, l.email, l.name, l.position, l.last_opened_at])).toEqual([
      ['acme', 'buyer', null, null, null, null],
      ['acme', 'colleague', null, null, null, null],
      ['acme', 'recipient', 'anna@buyer.example', 'Анна "Бух"', 'Бухгалтер, {гл.}', null],
      ['acme', 'recipient', 'boris@buyer.example', 'NULL', null, null],
    ]);
    expect(body.share_links.recipients.map((r: { email: string }) => r.email)).toEqual(['anna@buyer.example', 'boris@buyer.example']);
    for (const link of links) expect(link.created_at).toBe(body.metadata.created_at);
    const events = await t.db.db.selectFrom('events').select(['type', 'revision', 'data']).where('public_id', '=', id).orderBy('seq').execute();
    expect(events.map((e) => [e.type, e.revision])).toEqual([['invoice.created', 1]]);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ public_id: id, revision: 1 });
  });

  it("moves the team's counters as one row trigger per row did: documents +1, the month +1, the list version +1 per invoice and link row", async () => {
    const db = t.db.db;
    const counters = async () => {
      const c = await db.selectFrom('team_document_counts').select((eb) => [eb.fn.sum<string>('documents').as('d'), eb.fn.sum<string>('changes').as('v')]).where('team_id', '=', 'acme').executeTakeFirstOrThrow();
      const m = await db.selectFrom('team_month_counts').select((eb) => eb.fn.sum<string>('documents').as('n')).where('team_id', '=', 'acme').where('month', '=', '2026-03').executeTakeFirstOrThrow();
      return { documents: Number(c.d), version: Number(c.v), march: Number(m.n) };
    };
    const before = await counters();
    const recipients = [{ email: 'a@buyer.example' }, { email: 'b@buyer.example' }, { email: 'c@buyer.example' }];
    const body = await createOk(t, { invoice: simpleDoc('rows-counters', { api_recipients: recipients }) });
    const links = await countRows(t, 'share_links', body.public_id);
    expect(links).toBe(5);
    expect(await counters()).toEqual({ documents: before.documents + 1, version: before.version + 1 + links, march: before.march + 1 });
  });

  it('a document of 1,000 items (the most a document may have)', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ name: `Строка ${i + 1}`, qty: 1, price: 1, vat_pct: 22 }));
    const body = await createOk(t, { invoice: simpleDoc('rows-1000', { items }) });
    const rows = await t.db.db.selectFrom('invoice_items').select(['line_no', 'name']).where('public_id', '=', body.public_id).orderBy('line_no').execute();
    expect(rows).toHaveLength(1000);
    expect(rows[999]).toEqual({ line_no: 1000, name: 'Строка 1000' });
    expect(body.totals.total).toBe(1220);
  });
});
