/**
 * Properties of the document validation: what holds for every generated document (a valid one
 * stays valid under harmless changes, URLs and images are refused wherever they hide, decimals
 * are counted from the literal).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { validateInvoice, type InvoiceValidationResult } from '../../../src/modules/invoices/rules/validation.js';
import { isBase64Image, isWholeUrl } from '../../../src/modules/invoices/rules/prohibited.js';
import { decimalPlaces } from '../../../src/modules/invoices/rules/validation-fields.js';
import { toDecimal } from '../../../src/shared/money.js';
import { ok, validDoc, withChange } from './validation-fixtures.js';

describe('validateInvoice: properties', () => {
  function assertShape(result: InvoiceValidationResult): void {
    const isIssue = (i: unknown) =>
      typeof i === 'object' && i !== null && ['field', 'code', 'message'].every((k) => typeof (i as Record<string, unknown>)[k] === 'string');
    if (result.ok) {
      expect(typeof result.invoice).toBe('object');
      expect(Array.isArray(result.invoice.items) && result.invoice.items.length > 0).toBe(true);
      expect(result.warnings.every(isIssue)).toBe(true);
    } else {
      expect(['prohibited_field', 'validation_failed']).toContain(result.error);
      expect(typeof result.details).toBe('string');
      expect(result.errors.length).toBeGreaterThan(0);
      expect(result.errors.every(isIssue)).toBe(true);
      expect(result.missing_fields.every((f) => typeof f === 'string')).toBe(true);
      for (const f of result.missing_fields) expect(result.errors.some((e) => e.field === f && e.code === 'required')).toBe(true);
    }
  }

  it('never throws on arbitrary JSON objects', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (doc) => {
        assertShape(validateInvoice(doc));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws when known fields of a valid document take arbitrary values', () => {
    const keys = ['number', 'date', 'currency', 'seller', 'buyer', 'items', 'vat', 'qty', 'price', 'public_id', 'api_recipients', 'signers', 'manager', 'due_date'];
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.anything(), fc.boolean(), (key, value, inItem) => {
        const doc = validDoc() as Record<string, any>;
        if (inItem) doc.items[0][key === 'vat' ? 'vat_pct' : key] = value;
        else doc[key] = value;
        assertShape(validateInvoice(doc));
      }),
      { numRuns: 500 },
    );
  });

  it('accepts every well-formed item and keeps its numbers', () => {
    const item = fc.record({
      name: fc.string({ minLength: 1, maxLength: 50 }).filter((s) => s.trim() !== '' && !isWholeUrl(s) && !isBase64Image(s)),
      qty: fc.integer({ min: 1, max: 1_000_000 }).map((n) => n / 1000),
      price: fc.integer({ min: 0, max: 1_000_000_000 }).map((n) => n / 100),
      vat_pct: fc.constantFrom(22, 10, 0, null),
    });
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 20 }), (items) => {
        const { invoice, warnings } = ok(validateInvoice(withChange((d) => (d.items = items))));
        expect(warnings).toEqual([]);
        expect(invoice.items.map((i) => [i.qty, i.price, i.vat_pct])).toEqual(items.map((i) => [i.qty, i.price, i.vat_pct]));
      }),
      { numRuns: 200 },
    );
  });
});

describe('decimalPlaces: the literal`s decimals without decimal arithmetic (property)', () => {
  it('counts what toDecimal(value).decimalPlaces() counts, for every finite number', () => {
    for (const v of [0, -0, 1, 0.1, 0.30000000000000004, 1e-7, 1.5e-10, 1e21, 1.5e300, -2.505, 9999.99, 123456789.123, 5e-324]) {
      expect(decimalPlaces(v), String(v)).toBe(toDecimal(v).decimalPlaces());
    }
    fc.assert(
      fc.property(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer().map((n) => n / 1000), fc.integer().map((n) => n / 7)), (v) => {
        expect(decimalPlaces(v)).toBe(toDecimal(v).decimalPlaces());
      }),
      { numRuns: 5000 },
    );
  });
});
