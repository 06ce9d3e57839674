import { describe, expect, it } from 'vitest';
import { validateInvoice } from '../../../src/modules/invoices/rules/validation.js';
import {
  editFormValues,
  mergeEditedDocument,
  NUMBER_FORMAT_MESSAGE,
  parseDecimalInput,
  parseEditForm,
  parseEditFormDetailed,
  renderPortalEditPage,
} from '../../../src/modules/sharing/pages/index.js';
import { formFields } from './page-fixtures.js';

/** A document as the API stores it, with every field the form edits. */
function fullDocument(): Record<string, unknown> {
  return {
    number: 'СЧ-15/2026',
    date: '2026-03-02',
    currency: 'RUB',
    invoice_direction: 'outgoing',
    due_date: '2026-03-12',
    seller_status: 'issued',
    purpose: 'Оплата по договору № 7',
    comment: 'Строка 1\nСтрока 2 с "кавычками" & <угловыми>',
    buyer_edo_id: '2BM-7736207543-773601001',
    prices_include_vat: false,
    public_share_enabled: true,
    show_payment_qr: false,
    seller: {
      name: 'ООО «Ромашка»',
      inn: '7707083893',
      kpp: '773601001',
      address: 'г. Москва',
      email: 'sales@romashka.example',
      bank_name: 'ПАО Сбербанк',
      bik: '044525225',
      account: '40702810938000000001',
      corr_account: '30101810400000000225',
    },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Тверь', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500.5, vat_pct: 22 },
      { name: 'Доставка', qty: 2.5, unit: 'кг', price: 0.1234, vat_pct: 10 },
      { name: 'Обучение', qty: 1000, unit: 'усл. ед', price: 1234567.89, vat_pct: null },
      { name: 'Лицензия', qty: 0.000001, unit: 'шт', price: 0, vat_pct: 0 },
    ],
    api_recipients: [{ email: 'acc@example.com', name: 'Бухгалтерия', position: 'Главный бухгалтер' }],
    signers: [
      { role: 'director', name: 'Смирнова А. П.', position: 'Генеральный директор' },
      { role: 'accountant', name: 'Иванов П. С.', position: 'Бухгалтер' },
    ],
  };
}

function renderEdit(document: Record<string, unknown>, extra: Partial<Parameters<typeof renderPortalEditPage>[0]> = {}): string {
  return renderPortalEditPage({ title: 'Счёт', document, csrfToken: 'csrf-1', actionUrl: '/p/edit/t', cancelUrl: '/p/view/t', etag: '"inv.3"', ...extra });
}

describe('parseDecimalInput', () => {
  it.each([
    ['1 500,50', 1500.5],
    ['1\u00a0500,50', 1500.5],
    ['1\u202f500', 1500],
    ['1500.50', 1500.5],
    ['1.500,50', 1500.5],
    ['1,500.50', 1500.5],
    ['2,5', 2.5],
    [',5', 0.5],
    ['0', 0],
    ['-0', 0],
    ['-3', -3],
    ['9999,99', 9999.99],
    ['1,15', 1.15],
  ])('%s → %s', (input, expected) => {
    expect(parseDecimalInput(input)).toBe(expected);
  });

  it.each(['', 'abc', '1e5', '0x10', '1,2,3', '1 500,50 руб', 'Infinity', '12345678901234567890', '0,12345678901234567'])('refuses %j', (input) => {
    expect(parseDecimalInput(input)).toBeNull();
  });
});

