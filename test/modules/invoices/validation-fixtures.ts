/** Shared fixtures of the invoice validation tests: a valid document and result unwrappers. */
import type {
  InvoiceValidationFailure,
  InvoiceValidationResult,
  InvoiceValidationSuccess,
} from '../../../src/modules/invoices/rules/validation.js';

/** A valid document; every test changes one thing. */
export function validDoc(): Record<string, unknown> {
  return {
    number: '15',
    date: '2026-03-02',
    currency: 'RUB',
    seller: {
      name: 'ООО «Ромашка»',
      inn: '7707083893',
      kpp: '773601001',
      bank_name: 'ПАО Сбербанк',
      bik: '044525225',
      account: '40702810938000000001',
      corr_account: '30101810400000000225',
    },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
    ],
  };
}

export function ok(result: InvoiceValidationResult): InvoiceValidationSuccess {
  if (!result.ok) throw new Error(`expected ok, got ${result.error}: ${result.details}`);
  return result;
}

export function failed(result: InvoiceValidationResult): InvoiceValidationFailure {
  if (result.ok) throw new Error('expected a failure');
  return result;
}

export function withChange(change: (doc: Record<string, any>) => void): Record<string, unknown> {
  const doc = validDoc();
  change(doc);
  return doc;
}

export const codesAt = (issues: Array<{ field: string; code: string }>, field: string) => issues.filter((i) => i.field === field).map((i) => i.code);

/** A 1×1 PNG's first 33 bytes in base64. */
export const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ';
