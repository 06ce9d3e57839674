import { describe, expect, it } from 'vitest';
import { renderInvoicePdf } from '../../../src/modules/rendering/invoice-pdf.js';
import { toPrintModel, type InvoicePrintModel } from '../../../src/modules/invoices/read/print-model.js';
import { decodeQrPng, pdfPageCount, pdfPagePng, pdfText } from './native-tools.js';
import { EXPECTED_QR_PAYLOAD, responseFor, sampleDocument, sampleResponse } from './print-fixtures.js';

const sample = (): InvoicePrintModel => toPrintModel(sampleResponse());

describe('renderInvoicePdf', () => {
  it('prints the Russian print form: bank block, title, parties, items, totals, words and signers', async () => {
    const pdf = await renderInvoicePdf(sample());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = await pdfText(pdf);
    for (const expected of [
      'ПАО СБЕРБАНК',
      'Банк получателя',
      'БИК 044525225',
      'Сч. № 30101810400000000225',
      'ИНН 7701234560 КПП 770101001 Сч. № 40702810138250123017',
      'Получатель',
      'Счёт на оплату № 15 от 2 марта 2026 г.',
      'ООО «Три кита», ИНН 7701234560, КПП 770101001, г. Москва, ул. Примерная,',
      'ООО «Покупатель», ИНН 7736207543, КПП 773601001',
      '№ Товары (работы, услуги) Кол-во Ед. Цена Сумма',
      '1 Консультационные услуги 3 ч 1 500,00 4 500,00',
      '2 Лицензия на программное обеспечение 1 шт 9 999,99 9 999,99',
      '3 Доставка 2,5 кг 400,00 1 000,00',
      'Итого: 16 499,99',
      'Сумма НДС 22%: 3 190,00',
      'Сумма НДС 10%: 100,00',
      'Всего к оплате: 19 789,99',
      'Всего наименований 4, на сумму 19 789,99 руб.',
      'Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек',
      'Руководитель Смирнова Анна Петровна',
      'Генеральный директор',
      'Бухгалтер Иванов Пётр Сергеевич',
      'М.П.',
      'QR-код для оплаты',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).toMatch(/Поставщик[\s\S]*\(Исполнитель\):/);
    expect(text).toMatch(/Покупатель[\s\S]*\(Заказчик\):/);
  });

  it('is deterministic: the same model gives byte-identical output, dated by the document', async () => {
    const a = await renderInvoicePdf(sample());
    const b = await renderInvoicePdf(sample());
    expect(a.equals(b)).toBe(true);
    const raw = a.toString('latin1');
    expect(raw).toContain('(D:20260302000000Z)');
    const other = await renderInvoicePdf(toPrintModel(responseFor({ ...sampleDocument(), date: '2026-03-03' })));
    expect(other.equals(a)).toBe(false);
    expect(other.toString('latin1')).toContain('(D:20260303000000Z)');
  });

  it('draws the payment QR so that a scan of the printed page gives the exact payload', async () => {
    const pdf = await renderInvoicePdf(sample());
    const page = await pdfPagePng(pdf, 1, 200);
    expect(await decodeQrPng(page)).toBe(EXPECTED_QR_PAYLOAD);
  });

  it('prints "В том числе НДС" for prices with VAT, "Без налога (НДС)" without VAT, and the due date', async () => {
    const included = await pdfText(
      await renderInvoicePdf(
        toPrintModel(responseFor({ ...sampleDocument(), prices_include_vat: true, items: [{ name: 'Услуга', qty: 1, price: 1000, vat_pct: 22 }] })),
      ),
    );
    expect(included).toContain('В том числе НДС 22%: 180,33');
    expect(included).toContain('Итого: 1 000,00');
    expect(included).toContain('Одна тысяча рублей 00 копеек');

    const without = await pdfText(
      await renderInvoicePdf(
        toPrintModel(
          responseFor({ ...sampleDocument(), due_date: '2026-03-12', basis: 'Договор № 7', items: [{ name: 'Услуга', qty: 2, price: 500.05, vat_pct: null }] }),
        ),
      ),
    );
    expect(without).toContain('Без налога (НДС) -');
    expect(without).toContain('Счёт действителен к оплате до 12.03.2026.');
    expect(without).toContain('Основание: Договор № 7');
    expect(without).toContain('Одна тысяча рублей 10 копеек');
  });

  it('names other currencies and prints no QR for them', async () => {
    const text = await pdfText(await renderInvoicePdf(toPrintModel(responseFor({ ...sampleDocument(), currency: 'EUR' }))));
    expect(text).toContain('на сумму 19 789,99 евро');
    expect(text).toContain('Девятнадцать тысяч семьсот восемьдесят девять евро 99 евроцентов');
    expect(text).not.toContain('QR-код для оплаты');
  });

  it('breaks a 1000-line document over pages, repeating the table header, in reasonable time', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({
      name: i % 50 === 0 ? `Позиция ${i + 1} с очень длинным наименованием, которое переносится на вторую и третью строку ячейки таблицы` : `Позиция ${i + 1}`,
      qty: 1 + (i % 7),
      unit: 'шт',
      // Built as a decimal literal: 100 + i / 100 in floats would give prices like 109.96000000000001.
      price: Number(`${100 + Math.floor(i / 100)}.${String(i % 100).padStart(2, '0')}`),
      vat_pct: 22,
    }));
    const model = toPrintModel(responseFor({ ...sampleDocument(), items }));
    const started = performance.now();
    const pdf = await renderInvoicePdf(model);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(15_000);

    const pages = await pdfPageCount(pdf);
    expect(pages).toBeGreaterThan(15);
    const text = await pdfText(pdf);
    const last = model.items[999];
    expect(text).toContain(`1000 Позиция 1000 ${last?.qty} шт ${last?.price} ${last?.amount}`);
    expect(last?.price).toBe('109,99');
    expect(text.split('№ Товары (работы, услуги) Кол-во Ед. Цена Сумма').length - 1).toBe(pages);
    expect(text).toContain(`страница ${pages} из ${pages}`);
    expect(text).toContain(`Всего наименований 1000, на сумму ${model.totals.total} руб.`);
    for (const n of [1, 2, 499, 500, 999, 1000]) expect(text).toMatch(new RegExp(`\\n ?${n} Позиция ${n}[ \\n]`));
  }, 60_000);

  it('renders hostile and long text without failing, as plain text', async () => {
    const hostile = '<script>alert(1)</script>"\'><img src=x onerror=alert(1)>';
    const model = toPrintModel(
      responseFor({
        ...sampleDocument(),
        number: `15${hostile}`,
        buyer: { name: `${hostile} ${'Очень длинное наименование '.repeat(20)}`, inn: '7736207543' },
        items: [{ name: `${hostile}\nвторая строка`, qty: 1, price: 1, vat_pct: null }],
      }),
    );
    const text = await pdfText(await renderInvoicePdf(model));
    expect(text).toContain('<script>alert(1)</script>');
    expect(text).toContain('вторая строка');
  });
});
