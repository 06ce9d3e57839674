/**
 * The payment QR and the requisites as a Russian accountant signs them off, end to
 * end through the API: the `qr` block, the share link's qr.png, and the QR drawn in the PDF
 * (rasterized with pdftoppm, decoded with zbarimg as raw bytes), the PDF text via pdftotext.
 */
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { findQrPngBytes, pdfPagePng, pdfText } from '../rendering/native-tools.js';
import { ACME, buildSharingApp, createDocument, request } from '../sharing/link-helpers.js';
import { put, simpleDoc } from './write-helpers.js';

const LONG_NAME = 'ОБЩЕСТВО С ОГРАНИЧЕННОЙ ОТВЕТСТВЕННОСТЬЮ «ТОРГОВЫЙ ДОМ СЕВЕРНАЯ ЗВЕЗДА»';
const LONG_BANK = 'ФИЛИАЛ «ЦЕНТРАЛЬНЫЙ» БАНКА ВТБ (ПАО)';
const BANK = { bank_name: 'ПАО СБЕРБАНК', bik: '044525225', account: '40702810938000000001', corr_account: '30101810400000000225' };

function seller(extra: Record<string, unknown> = {}) {
  return { name: 'ООО «Ромашка»', inn: '7707083893', kpp: '770701001', ...BANK, ...extra };
}

/** The bytes of the QR in the document's PDF (page 1), or null when the page has none. */
async function pdfQr(t: TestApp, doc: Record<string, any>): Promise<{ bytes: Buffer | null; text: string }> {
  const pdf = await request(t, doc.document_url);
  expect(pdf.statusCode).toBe(200);
  return { bytes: await findQrPngBytes(await pdfPagePng(pdf.rawPayload, 1, 200)), text: await pdfText(pdf.rawPayload) };
}

/** The share link's qr.png, whether or not `qr.url` is given. */
function qrPngUrl(doc: Record<string, any>): string {
  return `${doc.share_links.buyer_url}/qr.png`;
}

function purposeOf(payload: string): string {
  const separator = payload.charAt(7);
  return payload.split(separator).find((p) => p.startsWith('Purpose='))?.slice('Purpose='.length) ?? '';
}

