import { describe, expect, it } from 'vitest';
import { requisiteWarnings, toApiError, validateInvoice } from '../../../src/modules/invoices/rules/validation.js';
import { ApiError } from '../../../src/shared/errors.js';
import { codesAt, failed, ok, validDoc, withChange } from './validation-fixtures.js';

describe('validateInvoice: a valid document', () => {
  it('passes without warnings and applies the defaults', () => {
    const { invoice, warnings } = ok(validateInvoice(validDoc()));
    expect(warnings).toEqual([]);
    expect(invoice.invoice_direction).toBe('outgoing');
    expect(invoice.prices_include_vat).toBe(false);
    expect(invoice.public_share_enabled).toBe(true);
    expect(invoice.show_payment_qr).toBe(true);
    expect(invoice.api_recipients).toEqual([]);
    expect(invoice.items[0]).toEqual({ name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 });
    expect(invoice.items[1]?.unit).toBe('шт');
    expect(invoice.seller_status).toBeUndefined();
  });

  it('treats absent or null vat_pct as без НДС (null)', () => {
    const { invoice } = ok(validateInvoice(withChange((d) => {
      delete d.items[0].vat_pct;
      d.items[1].vat_pct = null;
    })));
    expect(invoice.items.map((i) => i.vat_pct)).toEqual([null, null]);
  });

  it('trims number and requisites, keeps unknown properties at every level', () => {
    const { invoice } = ok(validateInvoice(withChange((d) => {
      d.number = '  15/А ';
      d.seller.inn = ' 7707083893 ';
      d.seller.bik = '044525225 ';
      d.erp_ref = { id: 42 };
      d.items[0].sku = 'A-1';
      d.buyer.note = 'x';
    })));
    expect(invoice.number).toBe('15/А');
    expect(invoice.seller.inn).toBe('7707083893');
    expect(invoice.seller.bik).toBe('044525225');
    expect(invoice.erp_ref).toEqual({ id: 42 });
    expect(invoice.items[0]?.sku).toBe('A-1');
    expect(invoice.buyer.note).toBe('x');
  });

  it('drops null and blank optional strings so "not given" has one form', () => {
    const { invoice } = ok(validateInvoice(withChange((d) => {
      d.seller.kpp = null;
      d.seller.bank_name = '  ';
      d.comment = null;
      d.buyer_edo_id = '';
    })));
    expect('kpp' in invoice.seller).toBe(false);
    expect('bank_name' in invoice.seller).toBe(false);
    expect('comment' in invoice).toBe(false);
    expect('buyer_edo_id' in invoice).toBe(false);
  });

  it('accepts every optional field of the right type', () => {
    const { invoice } = ok(validateInvoice(withChange((d) => {
      Object.assign(d, {
        public_id: 'inv_2026-0001',
        invoice_direction: 'incoming',
        prices_include_vat: true,
        public_share_enabled: false,
        show_payment_qr: false,
        information_system: '1C',
        buyer_edo_id: '2BM-7736207543-2012052808301120',
        seller_status: 'draft',
        due_date: '2026-03-31',
        comment: 'Спасибо',
        purpose: 'Оплата по счёту',
        api_recipients: [{ email: 'a@example.com', name: 'Анна', position: 'Бухгалтер' }, { email: 'not an address' }],
        manager: { name: 'Иван' },
        buyer_contact: { name: 'Пётр' },
        signers: [{ name: 'Анна Смирнова', role: 'director' }],
      });
    })));
    expect(invoice).toMatchObject({ public_id: 'inv_2026-0001', invoice_direction: 'incoming', seller_status: 'draft', show_payment_qr: false });
    expect(invoice.api_recipients[1]).toEqual({ email: 'not an address' });
  });

  it('treats a blank public_id as not given', () => {
    expect('public_id' in ok(validateInvoice(withChange((d) => (d.public_id = ' ')))).invoice).toBe(false);
  });

  it('does not mutate its input', () => {
    const doc = withChange((d) => (d.seller.inn = ' 7707083893 '));
    const before = structuredClone(doc);
    validateInvoice(doc);
    expect(doc).toEqual(before);
  });

  it('keeps a "__proto__" key as a plain property', () => {
    const doc = JSON.parse(JSON.stringify(validDoc()).replace('{', '{"__proto__":{"x":1},')) as Record<string, unknown>;
    const { invoice } = ok(validateInvoice(doc));
    expect(Object.getPrototypeOf(invoice)).toBe(Object.prototype);
    expect(Object.hasOwn(invoice, '__proto__')).toBe(true);
  });
});