describe('parseEditForm', () => {
  it('round-trips a document through the rendered edit page', () => {
    const doc = fullDocument();
    const fields = formFields(renderEdit(doc));
    expect(fields._csrf).toBe('csrf-1');
    expect(fields._etag).toBe('"inv.3"');
    expect(parseEditForm(fields)).toEqual(doc);
  });

  it('round-trips through the form values directly (flags off, empty optional fields)', () => {
    const doc = {
      number: '1',
      date: '2026-01-01',
      currency: 'USD',
      invoice_direction: 'incoming',
      seller_status: 'draft',
      prices_include_vat: true,
      public_share_enabled: false,
      show_payment_qr: false,
      seller: { inn: '7707083893' },
      buyer: { name: 'B' },
      items: [{ name: 'X', qty: 1, price: 2, vat_pct: null }],
    };
    const { values } = editFormValues(doc);
    // A browser does not post unchecked boxes.
    const posted = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
    expect(parseEditForm(posted)).toEqual(doc);
    expect(parseEditForm(formFields(renderEdit(doc)))).toEqual(doc);
  });

  it('the parsed document passes the API validation as it is', () => {
    const result = validateInvoice(parseEditForm(formFields(renderEdit(fullDocument()))));
    expect(result.ok).toBe(true);
  });

  it('drops blank and removed rows and renumbers the rest in posted order', () => {
    const { invoice, errors } = parseEditFormDetailed({
      number: '7',
      'items[0].name': 'A',
      'items[0].qty': '1',
      'items[0].price': '10',
      'items[0].vat_pct': '22',
      'items[1].name': '',
      'items[1].qty': '',
      'items[1].price': '',
      'items[1].vat_pct': '22',
      'items[2].name': 'Removed',
      'items[2].qty': '1',
      'items[2].price': '1',
      'items[2]._remove': '1',
      'items[12].name': 'Added by script',
      'items[12].qty': '1 000',
      'items[12].price': 'много',
      'items[12].vat_pct': '',
      'signers[0].role': 'director',
      'signers[0].name': '',
      'api_recipients[3].email': 'x@example.com',
    });
    expect(invoice.items).toEqual([
      { name: 'A', qty: 1, price: 10, vat_pct: 22 },
      { name: 'Added by script', qty: 1000, price: 'много', vat_pct: null },
    ]);
    expect(errors).toEqual({ 'items[1].price': NUMBER_FORMAT_MESSAGE });
    expect(invoice.signers).toBeUndefined();
    expect(invoice.api_recipients).toEqual([{ email: 'x@example.com' }]);
    expect(invoice).toMatchObject({ prices_include_vat: false, public_share_enabled: false, show_payment_qr: false, seller: {}, buyer: {} });
    expect(invoice).not.toHaveProperty('date');
  });

  it('keeps a malformed number as typed, so validation refuses it at its path and the form shows it again', () => {
    const { invoice } = parseEditFormDetailed({ 'items[0].name': 'A', 'items[0].qty': '2 шт', 'items[0].price': '5' });
    const result = validateInvoice({ ...invoice, number: '1', date: '2026-01-01', currency: 'RUB', seller: { inn: '7707083893' }, buyer: { name: 'B' } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.field)).toContain('items[0].qty');
    const page = renderEdit(invoice, { errors: { 'items[0].qty': NUMBER_FORMAT_MESSAGE } });
    expect(page).toContain('value="2 шт" aria-invalid="true"');
  });

  it('takes the last value of a repeated field and ignores unknown and control fields', () => {
    const invoice = parseEditForm({ number: ['1', '2'], show_payment_qr: ['0', '1'], evil: 'x', __proto__field: 'y', _csrf: 'c' });
    expect(invoice.number).toBe('2');
    expect(invoice.show_payment_qr).toBe(true);
    expect(invoice).not.toHaveProperty('evil');
    expect(invoice).not.toHaveProperty('_csrf');
  });
});

describe('mergeEditedDocument', () => {
  it('keeps what the form does not show and replaces what it does', () => {
    const stored = JSON.parse(
      '{"public_id":"inv_1","number":"1","due_date":"2026-01-05","manager":{"name":"M"},"information_system":"1C","seller":{"inn":"7707083893","ogrn":"1027700132195","bank_name":"Old"},"buyer":{"name":"B","contact":"C"},"__proto__":{"polluted":true}}',
    ) as Record<string, unknown>;
    const edited = { number: '2', seller: { inn: '7707083893' }, buyer: { name: 'B2' }, items: [] };
    const merged = mergeEditedDocument(stored, edited);
    expect(merged).toMatchObject({ public_id: 'inv_1', number: '2', manager: { name: 'M' }, information_system: '1C', items: [] });
    expect(merged).not.toHaveProperty('due_date'); // cleared in the form
    expect(merged.seller).toEqual({ ogrn: '1027700132195', inn: '7707083893' }); // bank_name cleared, ogrn kept
    expect(merged.buyer).toEqual({ contact: 'C', name: 'B2' });
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