describe('payment QR', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildSharingApp();
  });
  afterAll(async () => t.close());

  it('prints no QR on a paid or cancelled invoice: API, qr.png, qr.svg, PDF; the PDF is stamped', async () => {
    for (const [status, reason, label] of [
      ['paid', 'invoice_paid', 'Оплачен'],
      ['cancelled', 'invoice_cancelled', 'Отменён'],
    ] as const) {
      const issued = await createDocument(t, simpleDoc(`st-${status}`, { seller: seller() }));
      expect(issued.qr.enabled).toBe(true);
      expect((await request(t, qrPngUrl(issued))).statusCode).toBe(200);
      const moved = await put(t, issued.public_id, { invoice: simpleDoc(`st-${status}`, { seller: seller(), seller_status: status }) }, ACME);
      expect(moved.statusCode).toBe(200);
      const doc = moved.json();
      expect(doc.qr).toMatchObject({ enabled: false, reason, payload: '', url: '', svg_url: '', encoding: '' });
      expect((await request(t, qrPngUrl(doc))).statusCode).toBe(404);
      expect((await request(t, `${doc.share_links.buyer_url}/qr.svg`)).statusCode).toBe(404);
      const { bytes, text } = await pdfQr(t, doc);
      expect(bytes).toBeNull();
      expect(text).toContain(label);
      expect(text).not.toContain('QR-код для оплаты');
    }
  });

  it('prints no QR for a total of zero', async () => {
    const doc = await createDocument(t, simpleDoc('zero', { seller: seller(), items: [{ name: 'Бесплатно', qty: 1, price: 0, vat_pct: 22 }] }));
    expect(doc.qr).toMatchObject({ enabled: false, reason: 'zero_total', payload: '' });
    expect((await request(t, qrPngUrl(doc))).statusCode).toBe(404);
    expect((await pdfQr(t, doc)).bytes).toBeNull();
  });

  it('encodes the document’s purpose, the one the PDF prints, cut to 210 characters', async () => {
    const purpose = 'Оплата по договору № 7/2026 за март, без НДС';
    const doc = await createDocument(t, simpleDoc('purpose', { seller: seller(), purpose }));
    expect(purposeOf(doc.qr.payload)).toBe(purpose);
    const { bytes, text } = await pdfQr(t, doc);
    expect(bytes?.toString('utf8')).toBe(doc.qr.payload);
    expect(text).toContain(`Назначение платежа: ${purpose}`);
    const png = await findQrPngBytes((await request(t, qrPngUrl(doc))).rawPayload);
    expect(png?.toString('utf8')).toBe(doc.qr.payload);

    const long = 'Оплата '.repeat(40).trim();
    const cut = await createDocument(t, simpleDoc('purpose-long', { seller: seller(), purpose: long }));
    expect(purposeOf(cut.qr.payload)).toBe(Array.from(long).slice(0, 210).join('').trimEnd());
    const generated = await createDocument(t, simpleDoc('purpose-none', { seller: seller() }));
    expect(purposeOf(generated.qr.payload)).toBe('Оплата по счёту № purpose-none от 02.03.2026, в т.ч. НДС 22.00 руб.');
  });

  it('keeps UTF-8 for the 295-byte name and bank, and falls back to windows-1251 bytes beyond 300', async () => {
    const fits = await createDocument(t, simpleDoc('cp-utf8', { seller: seller({ name: LONG_NAME, bank_name: LONG_BANK }) }));
    expect(fits.qr).toMatchObject({ enabled: true, encoding: 'utf-8' });
    expect(fits.qr.payload.startsWith(`ST00012|Name=${LONG_NAME}|`)).toBe(true);

    const name = `${LONG_NAME} ФИЛИАЛ`;
    const doc = await createDocument(t, simpleDoc('cp-1251', { seller: seller({ name, bank_name: LONG_BANK }) }));
    expect(doc.qr).toMatchObject({ enabled: true, encoding: 'windows-1251', reason: '' });
    expect(doc.qr.payload.startsWith(`ST00011|Name=${name}|`)).toBe(true);
    const expected = iconv.encode(doc.qr.payload, 'win1251');
    const png = await findQrPngBytes((await request(t, qrPngUrl(doc))).rawPayload);
    expect(png?.equals(expected)).toBe(true);
    const { bytes } = await pdfQr(t, doc);
    expect(bytes?.equals(expected)).toBe(true);
  });

  it('prints no QR when neither encoding fits, naming the field to shorten', async () => {
    const name = `${LONG_NAME} ФИЛИАЛ ✓`;
    const doc = await createDocument(t, simpleDoc('cp-none', { seller: seller({ name, bank_name: LONG_BANK }) }));
    expect(doc.qr).toMatchObject({ enabled: false, reason: 'payload_too_long', payload: '' });
    expect(doc.qr.warnings).toEqual([expect.objectContaining({ field: 'seller.name', code: 'qr_payload_too_long' })]);
    expect(doc.qr.warnings[0].message).toMatch(/shorten Name/);
    expect((await pdfQr(t, doc)).bytes).toBeNull();
  });

  it.each([
    ['a 19-digit account', { account: '4070281093800000000' }, 'seller.account'],
    ['a BIK of letters', { bik: 'O4452522S' }, 'seller.bik'],
    ['an account failing the BIK control key', { account: '40702810938000000002' }, 'seller.account'],
    ['a corr. account of another bank', { corr_account: '30101810200000000700' }, 'seller.corr_account'],
  ])('refuses the QR for %s with invalid_requisites, saying why', async (_name, change, field) => {
    const doc = await createDocument(t, simpleDoc(`bad-${field}-${Object.values(change)[0]}`, { seller: seller(change) }));
    expect(doc.qr).toMatchObject({ enabled: false, reason: 'invalid_requisites', payload: '' });
    expect(doc.qr.warnings.map((w: { field: string }) => w.field)).toContain(field);
    expect(doc.validation.warnings.map((w: { field: string }) => w.field)).toContain(field);
    expect((await request(t, qrPngUrl(doc))).statusCode).toBe(404);
    expect((await pdfQr(t, doc)).bytes).toBeNull();
  });

  it('words the VAT from the rates: 0 % is «НДС 0 %», a VAT rounding to 0.00 is still VAT, no rate is «НДС не облагается»', async () => {
    const zero = await createDocument(t, simpleDoc('vat0', { seller: seller(), items: [{ name: 'Экспорт', qty: 1, price: 100, vat_pct: 0 }] }));
    expect(purposeOf(zero.qr.payload)).toBe('Оплата по счёту № vat0 от 02.03.2026, НДС 0 %');
    const tiny = await createDocument(t, simpleDoc('vat-tiny', { seller: seller(), items: [{ name: 'Мелочь', qty: 1, price: 0.02, vat_pct: 22 }] }));
    expect(tiny.totals.vat_total).toBe(0);
    expect(purposeOf(tiny.qr.payload)).toBe('Оплата по счёту № vat-tiny от 02.03.2026, в т.ч. НДС 0.00 руб.');
    const none = await createDocument(t, simpleDoc('vat-none', { seller: seller(), items: [{ name: 'Услуга', qty: 1, price: 100, vat_pct: null }] }));
    expect(purposeOf(none.qr.payload)).toBe('Оплата по счёту № vat-none от 02.03.2026, НДС не облагается');
    const tinyPdf = await pdfQr(t, tiny);
    expect(tinyPdf.bytes?.toString('utf8')).toBe(tiny.qr.payload);
    expect(tinyPdf.text).not.toContain('Без налога (НДС)');
  });

  it('accepts a treasury payee (BIK 017003983, ЕКС 40102810445370000059, treasury account 03…) without warnings', async () => {
    const treasury = { bank_name: 'ОКЦ № 2 ГУ Банка России по ЦФО//УФК по г. Москве', bik: '017003983', account: '03100643000000018500', corr_account: '40102810445370000059' };
    const doc = await createDocument(t, simpleDoc('treasury', { seller: seller(treasury) }));
    expect(doc.validation.warnings).toEqual([]);
    expect(doc.qr).toMatchObject({ enabled: true, reason: '' });
    expect(doc.qr.payload).toContain('|PersonalAcc=03100643000000018500|');
    expect(doc.qr.payload).toContain('|BIC=017003983|CorrespAcc=40102810445370000059|');
    expect((await pdfQr(t, doc)).bytes?.toString('utf8')).toBe(doc.qr.payload);
  });

  it('prints, encodes and spells a total above 10^15 exactly, from the *_minor_units strings', async () => {
    // 3333.333333 × 999999999999.9999 = 3333333332999.99966… per unit; the line is 3 333 333 332 999 999,67.
    const doc = await createDocument(t, simpleDoc('huge', { seller: seller(), items: [{ name: 'Много', qty: 3333.333333, price: 999999999999.9999, vat_pct: null }] }));
    expect(doc.totals.total_minor_units).toBe('333333333299999967');
    expect(doc.totals.subtotal_minor_units).toBe('333333333299999967');
    expect(doc.totals.vat_total_minor_units).toBe('0');
    expect(doc.totals.lines[0].amount_minor_units).toBe('333333333299999967');
    expect(doc.totals.vat_breakdown[0].gross_minor_units).toBe('333333333299999967');
    // The JSON number cannot hold it: the figures printed come from the strings.
    expect(String(doc.totals.total)).not.toBe('3333333332999999.67');
    expect(doc.qr.payload).toContain('|Sum=333333333299999967|');
    const { bytes, text } = await pdfQr(t, doc);
    expect(bytes?.toString('utf8')).toBe(doc.qr.payload);
    expect(text).toContain('Всего к оплате: 3 333 333 332 999 999,67');
    expect(text).toContain('на сумму 3 333 333 332 999 999,67 руб.');
    expect(doc.totals.amount_in_words).toMatch(/67 копеек$/);
  });

  it('prints no QR when the sum needs more than GOST’s 18 digits of kopecks, and still prints the exact total', async () => {
    const doc = await createDocument(t, simpleDoc('too-big', { seller: seller(), items: [{ name: 'Всё', qty: 1e9, price: 1e12, vat_pct: null }] }));
    expect(doc.totals.total_minor_units).toBe(`1${'0'.repeat(23)}`);
    expect(doc.qr).toMatchObject({ enabled: false, reason: 'payload_too_long', payload: '' });
    expect(doc.qr.warnings).toEqual([expect.objectContaining({ field: 'items', code: 'qr_sum_too_long' })]);
    const { bytes, text } = await pdfQr(t, doc);
    expect(bytes).toBeNull();
    expect(text).toContain('Всего к оплате: 1 000 000 000 000 000 000 000,00');
  });

  it('warns about bad OGRN control digits of seller and buyer', async () => {
    const doc = await createDocument(
      t,
      simpleDoc('ogrn', { seller: seller({ ogrn: '1027700132196' }), buyer: { name: 'ИП Петров', ogrn: '304500116000158' } }),
    );
    const codes = doc.validation.warnings.map((w: { field: string; code: string }) => [w.field, w.code]);
    expect(codes).toContainEqual(['seller.ogrn', 'ogrn_checksum']);
    expect(codes).toContainEqual(['buyer.ogrn', 'ogrn_checksum']);
    const good = await createDocument(t, simpleDoc('ogrn-ok', { seller: seller({ ogrn: '1027700132195' }), buyer: { name: 'ИП Петров', ogrn: '304500116000157' } }));
    expect(good.validation.warnings).toEqual([]);
  });

  it('names CNY by its code after figures', async () => {
    const doc = await createDocument(t, simpleDoc('cny', { seller: seller(), currency: 'CNY' }));
    const { text } = await pdfQr(t, doc);
    expect(text).toContain('на сумму 122,00 CNY');
    expect(text).not.toContain('кит. юан.');
  });
});
