import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { anyJsonText, malformedCreateBody, malformedUpdateBody } from './malformed-arbitraries.js';
import { PNG_1PX } from './validation-fixtures.js';
import { countRows, createOk, get, post, put, referenceDoc, simpleDoc, storedRow } from './write-helpers.js';

const RUNS = 150;

describe('POST /api/v1/invoices: validation over HTTP (contract 4 "Documents")', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  /** Posts a document that must be refused with 400 and checks that nothing was stored. */
  async function refused(body: unknown): Promise<Record<string, any>> {
    const before = await countRows(t, 'invoices');
    const res = await post(t, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(await countRows(t, 'invoices')).toBe(before);
    return res.json();
  }

  describe('errors: 400 validation_failed', () => {
    it('lists every missing path in missing_fields at once', async () => {
      const body = await refused({
        invoice: {
          seller: { name: 'ООО «Ромашка»' },
          buyer: { inn: '7736207543' },
          items: [
            { name: 'A', qty: 1, price: 1 },
            { name: 'B', qty: 2, price: 2 },
            { name: 'C', qty: 3 },
          ],
        },
      });
      expect(body).toMatchObject({ ok: false, error: 'validation_failed' });
      expect([...body.missing_fields].sort()).toEqual(['buyer.name', 'currency', 'date', 'items[2].price', 'number', 'seller.inn']);
      for (const path of body.missing_fields) {
        expect(body.errors).toContainEqual(expect.objectContaining({ field: path, code: 'required' }));
        expect(body.details).toContain(path);
      }
    });

    it('treats a missing seller or buyer object as its required leaf, and blank strings as missing', async () => {
      const body = await refused({ number: '  ', date: '2026-03-02', currency: 'RUB', items: [{ name: '', qty: 1, price: 1 }] });
      expect([...body.missing_fields].sort()).toEqual(['buyer.name', 'items[0].name', 'number', 'seller.inn']);
    });

    it.each([
      ['2026-02-30', 'invalid_date'],
      ['2025-02-29', 'invalid_date'],
      ['2026-13-01', 'invalid_date'],
      ['02.03.2026', 'invalid_format'],
      ['2026-03-02T10:00:00Z', 'invalid_format'],
    ])('refuses the date %s (%s)', async (date, code) => {
      const body = await refused(simpleDoc('d1', { date }));
      expect(body.error).toBe('validation_failed');
      expect(body.missing_fields).toEqual([]);
      expect(body.errors).toEqual([expect.objectContaining({ field: 'date', code })]);
    });

    it('accepts 29 February of a leap year', async () => {
      expect((await createOk(t, simpleDoc('d2', { date: '2028-02-29' }))).invoice.date).toBe('2028-02-29');
    });

    it.each([['RUR'], ['rub'], ['GBP'], [''], [643]])('refuses the currency %j', async (currency) => {
      const body = await refused(simpleDoc('c1', { currency }));
      expect(body.error).toBe('validation_failed');
      expect(body.errors.map((e: { field: string }) => e.field)).toEqual(['currency']);
    });

    it('refuses 0 items and 1001 items, accepts 1000', async () => {
      const none = await refused(simpleDoc('i0', { items: [] }));
      expect(none.missing_fields).toEqual(['items']);
      const line = { name: 'Строка', qty: 1, price: 1.01, vat_pct: 22 };
      const tooMany = await refused(simpleDoc('i1001', { items: Array.from({ length: 1001 }, () => line) }));
      expect(tooMany.errors).toEqual([expect.objectContaining({ field: 'items', code: 'too_many_items' })]);
      const max = await createOk(t, simpleDoc('i1000', { items: Array.from({ length: 1000 }, () => line) }));
      expect(max.totals).toMatchObject({ items_count: 1000, subtotal: 1010, vat_total: 220, total: 1230 });
      expect(await countRows(t, 'invoice_items', max.public_id)).toBe(1000);
    });

    it('reports item errors by path: qty ≤ 0, negative price, VAT out of range, a string for a number', async () => {
      const body = await refused(
        simpleDoc('e1', {
          items: [
            { name: 'A', qty: 0, price: 1 },
            { name: 'B', qty: 1, price: -0.01 },
            { name: 'C', qty: 1, price: 1, vat_pct: 101 },
            { name: 'D', qty: '2', price: 1 },
          ],
        }),
      );
      expect(body.errors.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
        ['items[0].qty', 'out_of_range'],
        ['items[1].price', 'out_of_range'],
        ['items[2].vat_pct', 'out_of_range'],
        ['items[3].qty', 'invalid_type'],
      ]);
    });

    it('refuses the NUL character in stored text (PostgreSQL cannot hold it) instead of failing with 500', async () => {
      const body = await refused({ invoice: simpleDoc('nul\u0000', { buyer: { name: 'ООО\u0000' } }), actor_login: 'a\u0000b' });
      expect(body.error).toBe('validation_failed');
      const all = await refused(simpleDoc('nul1', { buyer: { name: 'ООО\u0000' }, items: [{ name: 'A\u0000', qty: 1, price: 1 }] }));
      expect(all.errors.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
        ['buyer.name', 'invalid_character'],
        ['items[0].name', 'invalid_character'],
      ]);
    });

    it('refuses a client public_id that is not 8–64 URL-safe characters', async () => {
      for (const publicId of ['short', 'has space inside', 'a/b/c/d/e/f', 'x'.repeat(65), 'кириллица-id']) {
        const body = await refused(simpleDoc('p1', { public_id: publicId }));
        expect(body.errors).toEqual([expect.objectContaining({ field: 'public_id', code: 'invalid_format' })]);
      }
    });
  });

  describe('prohibited fields: 400 prohibited_field', () => {
    it('names every offending path in details', async () => {
      const doc = {
        ...referenceDoc(),
        seller_logo_url: 'x',
        seller_stamp_url: null,
        payment_qr_url: 'https://qr.example/x.png',
        signers: [{ name: 'Анна' }, { name: 'Борис', facsimile_url: 'f' }],
        manager: { name: 'Иван', contact_qr_url: 'q' },
        buyer_contact: { name: 'Пётр', contact_qr_url: 'q' },
        website_uri: 'w',
        profile_link: 'l',
        comment: 'https://example.com/page',
        logo: `data:image/png;base64,${PNG_1PX}`,
        stamp: `${PNG_1PX}AAAA`,
      };
      const body = await refused({ invoice: doc });
      expect(body.error).toBe('prohibited_field');
      const paths = [
        'seller_logo_url',
        'seller_stamp_url',
        'payment_qr_url',
        'signers[1].facsimile_url',
        'manager.contact_qr_url',
        'buyer_contact.contact_qr_url',
        'website_uri',
        'profile_link',
        'comment',
        'logo',
        'stamp',
      ];
      for (const path of paths) expect(body.details).toContain(path);
      expect(body.errors.map((e: { field: string }) => e.field).sort()).toEqual([...paths].sort());
    });

    it('reports prohibited fields before missing ones: the client must remove them anyway', async () => {
      const body = await refused({ number: '1', seller_logo_url: 'x' });
      expect(body).toMatchObject({ error: 'prohibited_field', missing_fields: [] });
    });

    it('keeps prose that merely mentions a URL', async () => {
      const body = await createOk(t, simpleDoc('u1', { comment: 'Реквизиты см. на https://example.com/about' }));
      expect(body.invoice.comment).toBe('Реквизиты см. на https://example.com/about');
    });
  });

  describe('warnings: stored and returned, never refusing', () => {
    it('warns about an invalid buyer INN, a seller account that does not match its BIK and an unusual VAT rate', async () => {
      const doc = simpleDoc('w1', {
        seller: { inn: '7707083893', bik: '044525225', account: '40702810238250123017' },
        buyer: { name: 'ООО «Покупатель»', inn: '7707083894' },
        items: [{ name: 'A', qty: 1, price: 100, vat_pct: 18 }],
      });
      const body = await createOk(t, { invoice: doc });
      const expected = [
        ['buyer.inn', 'inn_checksum'],
        ['items[0].vat_pct', 'unusual_vat_rate'],
        ['seller.account', 'account_checksum'],
      ];
      const pairs = (warnings: Array<{ field: string; code: string }>) => warnings.map((w) => [w.field, w.code]).sort();
      expect(body.validation.valid).toBe(true);
      expect(body.validation.errors).toEqual([]);
      expect(pairs(body.validation.warnings)).toEqual(expected);
      expect(body.metadata.validation).toEqual(body.validation);
      // The payload named its own account: the default account's requisites are not mixed in.
      expect(body.invoice.seller).toMatchObject({ bik: '044525225', account: '40702810238250123017' });
      expect(body.invoice.seller).not.toHaveProperty('corr_account');
      const read = (await get(t, body.public_id)).json();
      expect(pairs(read.validation.warnings)).toEqual(expected);
      expect(read.metadata.validation).toEqual(read.validation);
    });

    it('stores a buyer INN of the wrong length as a warning (it must fit the stored columns on both databases)', async () => {
      const body = await createOk(t, simpleDoc('w2', { buyer: { name: 'B', inn: '770708389312345' } }));
      expect(body.validation.warnings).toEqual([expect.objectContaining({ field: 'buyer.inn', code: 'inn_checksum' })]);
      expect(body.invoice.buyer.inn).toBe('770708389312345');
    });
  });

  describe('seller requisites from the organization (contract 4 "Organizations and tariffs")', () => {
    it('fills kpp, address, e-mail and the default bank account when the payload omits them', async () => {
      const body = await createOk(t, simpleDoc('s1', { seller: { inn: '7707083893', kpp: '', address: null } }));
      expect(body.invoice.seller).toEqual({
        inn: '7707083893',
        name: 'ООО «Ромашка»',
        kpp: '773601001',
        address: 'Москва',
        email: 'billing@romashka.example',
        bank_name: 'ПАО Сбербанк',
        bik: '044525225',
        account: '40702810938000000001',
        corr_account: '30101810400000000225',
      });
      expect(body.validation.warnings).toEqual([]);
      expect(body.qr.enabled).toBe(true);
    });

    it('never overwrites requisites the payload gives', async () => {
      const seller = {
        name: 'ООО «Ромашка» (филиал)',
        inn: '7707083893',
        kpp: '770101001',
        address: 'Санкт-Петербург',
        email: 'spb@romashka.example',
        bank_name: 'АО Другой банк',
        bik: '044525700',
        account: '40702810800001400002',
        corr_account: '30101810200000000700',
      };
      const body = await createOk(t, simpleDoc('s2', { seller }));
      expect(body.invoice.seller).toEqual(seller);
      expect(body.validation.warnings).toEqual([]);
      expect(body.qr.payload).toContain('|PersonalAcc=40702810800001400002|BankName=АО Другой банк|BIC=044525700|');
      const read = (await get(t, body.public_id)).json();
      expect(read.invoice.seller).toEqual(seller);
    });

    it("never mixes the default account into another bank's requisites", async () => {
      const seller = { inn: '7707083893', bank_name: 'АО Другой банк', bik: '044525700' };
      const body = await createOk(t, simpleDoc('s4', { seller }));
      expect(body.invoice.seller).toMatchObject(seller);
      expect(body.invoice.seller).not.toHaveProperty('account');
      expect(body.invoice.seller).not.toHaveProperty('corr_account');
      expect(body.qr).toMatchObject({ enabled: false, reason: 'missing_bank_requisites' });
      const corr = await createOk(t, simpleDoc('s5', { seller: { inn: '7707083893', corr_account: '30101810200000000700' } }));
      expect(corr.invoice.seller).not.toHaveProperty('account');
      expect(corr.invoice.seller).not.toHaveProperty('bik');
    });

    it('fills only what is missing when the payload gives some requisites', async () => {
      const body = await createOk(t, simpleDoc('s3', { seller: { inn: '7707083893', kpp: '770101001', account: '40702810938000000001' } }));
      expect(body.invoice.seller).toMatchObject({
        kpp: '770101001',
        address: 'Москва',
        account: '40702810938000000001',
        bik: '044525225',
        corr_account: '30101810400000000225',
      });
    });
  });

  describe('property: refused writes are 4xx in the error shape and write nothing', () => {
    /** `call()` has already checked the body against the published ErrorBody schema. */
    function expectRefusal(res: LightMyRequestResponse): void {
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body).toBeLessThan(500);
      const body = res.json();
      expect(body.ok).toBe(false);
      expect(typeof body.error).toBe('string');
      if (body.error === 'validation_failed') expect(Array.isArray(body.missing_fields)).toBe(true);
    }

    async function counts(): Promise<number[]> {
      return Promise.all((['invoices', 'invoice_items', 'share_links', 'invoice_revisions'] as const).map((table) => countRows(t, table)));
    }

    it('POST: malformed documents and envelopes', async () => {
      const before = await counts();
      await fc.assert(
        fc.asyncProperty(malformedCreateBody, async (body) => {
          expectRefusal(await post(t, JSON.stringify(body), { 'content-type': 'application/json' }));
        }),
        { numRuns: RUNS },
      );
      expect(await counts()).toEqual(before);
    });

    it('POST: any JSON text, and text that is not JSON', async () => {
      const before = await counts();
      await fc.assert(
        fc.asyncProperty(anyJsonText, async (text) => {
          expectRefusal(await post(t, text, { 'content-type': 'application/json' }));
        }),
        { numRuns: RUNS },
      );
      expect(await counts()).toEqual(before);
    });

    it('PUT: malformed documents and envelopes leave the document as it was', async () => {
      const target = await createOk(t, { invoice: simpleDoc('put-target') });
      const id = target.public_id as string;
      const stored = await storedRow(t, id);
      const before = await counts();
      await fc.assert(
        fc.asyncProperty(fc.oneof(malformedUpdateBody, anyJsonText.map((text) => ({ raw: text }))), async (body) => {
          const payload = typeof body === 'object' && body !== null && 'raw' in body ? String(body.raw) : JSON.stringify(body);
          expectRefusal(await put(t, id, payload, { 'content-type': 'application/json' }));
        }),
        { numRuns: RUNS },
      );
      expect(await counts()).toEqual(before);
      expect(await storedRow(t, id)).toEqual(stored);
    });
  });
});