describe('validateInvoice: required fields', () => {
  it('lists items[2].price for a third item without a price', () => {
    const result = failed(validateInvoice(withChange((d) => d.items.push({ name: 'Доставка', qty: 1 }))));
    expect(result.error).toBe('validation_failed');
    expect(result.missing_fields).toEqual(['items[2].price']);
    expect(result.errors).toEqual([{ field: 'items[2].price', code: 'required', message: 'items[2].price is required' }]);
    expect(result.details).toBe('1 field is invalid: items[2].price is required');
  });

  it('lists every missing path at once, leaves for missing parties', () => {
    const result = failed(validateInvoice({ items: [{ qty: 1, price: 5 }, { name: 'x' }] }));
    expect(result.missing_fields).toEqual(['number', 'date', 'currency', 'seller.inn', 'buyer.name', 'items[0].name', 'items[1].qty', 'items[1].price']);
    expect(result.errors.every((e) => e.code === 'required')).toBe(true);
    expect(result.details).toMatch(/^8 fields are invalid: number is required; date is required;/);
  });

  it('counts null and blank strings as missing', () => {
    const result = failed(validateInvoice(withChange((d) => {
      d.number = '   ';
      d.seller.inn = '';
      d.buyer.name = null;
      d.items[0].name = ' ';
      d.items[0].qty = null;
    })));
    expect(result.missing_fields).toEqual(['number', 'seller.inn', 'buyer.name', 'items[0].name', 'items[0].qty']);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['empty', []],
  ])('refuses %s items, naming items', (_label, items) => {
    const result = failed(validateInvoice(withChange((d) => (d.items = items))));
    expect(result.missing_fields).toEqual(['items']);
  });

  it('refuses 1001 items with one too_many_items error and accepts 1000', () => {
    const item = { name: 'x', qty: 1, price: 1 };
    const tooMany = failed(validateInvoice(withChange((d) => (d.items = Array.from({ length: 1001 }, () => ({ ...item }))))));
    expect(tooMany.errors).toEqual([expect.objectContaining({ field: 'items', code: 'too_many_items' })]);
    ok(validateInvoice(withChange((d) => (d.items = Array.from({ length: 1000 }, () => ({ ...item }))))));
  });
});

