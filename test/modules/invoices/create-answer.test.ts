/**
 * A create's answer says exactly what a GET of the stored document says, whatever its strings
 * and figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createOk, get, referenceDoc, simpleDoc } from './write-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const documents: Array<[string, Record<string, unknown>]> = [
  ['the reference document', referenceDoc()],
  ['a minimal one', simpleDoc('CA-2')],
  ['prices with VAT, a custom title, no QR, odd strings', simpleDoc('CA-3', {
    prices_include_vat: true,
    document_title: '  Счёт "особый" \\ №\u00a03  ',
    show_payment_qr: false,
    purpose: 'Оплата 😀 по "счёту"',
    items: [
      { name: 'Нулевая ставка', qty: 0.5, price: 1000.005, vat_pct: 0 },
      { name: 'Без НДС', qty: 3, unit: 'шт', price: 0.01, vat_pct: null },
      { name: 'Работа', qty: 1e-3, price: 123456789.99, vat_pct: 22 },
    ],
  })],
  ['another currency, a buyer without INN, extra fields', simpleDoc('CA-4', { currency: 'USD', buyer: { name: 'Globex', address: 'Springfield' }, comment: 'x', tags: ['a', 'b'] })],
];

describe('the create answer is what a GET of the stored document answers', () => {
  it.each(documents)('%s', async (_name, doc) => {
    const created = await createOk(t, { invoice: doc });
    const res = await get(t, created.public_id);
    expect(res.statusCode).toBe(200);
    const read = res.json();
    for (const part of ['invoice', 'validation', 'totals', 'qr', 'document', 'share_links', 'status'] as const) {
      expect(created[part], part).toEqual(read[part]);
    }
    const { api_key_name: _n, ...meta } = created.metadata;
    expect(meta).toEqual(expect.objectContaining({ document_title: read.metadata.document_title, validation: read.metadata.validation }));
  });
});
