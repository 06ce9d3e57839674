import { describe, expect, it } from 'vitest';
import type { InvoiceDetail } from '../../../src/modules/invoices/invoice.schemas.js';
import { toPrintModel } from '../../../src/modules/invoices/read/print-model.js';
import {
  currencyShortRu,
  formatDateLongRu,
  formatDateShortRu,
  formatMoneyRu,
  formatPercentRu,
  formatPriceRu,
  formatQtyRu,
} from '../../../src/shared/ru-format.js';
import { EXPECTED_QR_PAYLOAD, responseFor, sampleDocument, sampleResponse } from '../rendering/print-fixtures.js';

describe('Russian formatting', () => {
  it('formats money with grouped thousands and two decimals, half-up, without float arithmetic', () => {
    expect(formatMoneyRu(19789.99)).toBe('19 789,99');
    expect(formatMoneyRu('990')).toBe('990,00');
    expect(formatMoneyRu('1234567.5')).toBe('1 234 567,50');
    expect(formatMoneyRu('0.385')).toBe('0,39');
    expect(formatMoneyRu(1.005)).toBe('1,01'); // String(1.005) is "1.005": rounded as a decimal, not as 1.00499…
    expect(formatMoneyRu('-1500')).toBe('-1 500,00');
    expect(formatMoneyRu(0)).toBe('0,00');
  });

  it('formats prices, quantities and rates', () => {
    expect(formatPriceRu(1500)).toBe('1 500,00');
    expect(formatPriceRu(0.1234)).toBe('0,1234');
    expect(formatPriceRu(9999.9)).toBe('9 999,90');
    expect(formatQtyRu(2.5)).toBe('2,5');
    expect(formatQtyRu(1000)).toBe('1 000');
    expect(formatQtyRu(0.000001)).toBe('0,000001');
    expect(formatPercentRu(22)).toBe('22%');
    expect(formatPercentRu(7.5)).toBe('7,5%');
  });

  it('formats dates and currencies', () => {
    expect(formatDateLongRu('2026-03-02')).toBe('2 марта 2026 г.');
    expect(formatDateLongRu('2026-12-31')).toBe('31 декабря 2026 г.');
    expect(formatDateLongRu('not a date')).toBe('not a date');
    expect(formatDateShortRu('2026-03-02')).toBe('02.03.2026');
    expect(currencyShortRu('RUB')).toBe('руб.');
    expect(currencyShortRu('USD')).toBe('долл. США');
    expect(currencyShortRu('XYZ')).toBe('XYZ');
  });
});