describe('validateInvoice: types and bounds', () => {
  it.each([
    ['2026-02-30', 'invalid_date'],
    ['2025-02-29', 'invalid_date'],
    ['2026-13-01', 'invalid_date'],
    ['2026-00-10', 'invalid_date'],
    ['2026-3-2', 'invalid_format'],
    ['02.03.2026', 'invalid_format'],
    ['2026-03-02T00:00:00Z', 'invalid_format'],
    ['1899-12-31', 'out_of_range'],
    ['3000-01-01', 'out_of_range'],
  ])('refuses date %s with %s', (date, code) => {
    expect(codesAt(failed(validateInvoice(withChange((d) => (d.date = date)))).errors, 'date')).toEqual([code]);
  });

  it.each(['2024-02-29', '2000-02-29', '1900-01-01', '2999-12-31'])('accepts date %s', (date) => {
    ok(validateInvoice(withChange((d) => (d.date = date))));
  });

  it('refuses 1900-02-29 (1900 was not a leap year)', () => {
    expect(codesAt(failed(validateInvoice(withChange((d) => (d.date = '1900-02-29')))).errors, 'date')).toEqual(['invalid_date']);
  });

  it.each([
    [{ qty: 0 }, 'items[0].qty', 'out_of_range'],
    [{ qty: -1 }, 'items[0].qty', 'out_of_range'],
    [{ qty: 1e9 + 1 }, 'items[0].qty', 'out_of_range'],
    [{ qty: 0.0000001 }, 'items[0].qty', 'too_many_decimals'],
    [{ qty: '2' }, 'items[0].qty', 'invalid_type'],
    [{ price: -0.01 }, 'items[0].price', 'out_of_range'],
    [{ price: 1e12 + 1 }, 'items[0].price', 'out_of_range'],
    [{ price: 1.00001 }, 'items[0].price', 'too_many_decimals'],
    [{ price: '100.00' }, 'items[0].price', 'invalid_type'],
    [{ vat_pct: -1 }, 'items[0].vat_pct', 'out_of_range'],
    [{ vat_pct: 101 }, 'items[0].vat_pct', 'out_of_range'],
    [{ vat_pct: 12.345 }, 'items[0].vat_pct', 'too_many_decimals'],
    [{ vat_pct: '22' }, 'items[0].vat_pct', 'invalid_type'],
    [{ vat_pct: '' }, 'items[0].vat_pct', 'invalid_type'],
    [{ name: 42 }, 'items[0].name', 'invalid_type'],
    [{ name: 'x'.repeat(1001) }, 'items[0].name', 'too_long'],
    [{ unit: 'x'.repeat(33) }, 'items[0].unit', 'too_long'],
    [{ unit: 5 }, 'items[0].unit', 'invalid_type'],
  ])('refuses item change %j at %s with %s', (change, field, code) => {
    const result = failed(validateInvoice(withChange((d) => Object.assign(d.items[0], change))));
    expect(result.errors).toEqual([expect.objectContaining({ field, code })]);
  });

  it('accepts the bounds themselves', () => {
    ok(validateInvoice(withChange((d) => Object.assign(d.items[0], { qty: 1e9, price: 1e12, vat_pct: 100 }))));
    ok(validateInvoice(withChange((d) => Object.assign(d.items[0], { qty: 0.000001, price: 0, vat_pct: 0 }))));
    ok(validateInvoice(withChange((d) => Object.assign(d.items[0], { qty: 2.5, price: 0.1234, vat_pct: 12.5 }))));
  });

  it.each([
    ['number', 15, 'invalid_type'],
    ['number', 'x'.repeat(65), 'too_long'],
    ['currency', 'rub', 'invalid_currency'],
    ['currency', 'GBP', 'invalid_currency'],
    ['currency', 643, 'invalid_type'],
    ['date', 20260302, 'invalid_type'],
    ['public_id', 'short', 'invalid_format'],
    ['public_id', 'has space 1234', 'invalid_format'],
    ['public_id', 'x'.repeat(65), 'invalid_format'],
    ['public_id', 12345678, 'invalid_type'],
    ['invoice_direction', 'sideways', 'invalid_value'],
    ['seller_status', 'archived', 'invalid_value'],
    ['prices_include_vat', 'true', 'invalid_type'],
    ['public_share_enabled', 1, 'invalid_type'],
    ['show_payment_qr', 'no', 'invalid_type'],
    ['information_system', 'x'.repeat(201), 'too_long'],
    ['buyer_edo_id', 'x'.repeat(47), 'too_long'],
    ['due_date', '2026-02-30', 'invalid_date'],
    ['comment', 'x'.repeat(2001), 'too_long'],
    ['purpose', ['a'], 'invalid_type'],
    ['api_recipients', {}, 'invalid_type'],
    ['manager', 'Иван', 'invalid_type'],
    ['buyer_contact', [], 'invalid_type'],
    ['signers', {}, 'invalid_type'],
    ['seller', 'ООО', 'invalid_type'],
    ['items', { name: 'x' }, 'invalid_type'],
  ])('refuses %s = %j with %s', (field, value, code) => {
    expect(codesAt(failed(validateInvoice(withChange((d) => (d[field] = value)))).errors, field)).toEqual([code]);
  });

  it.each([
    ['name', 'x'.repeat(501), 'too_long'],
    ['address', 'x'.repeat(1001), 'too_long'],
    ['inn', 7707083893, 'invalid_type'],
    ['bik', 44525225, 'invalid_type'],
    ['account', 'x'.repeat(65), 'too_long'],
    ['email', ['a@b'], 'invalid_type'],
  ])('refuses seller.%s = %j with %s', (key, value, code) => {
    expect(codesAt(failed(validateInvoice(withChange((d) => (d.seller[key] = value)))).errors, `seller.${key}`)).toEqual([code]);
  });

  it('checks recipients and signers element by element and their counts', () => {
    const result = failed(validateInvoice(withChange((d) => {
      d.api_recipients = [{ email: 'a@b' }, 'c@d', { email: 5, name: 'x'.repeat(201) }];
      d.signers = Array.from({ length: 11 }, () => ({}));
    })));
    expect(result.errors.map((e) => [e.field, e.code])).toEqual([
      ['api_recipients[1]', 'invalid_type'],
      ['api_recipients[2].email', 'invalid_type'],
      ['api_recipients[2].name', 'too_long'],
      ['signers', 'too_many_items'],
    ]);
    expect(codesAt(failed(validateInvoice(withChange((d) => (d.api_recipients = Array.from({ length: 51 }, () => ({ email: 'a@b' })))))).errors, 'api_recipients')).toEqual(['too_many_items']);
  });

  it('collects errors of every kind in one pass and summarises them', () => {
    const result = failed(validateInvoice(withChange((d) => {
      d.items[0].qty = 0;
      d.items[1].price = 'free';
      d.currency = 'XXX';
      delete d.number;
    })));
    expect(result.errors.map((e) => e.field)).toEqual(['number', 'currency', 'items[0].qty', 'items[1].price']);
    expect(result.missing_fields).toEqual(['number']);
    expect(result.details).toContain('4 fields are invalid: ');
    expect(result.details).toContain('items[0].qty must be greater than 0');
  });

  it('refuses nesting deeper than 32 levels without overflowing the stack', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const result = failed(validateInvoice(withChange((d) => (d.extra = deep))));
    expect(result.errors).toEqual([expect.objectContaining({ code: 'too_deep' })]);
    expect(result.errors[0]?.field.startsWith('extra[0][0]')).toBe(true);
  });
});

