import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { ACME, BETA_ORG_INN, countRows, createOk, get, put, referenceDoc, simpleDoc, storedRow, tokenOf } from './write-helpers.js';

describe('PUT /api/v1/invoices/{public_id}: full update', () => {
  let t: TestApp;
  let share: string;
  beforeAll(async () => {
    t = await buildTestApp();
    share = t.config.shareUrl;
  });
  afterAll(async () => t.close());

  describe('refusals', () => {
    it('takes the document only in `invoice`: a root document is 400 invalid_request', async () => {
      const created = await createOk(t, simpleDoc('r1'));
      const res = await put(t, created.public_id, simpleDoc('r1-changed'));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_request' });
      expect(res.json().details).toContain('invoice');
      const res2 = await put(t, created.public_id, { invoice: simpleDoc('r1'), partial_update: true });
      expect(res2.statusCode).toBe(400);
      expect(res2.json().error).toBe('partial_update_not_supported');
      expect((await storedRow(t, created.public_id))?.revision).toBe(1);
    });

    it('is 404 document_not_found for an unknown id', async () => {
      const res = await put(t, 'no-such-document-123', { invoice: simpleDoc('x') });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ ok: false, error: 'document_not_found', document_public_id: 'no-such-document-123' });
    });

    it("is 404 for another team's document, which stays unchanged", async () => {
      const created = await createOk(t, { invoice: referenceDoc() });
      const before = await storedRow(t, created.public_id);
      for (const seller of [{ inn: BETA_ORG_INN }, created.invoice.seller]) {
        const res = await put(t, created.public_id, { invoice: { ...simpleDoc('stolen'), seller } }, { 'x-api-key': BETA_KEY });
        expect(res.statusCode).toBe(404);
        expect(res.json().error).toBe('document_not_found');
      }
      expect((await get(t, created.public_id, { 'x-api-key': BETA_KEY })).statusCode).toBe(404);
      expect((await t.call({ method: 'GET', url: `/api/v1/invoices/${created.public_id}/revisions`, headers: { 'x-api-key': BETA_KEY } })).statusCode).toBe(404);
      expect(await storedRow(t, created.public_id)).toEqual(before);
      expect(await countRows(t, 'invoice_revisions', created.public_id)).toBe(0);
    });

    it('is 409 public_id_mismatch when invoice.public_id differs from the path', async () => {
      const created = await createOk(t, simpleDoc('m1'));
      const res = await put(t, created.public_id, { invoice: { ...simpleDoc('m1'), public_id: 'another-id-1234' } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'public_id_mismatch', document_public_id: created.public_id });
      const same = await put(t, created.public_id, { invoice: { ...simpleDoc('m1'), public_id: created.public_id } });
      expect(same.statusCode).toBe(200);
    });
  });

  describe('a successful update', () => {
    it('keeps the identity and the API editor, records the new actor and bumps the revision', async () => {
      const created = await createOk(t, { invoice: referenceDoc(), actor_login: 'creator' });
      const res = await put(t, created.public_id, { invoice: { ...referenceDoc(), number: '16' }, actor_login: 'editor' });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(res.headers.etag).toBe(`"${created.public_id}.2"`);
      expect(body.api).toMatchObject({ revision: 2, etag: `"${created.public_id}.2"` });
      expect(body.public_id).toBe(created.public_id);
      expect(body.invoice.number).toBe('16');
      expect(body.document.document_title).toBe('Счёт № 16 от 02.03.2026');
      expect(body.metadata).toMatchObject({
        editor_mode: 'api',
        source_type: 'api',
        revision: 2,
        created_by_login: 'creator',
        last_modified_by_login: 'editor',
        created_at: created.metadata.created_at,
        api_created_at: created.metadata.api_created_at,
        package_public_id: created.metadata.package_public_id,
      });
      expect(Date.parse(body.metadata.api_updated_at)).toBeGreaterThanOrEqual(Date.parse(created.metadata.created_at));
      expect(body.metadata.last_modified_at >= created.metadata.last_modified_at).toBe(true);
      // The buyer and colleague links survive an update.
      expect(body.share_links.buyer_url).toBe(created.share_links.buyer_url);
      expect(body.share_links.colleague_url).toBe(created.share_links.colleague_url);
      expect((await get(t, created.public_id)).headers.etag).toBe(`"${created.public_id}.2"`);
    });

    it('records the key name as the modifying login when actor_login is absent', async () => {
      const created = await createOk(t, { invoice: simpleDoc('k1'), actor_login: 'creator' });
      const body = (await put(t, created.public_id, { invoice: simpleDoc('k1') })).json();
      expect(body.metadata).toMatchObject({ created_by_login: 'creator', last_modified_by_login: 'erp' });
    });

    it('honours If-Match: an old ETag is 409 revision_conflict, the current one or * is applied', async () => {
      const created = await createOk(t, simpleDoc('e1'));
      const id = created.public_id as string;
      const v1 = `"${id}.1"`;
      const ok2 = await put(t, id, { invoice: simpleDoc('e2') }, { 'if-match': v1 });
      expect(ok2.statusCode).toBe(200);
      const stale = await put(t, id, { invoice: simpleDoc('e-stale') }, { 'if-match': v1 });
      expect(stale.statusCode).toBe(409);
      expect(stale.json()).toMatchObject({ ok: false, error: 'revision_conflict', document_public_id: id });
      expect((await storedRow(t, id))?.number).toBe('e2');
      const ok3 = await put(t, id, { invoice: simpleDoc('e3') }, { 'if-match': ok2.headers.etag as string });
      expect(ok3.statusCode).toBe(200);
      const ok4 = await put(t, id, { invoice: simpleDoc('e4') }, { 'if-match': '*' });
      expect(ok4.statusCode).toBe(200);
      const ok5 = await put(t, id, { invoice: simpleDoc('e5') }, { 'if-match': `"other.1", W/"${id}.4"` });
      expect(ok5.statusCode).toBe(200);
      expect(ok5.json().api.revision).toBe(5);
    });

    it('keeps every previous revision: GET …/revisions lists summaries, GET …/revisions/{n} one with its document', async () => {
      const created = await createOk(t, { invoice: simpleDoc('rev-1'), actor_login: 'first' });
      const id = created.public_id as string;
      await put(t, id, { invoice: simpleDoc('rev-2', { items: [{ name: 'Другое', qty: 2, price: 50 }] }), actor_login: 'second' });
      await put(t, id, { invoice: simpleDoc('rev-3'), actor_login: 'third' });
      const res = await t.call({ method: 'GET', url: `/api/v1/invoices/${id}/revisions`, headers: { 'x-api-key': 'ak_acme_erp_0001' } });
      expect(res.statusCode).toBe(200);
      const list = res.json();
      expect(list).toMatchObject({ ok: true, public_id: id, current_revision: 3, total: 2, limit: 20, offset: 0 });
      expect(list.revisions.map((r: { revision: number }) => r.revision)).toEqual([2, 1]);
      const [second, first] = list.revisions;
      expect(first).toMatchObject({ modified_by_login: 'first', editor_mode: 'api', seller_status: 'issued', total: 122 });
      expect(first.invoice).toBeUndefined();
      expect(second).toMatchObject({ modified_by_login: 'second', total: 100 });
      expect(Date.parse(second.superseded_at)).toBeGreaterThanOrEqual(Date.parse(first.superseded_at));
      const one = async (n: number) =>
        t.call({ method: 'GET', url: `/api/v1/invoices/${id}/revisions/${n}`, headers: { 'x-api-key': 'ak_acme_erp_0001' } });
      expect((await one(1)).json()).toMatchObject({ ok: true, revision: 1, current_revision: 3, modified_by_login: 'first', invoice: created.invoice });
      const rev2 = (await one(2)).json();
      expect(rev2.invoice.number).toBe('rev-2');
      expect(rev2.invoice.items).toEqual([{ name: 'Другое', qty: 2, price: 50, unit: 'шт', vat_pct: null }]);
      expect((await one(3)).json()).toMatchObject({ revision: 3, superseded_at: null, invoice: { number: 'rev-3' } });
      const missing = await one(4);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ ok: false, error: 'revision_not_found' });
      const foreign = await t.call({ method: 'GET', url: `/api/v1/invoices/${id}/revisions/1`, headers: { 'x-api-key': BETA_KEY } });
      expect(foreign.json().error).toBe('document_not_found');
    });

    it('keeps the link of a kept recipient, drops a removed one and gives a new one a new token', async () => {
      const created = await createOk(t, {
        invoice: simpleDoc('rcp', { api_recipients: [{ email: 'kept@buyer.example', name: 'Kept' }, { email: 'gone@buyer.example' }] }),
      });
      const id = created.public_id as string;
      const [kept, gone] = created.share_links.recipients.map((r: { url: string }) => tokenOf(r.url, share));
      const res = await put(t, id, {
        invoice: simpleDoc('rcp', { api_recipients: [{ email: 'new@buyer.example' }, { email: 'KEPT@buyer.example', name: 'Kept again', position: 'CFO' }] }),
      });
      expect(res.statusCode).toBe(200);
      const recipients = res.json().share_links.recipients as Array<{ email: string; url: string; name: string; position: string }>;
      expect(recipients.map((r) => r.email.toLowerCase())).toEqual(['new@buyer.example', 'kept@buyer.example']);
      const [fresh, again] = recipients.map((r) => tokenOf(r.url, share));
      expect(again).toBe(kept);
      expect(recipients[1]).toMatchObject({ name: 'Kept again', position: 'CFO' });
      expect(fresh).not.toBe(gone);
      expect([created.share_links.buyer_url, created.share_links.colleague_url].map((u: string) => tokenOf(u, share))).not.toContain(fresh);
      const tokens = (await t.db.db.selectFrom('share_links').select('token').where('public_id', '=', id).execute()).map((r) => r.token);
      expect(tokens).toContain(kept);
      expect(tokens).toContain(fresh);
      expect(tokens).not.toContain(gone);
      expect(tokens).toHaveLength(4);
      // GET shows the same links.
      expect((await get(t, id)).json().share_links).toEqual(res.json().share_links);
    });
  });

  describe('concurrency', () => {
    it('applies concurrent updates one after another: no lost revision', async () => {
      const created = await createOk(t, simpleDoc('c-0'));
      const id = created.public_id as string;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => put(t, id, { invoice: simpleDoc(`c-${i + 1}`), actor_login: `writer-${i + 1}` })),
      );
      for (const res of results) {
        expect([200, 409], res.body).toContain(res.statusCode);
        if (res.statusCode === 409) expect(res.json().error).toBe('revision_conflict');
      }
      const winners = results.filter((r) => r.statusCode === 200).map((r) => r.json());
      expect(winners.length).toBeGreaterThan(0);
      // Each success produced its own revision.
      expect(new Set(winners.map((w) => w.api.revision)).size).toBe(winners.length);
      const row = await storedRow(t, id);
      expect(row?.revision).toBe(1 + winners.length);
      const last = winners.find((w) => w.api.revision === row?.revision);
      expect(row?.number).toBe(last?.invoice.number);
      const revisions = await t.db.db.selectFrom('invoice_revisions').select(['revision', 'document']).where('public_id', '=', id).orderBy('revision').execute();
      expect(revisions.map((r) => r.revision)).toEqual(Array.from({ length: winners.length }, (_, i) => i + 1));
      // Revision n holds the document that revision n+1 replaced.
      const numbers = revisions.map((r) => (JSON.parse(r.document) as { number: string }).number);
      expect(numbers[0]).toBe('c-0');
      const byRevision = new Map(winners.map((w) => [w.api.revision as number, w.invoice.number as string]));
      for (let n = 2; n <= winners.length; n++) expect(numbers[n - 1]).toBe(byRevision.get(n));
      expect(await countRows(t, 'invoice_items', id)).toBe(1);
    });
  });

  describe('the stored rows of an update', () => {
    // SQLite: with the rowid, which shows whether a row was rewritten (PostgreSQL rewrites the items on every update).
    const itemsOf = (id: string) =>
      t.db.db
        .selectFrom('invoice_items')
        .select(['line_no', 'name', 'qty', 'unit', 'price', 'vat_pct', 'amount', 'net', 'vat', 'gross'])
        .$if(t.db.dialect === 'sqlite', (q) => q.select(sql<number>`rowid`.as('rowid')))
        .where('public_id', '=', id)
        .orderBy('line_no')
        .execute();
    const dated = (from: string, to: string) =>
      t.call({ method: 'GET', url: `/api/v1/invoices?date_from=${from}&date_to=${to}&limit=1`, headers: ACME }).then((r) => r.json().total as number);

    it('keeps unchanged items as stored and replaces changed ones (values, count, order)', async () => {
      const two = [
        { name: 'Работа', qty: 1, price: 100, vat_pct: 22 },
        { name: 'Доставка', qty: 2, unit: 'шт', price: 50.5, vat_pct: null },
      ];
      const created = await createOk(t, simpleDoc('items-1', { items: two }));
      const id = created.public_id as string;
      const first = await itemsOf(id);
      expect(first.map((r) => [r.line_no, r.name, r.qty, r.price, r.vat_pct])).toEqual([
        [1, 'Работа', '1', '100', '22'],
        [2, 'Доставка', '2', '50.5', null],
      ]);
      // Same items, another comment: the rows stay as they were (on SQLite the very rows: same rowids).
      const same = await put(t, id, { invoice: simpleDoc('items-1', { items: two, comment: 'другой' }) });
      expect(same.statusCode).toBe(200);
      expect(await itemsOf(id)).toEqual(first);
      // A changed quantity: the rows hold the new values and amounts.
      const changed = await put(t, id, { invoice: simpleDoc('items-1', { items: [two[0], { ...two[1], qty: 3 }] }) });
      expect(changed.statusCode).toBe(200);
      const third = await itemsOf(id);
      expect(third.map((r) => [r.line_no, r.name, r.qty])).toEqual([
        [1, 'Работа', '1'],
        [2, 'Доставка', '3'],
      ]);
      expect(third[1]?.gross).not.toBe(first[1]?.gross);
      // Swapped order, then one item fewer.
      await put(t, id, { invoice: simpleDoc('items-1', { items: [{ ...two[1], qty: 3 }, two[0]] }) });
      expect((await itemsOf(id)).map((r) => [r.line_no, r.name])).toEqual([
        [1, 'Доставка'],
        [2, 'Работа'],
      ]);
      await put(t, id, { invoice: simpleDoc('items-1', { items: [two[0]] }) });
      expect((await itemsOf(id)).map((r) => [r.line_no, r.name, r.qty])).toEqual([[1, 'Работа', '1']]);
    });

    it('SQLite: plans none of its statements on a scan or on the outbox due index, however long the outbox backlog', async () => {
      if (t.db.dialect !== 'sqlite' || !t.db.statements) return;
      const created = await createOk(t, simpleDoc('plans-1'));
      const id = created.public_id as string;
      const cache = t.db.statements;
      const seen = new Set<string>();
      const prepare = cache.prepare.bind(cache);
      cache.prepare = (text: string) => {
        seen.add(text);
        return prepare(text);
      };
      try {
        const res = await put(t, id, { invoice: simpleDoc('plans-1', { comment: 'again' }) });
        expect(res.statusCode).toBe(200);
      } finally {
        cache.prepare = prepare;
      }
      const plans: string[] = [];
      for (const text of seen) {
        if (!/^\s*(select|update|delete|insert)/i.test(text)) continue;
        // Any values: without statistics the plan does not depend on them.
        const params = (text.match(/\?/g) ?? []).map(() => 'x');
        const rows = prepare(`explain query plan ${text}`).all(...params) as Array<{ detail: string }>;
        plans.push(`${text.slice(0, 60)} => ${rows.map((r) => r.detail).join(' | ')}`);
      }
      expect(plans.some((p) => p.includes('from "outbox"'))).toBe(true);
      for (const plan of plans) {
        expect(plan).not.toContain('outbox_due_idx');
        expect(plan).not.toMatch(/SCAN (invoices|invoice_items|share_links|invoice_revisions|outbox|edo_jobs|events)\b/);
      }
    });

    it('moves the document between months only when its date changes, and the date-range totals follow', async () => {
      const created = await createOk(t, simpleDoc('dates-1', { date: '2031-05-10' }));
      const id = created.public_id as string;
      expect(await dated('2031-05-01', '2031-05-31')).toBe(1);
      // Same date: still counted once in May.
      expect((await put(t, id, { invoice: simpleDoc('dates-1', { date: '2031-05-10', comment: 'x' }) })).statusCode).toBe(200);
      expect(await dated('2031-05-01', '2031-05-31')).toBe(1);
      expect((await storedRow(t, id))?.date).toBe('2031-05-10');
      // Another day of May, then June: the row, the list and the month counts move.
      expect((await put(t, id, { invoice: simpleDoc('dates-1', { date: '2031-05-20' }) })).statusCode).toBe(200);
      expect((await storedRow(t, id))?.date).toBe('2031-05-20');
      expect(await dated('2031-05-15', '2031-05-31')).toBe(1);
      expect(await dated('2031-05-01', '2031-05-14')).toBe(0);
      expect((await put(t, id, { invoice: simpleDoc('dates-1', { date: '2031-06-02' }) })).statusCode).toBe(200);
      expect(await dated('2031-05-01', '2031-05-31')).toBe(0);
      expect(await dated('2031-06-01', '2031-06-30')).toBe(1);
      expect(await dated('2031-01-01', '2031-12-31')).toBe(1);
    });
  });
});