describe('toPrintModel', () => {
  it('maps the API response of the domain reference vector', () => {
    const model = toPrintModel(sampleResponse());
    expect(model.title).toBe('Счёт на оплату № 15 от 2 марта 2026 г.');
    expect(model.document_title).toBe('Счёт № 15 от 02.03.2026');
    expect(model.seller).toEqual({
      name: 'ООО «Три кита»',
      inn: '7701234560',
      kpp: '770101001',
      address: 'г. Москва, ул. Примерная, д. 1',
      bank_name: 'ПАО СБЕРБАНК',
      bik: '044525225',
      account: '40702810138250123017',
      corr_account: '30101810400000000225',
    });
    expect(model.buyer.inn).toBe('7736207543');
    expect(model.items.map((i) => [i.no, i.qty, i.unit, i.price, i.amount, i.vat])).toEqual([
      [1, '3', 'ч', '1 500,00', '4 500,00', '22%'],
      [2, '1', 'шт', '9 999,99', '9 999,99', '22%'],
      [3, '2,5', 'кг', '400,00', '1 000,00', '10%'],
      [4, '1', 'усл. ед', '1 000,00', '1 000,00', 'Без НДС'],
    ]);
    expect(model.totals).toEqual({
      items_sum: '16 499,99',
      subtotal: '16 499,99',
      vat_total: '3 290,00',
      total: '19 789,99',
      vat_lines: [
        { label: 'Сумма НДС 22%', amount: '3 190,00' },
        { label: 'Сумма НДС 10%', amount: '100,00' },
      ],
      without_vat: false,
      prices_include_vat: false,
    });
    expect(model.amount_in_words).toBe('Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек');
    expect(model.summary).toBe('Всего наименований 4, на сумму 19 789,99 руб.');
    expect(model.items_count).toBe(4);
    expect(model.qr_payload).toBe(EXPECTED_QR_PAYLOAD);
    expect(model.signers.map((s) => [s.label, s.name])).toEqual([
      ['Руководитель', 'Смирнова Анна Петровна'],
      ['Бухгалтер', 'Иванов Пётр Сергеевич'],
    ]);
    expect(model.status.seller_label).toBe('Выставлен');
  });

  it('labels VAT extracted from prices "В том числе НДС" and sums the gross lines as Итого', () => {
    const doc = { ...sampleDocument(), prices_include_vat: true, items: [{ name: 'Услуга', qty: 1, price: 1220, vat_pct: 22 }] };
    const model = toPrintModel(responseFor(doc));
    expect(model.totals.vat_lines).toEqual([{ label: 'В том числе НДС 22%', amount: '220,00' }]);
    expect(model.totals.items_sum).toBe('1 220,00');
    expect(model.totals.total).toBe('1 220,00');
    expect(model.totals.subtotal).toBe('1 000,00');
  });

  it('says "Без налога (НДС)" when no line carries a rate', () => {
    const doc = { ...sampleDocument(), items: [{ name: 'Услуга', qty: 3, price: 0.1, vat_pct: null }] };
    const model = toPrintModel(responseFor(doc));
    expect(model.totals.without_vat).toBe(true);
    expect(model.totals.vat_lines).toEqual([]);
    expect(model.totals.total).toBe('0,30');
    expect(model.amount_in_words).toBe('Ноль рублей 30 копеек');
  });

  it('names other currencies and has no payment QR for them', () => {
    const doc = { ...sampleDocument(), currency: 'USD' };
    const model = toPrintModel(responseFor(doc));
    expect(model.currency_short).toBe('долл. США');
    expect(model.amount_in_words).toMatch(/долларов 99 центов$/);
    expect(model.qr_payload).toBeNull();
    expect(model.summary).toBe('Всего наименований 4, на сумму 19 789,99 долл. США');
  });

  it('gives a sole proprietor one "Предприниматель" line, a company two lines to sign by hand', () => {
    const ip = toPrintModel(responseFor({ ...sampleDocument(), signers: undefined, seller: { ...(sampleDocument().seller as object), inn: '500100732259' } }));
    expect(ip.signers).toEqual([{ role: 'entrepreneur', label: 'Предприниматель', name: '', position: '' }]);
    const company = toPrintModel(responseFor({ ...sampleDocument(), signers: undefined }));
    expect(company.signers.map((s) => s.label)).toEqual(['Руководитель', 'Бухгалтер']);
  });

  it('orders signers director first and keeps due date, basis, comment and purpose', () => {
    const doc = {
      ...sampleDocument(),
      signers: [
        { role: 'accountant', name: 'Б' },
        { role: 'director', name: 'А' },
      ],
      due_date: '2026-03-12',
      basis: 'Договор № 7 от 01.02.2026',
      comment: 'Спасибо за заказ',
      purpose: 'Оплата услуг',
    };
    const model = toPrintModel(responseFor(doc));
    expect(model.signers.map((s) => s.name)).toEqual(['А', 'Б']);
    expect(model.due_date_text).toBe('12.03.2026');
    expect(model.basis).toBe('Договор № 7 от 01.02.2026');
    expect(model.comment).toBe('Спасибо за заказ');
    expect(model.purpose).toBe('Оплата услуг');
  });

  it('computes the same figures when a detail response carries no totals', () => {
    const full = sampleResponse();
    const { totals: _totals, qr: _qr, ...rest } = full;
    const detail: InvoiceDetail = rest;
    const model = toPrintModel(detail);
    expect(model.totals).toEqual(toPrintModel(full).totals);
    expect(model.amount_in_words).toBe(toPrintModel(full).amount_in_words);
    expect(model.qr_payload).toBeNull();
  });
});