describe('validateInvoice: warnings', () => {
  it('warns about a wrong INN check digit, on seller and buyer', () => {
    const { warnings } = ok(validateInvoice(withChange((d) => {
      d.seller.inn = '7707083894';
      d.buyer.inn = '77070838';
    })));
    expect(warnings.map((w) => [w.field, w.code])).toEqual([
      ['seller.inn', 'inn_checksum'],
      ['buyer.inn', 'inn_checksum'],
    ]);
  });

  it('accepts the INN vectors 7707083893, 7736207543 and 500100732259 silently', () => {
    for (const inn of ['7707083893', '7736207543', '500100732259']) {
      expect(ok(validateInvoice(withChange((d) => (d.seller.inn = inn)))).warnings).toEqual([]);
    }
  });

  it('warns about a changed digit of the account or of the corr. account', () => {
    const account = ok(validateInvoice(withChange((d) => (d.seller.account = '40702810938000000002'))));
    expect(account.warnings.map((w) => [w.field, w.code])).toEqual([['seller.account', 'account_checksum']]);
    const corr = ok(validateInvoice(withChange((d) => (d.seller.corr_account = '30101810400000000226'))));
    expect(corr.warnings.map((w) => [w.field, w.code])).toEqual([['seller.corr_account', 'corr_account_checksum']]);
  });

  it('warns about KPP and BIK formats, and skips the key check against a malformed BIK', () => {
    const { warnings } = ok(validateInvoice(withChange((d) => {
      d.seller.kpp = '7736010';
      d.seller.bik = '944525225';
    })));
    expect(warnings.map((w) => [w.field, w.code])).toEqual([
      ['seller.kpp', 'kpp_format'],
      ['seller.bik', 'bik_format'],
    ]);
  });

  it('warns about an unusual VAT rate but not about the Russian ones or без НДС', () => {
    const { warnings } = ok(validateInvoice(withChange((d) => {
      d.items = [22, 20, 10, 7, 5, 0, null, 18, 12.5].map((vat_pct) => ({ name: 'x', qty: 1, price: 1, vat_pct }));
    })));
    expect(warnings.map((w) => [w.field, w.code])).toEqual([
      ['items[7].vat_pct', 'unusual_vat_rate'],
      ['items[8].vat_pct', 'unusual_vat_rate'],
    ]);
  });

  it('warns about a buyer_edo_id that is not a participant id', () => {
    expect(ok(validateInvoice(withChange((d) => (d.buyer_edo_id = 'not an id')))).warnings).toEqual([
      expect.objectContaining({ field: 'buyer_edo_id', code: 'edo_id_format' }),
    ]);
  });
});

describe('requisiteWarnings', () => {
  const bank = { bik: '044525225', account: '40702810938000000001', corr_account: '30101810400000000225' };

  it('is silent for the reference vectors', () => {
    expect(requisiteWarnings({ inn: '7707083893', kpp: '773601001', ...bank }, 'seller')).toEqual([]);
    expect(requisiteWarnings({ bik: '044525225', account: '40702810138250123017' }, 'seller')).toEqual([]);
    expect(requisiteWarnings({ bik: '044525700', account: '40702810800001400002', corr_account: '30101810200000000700' }, 'seller')).toEqual([]);
  });

  it('warns for every single-digit change of the account', () => {
    for (let i = 0; i < 20; i++) {
      const digit = bank.account.charAt(i) === '9' ? '0' : String(Number(bank.account.charAt(i)) + 1);
      const account = bank.account.slice(0, i) + digit + bank.account.slice(i + 1);
      expect(requisiteWarnings({ ...bank, account }, 'seller').map((w) => w.code)).toEqual(['account_checksum']);
    }
  });

  it('checks only the shape of an account when there is no BIK yet', () => {
    expect(requisiteWarnings({ account: '40702810938000000002' }, 'seller')).toEqual([]);
    expect(requisiteWarnings({ account: '4070281093800000000' }, 'seller').map((w) => w.code)).toEqual(['account_checksum']);
  });

  it('is silent for a treasury payee: BIK 017003983, ЕКС 40102810445370000059, treasury account 03…', () => {
    const treasury = { inn: '7727406020', kpp: '770801001', bik: '017003983', account: '03100643000000018500', corr_account: '40102810445370000059' };
    expect(requisiteWarnings(treasury, 'seller')).toEqual([]);
    expect(requisiteWarnings({ ...treasury, corr_account: '40102810445370000058' }, 'seller').map((w) => w.code)).toEqual(['corr_account_checksum']);
  });

  it('warns about a wrong OGRN / OGRNIP control digit on seller and buyer', () => {
    expect(requisiteWarnings({ ogrn: '1027700132195' }, 'seller')).toEqual([]);
    expect(requisiteWarnings({ ogrn: '304500116000157' }, 'buyer')).toEqual([]);
    expect(requisiteWarnings({ ogrnip: '304500116000157' }, 'buyer')).toEqual([]);
    expect(requisiteWarnings({ ogrn: '1027700132196' }, 'seller').map((w) => [w.field, w.code])).toEqual([['seller.ogrn', 'ogrn_checksum']]);
    expect(requisiteWarnings({ ogrn: '304500116000158' }, 'buyer').map((w) => [w.field, w.code])).toEqual([['buyer.ogrn', 'ogrn_checksum']]);
    expect(requisiteWarnings({ ogrnip: '1027700132195' }, 'buyer').map((w) => [w.field, w.code])).toEqual([['buyer.ogrnip', 'ogrn_checksum']]);
    expect(requisiteWarnings({ ogrn: '12345' }, 'seller').map((w) => w.code)).toEqual(['ogrn_checksum']);
  });

  it('uses the prefix in paths and ignores values that are not strings', () => {
    expect(requisiteWarnings({ inn: '1' }, 'buyer')[0]?.field).toBe('buyer.inn');
    expect(requisiteWarnings({ inn: 1, kpp: null }, 'buyer')).toEqual([]);
  });
});

describe('toApiError', () => {
  it('carries the failure in the spec shape with status 400', () => {
    const err = toApiError(failed(validateInvoice({})));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.body).toMatchObject({ ok: false, error: 'validation_failed', missing_fields: expect.arrayContaining(['number', 'items']) });
  });
});
