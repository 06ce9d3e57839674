import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatMoney, fromMinorUnits, toMinorUnits } from '../../../src/shared/money.js';
import { computeTotals, lineAmount, type TotalsItemInput } from '../../../src/modules/invoices/rules/totals.js';

const onTop = { pricesIncludeVat: false } as const;
const included = { pricesIncludeVat: true } as const;

function line(items: TotalsItemInput[], options: { pricesIncludeVat: boolean } = onTop) {
  const totals = computeTotals(items, options);
  const first = totals.lines[0];
  if (!first) throw new Error('no line');
  return first;
}

describe('computeTotals: the reference document (VAT on top, mixed rates)', () => {
  const items: TotalsItemInput[] = [
    { qty: 3, price: '1500.00', vat_pct: 22 },
    { qty: 1, price: '9999.99', vat_pct: 22 },
    { qty: '2.5', price: '400.00', vat_pct: 10 },
    { qty: 1, price: '1000.00', vat_pct: null },
  ];
  const totals = computeTotals(items, onTop);

  it('computes each line', () => {
    expect(totals.lines).toEqual([
      { amount: '4500.00', net: '4500.00', vat: '990.00', gross: '5490.00', vat_pct: 22, without_vat: false },
      { amount: '9999.99', net: '9999.99', vat: '2200.00', gross: '12199.99', vat_pct: 22, without_vat: false },
      { amount: '1000.00', net: '1000.00', vat: '100.00', gross: '1100.00', vat_pct: 10, without_vat: false },
      { amount: '1000.00', net: '1000.00', vat: '0.00', gross: '1000.00', vat_pct: null, without_vat: true },
    ]);
  });

  it('sums the document', () => {
    expect(totals.subtotal).toBe('16499.99');
    expect(totals.vat_total).toBe('3290.00');
    expect(totals.total).toBe('19789.99');
    expect(totals.total_kopecks).toBe('1978999');
  });

  it('breaks VAT down by rate in order of first appearance', () => {
    expect(totals.vat_breakdown).toEqual([
      { vat_pct: 22, net: '14499.99', vat: '3190.00', gross: '17689.99' },
      { vat_pct: 10, net: '1000.00', vat: '100.00', gross: '1100.00' },
      { vat_pct: null, net: '1000.00', vat: '0.00', gross: '1000.00' },
    ]);
  });

  it('does not depend on whether numbers arrive as strings', () => {
    const asStrings = items.map((i) => ({ qty: String(i.qty), price: String(i.price), vat_pct: i.vat_pct === null ? null : String(i.vat_pct) }));
    expect(computeTotals(asStrings, onTop)).toEqual(totals);
  });
});

describe('computeTotals: float traps', () => {
  it('3 × 0.1 = 0.30', () => {
    expect(line([{ qty: 3, price: 0.1, vat_pct: null }]).amount).toBe('0.30');
    expect(lineAmount(3, 0.1)).toBe('0.30');
  });

  it('1.15 × 3 = 3.45 and 1.15 × 100 = 115.00', () => {
    expect(lineAmount(1.15, 3)).toBe('3.45');
    expect(lineAmount(1.15, 100)).toBe('115.00');
    expect(lineAmount(100, 1.15)).toBe('115.00');
  });

  it('rounds half-up, not to even: 1.75 @22 % on top → VAT 0.39 (0.385)', () => {
    expect(line([{ qty: 1, price: '1.75', vat_pct: 22 }])).toMatchObject({ vat: '0.39', gross: '2.14' });
  });

  it('rounds the line amount half-up: 0.005 → 0.01, 0.125 → 0.13, 2.675 → 2.68', () => {
    expect(lineAmount(1, '0.005')).toBe('0.01');
    expect(lineAmount(1, '0.125')).toBe('0.13');
    expect(lineAmount(1, 2.675)).toBe('2.68');
  });

  it('rounds each line before summing: 3 lines × 0.10 @22 % → VAT 0.06, not 0.07', () => {
    const t = computeTotals([1, 2, 3].map(() => ({ qty: 1, price: '0.10', vat_pct: 22 })), onTop);
    expect(t.lines.map((l) => l.vat)).toEqual(['0.02', '0.02', '0.02']);
    expect(t.vat_total).toBe('0.06');
    expect(t.total).toBe('0.36');
  });

  it('computes VAT on the rounded line amount: 3 × 0.10 @22 % in one line → 0.07', () => {
    expect(line([{ qty: 3, price: '0.10', vat_pct: 22 }]).vat).toBe('0.07');
  });

  it('keeps large amounts exact (beyond 2^53 kopecks)', () => {
    const t = computeTotals([{ qty: '1000', price: '99999999999999.99', vat_pct: 22 }], onTop);
    expect(t.subtotal).toBe('99999999999999990.00');
    expect(t.vat_total).toBe('21999999999999997.80');
    expect(t.total).toBe('121999999999999987.80');
    expect(t.total_kopecks).toBe('12199999999999998780');
  });

  it('accepts fractional quantities and exponent notation from String(number)', () => {
    expect(lineAmount('0.333', '3')).toBe('1.00');
    expect(lineAmount(0.0000001, 1e7)).toBe('1.00');
  });
});

describe('computeTotals: VAT included', () => {
  it.each([
    ['1220.00', 22, '220.00', '1000.00'],
    ['1000.00', 22, '180.33', '819.67'],
    ['100.00', 22, '18.03', '81.97'],
    ['1100.00', 10, '100.00', '1000.00'],
  ])('%s @%s %% → VAT %s, net %s', (price, pct, vat, net) => {
    const t = computeTotals([{ qty: 1, price, vat_pct: pct }], included);
    expect(t.lines[0]).toEqual({ amount: price, net, vat, gross: price, vat_pct: pct, without_vat: false });
    expect(t.subtotal).toBe(net);
    expect(t.vat_total).toBe(vat);
    expect(t.total).toBe(price);
  });

  it('total equals the sum of entered amounts whatever the rates', () => {
    const t = computeTotals(
      [
        { qty: 1, price: '1000.00', vat_pct: 22 },
        { qty: 2, price: '550.00', vat_pct: 10 },
        { qty: 1, price: '300.00', vat_pct: undefined },
        { qty: 1, price: '50.00', vat_pct: 0 },
      ],
      included,
    );
    expect(t.total).toBe('2450.00');
    expect(t.vat_total).toBe('280.33');
    expect(t.subtotal).toBe('2169.67');
    expect(t.vat_breakdown).toEqual([
      { vat_pct: 22, net: '819.67', vat: '180.33', gross: '1000.00' },
      { vat_pct: 10, net: '1000.00', vat: '100.00', gross: '1100.00' },
      { vat_pct: null, net: '300.00', vat: '0.00', gross: '300.00' },
      { vat_pct: 0, net: '50.00', vat: '0.00', gross: '50.00' },
    ]);
  });

  it('rounds extracted VAT half-up (5 % and 7 % simplified-tax rates)', () => {
    expect(line([{ qty: 1, price: '105.00', vat_pct: 5 }], included)).toMatchObject({ vat: '5.00', net: '100.00' });
    expect(line([{ qty: 1, price: '100.00', vat_pct: 7 }], included)).toMatchObject({ vat: '6.54', net: '93.46' });
  });
});

describe('computeTotals: "без НДС" and rates', () => {
  it('treats null and undefined as "без НДС", distinct from 0 %', () => {
    const t = computeTotals(
      [
        { qty: 1, price: 100, vat_pct: null },
        { qty: 1, price: 100 },
        { qty: 1, price: 100, vat_pct: 0 },
      ],
      onTop,
    );
    expect(t.lines.map((l) => [l.vat_pct, l.without_vat, l.vat])).toEqual([
      [null, true, '0.00'],
      [null, true, '0.00'],
      [0, false, '0.00'],
    ]);
    expect(t.vat_breakdown.map((r) => r.vat_pct)).toEqual([null, 0]);
  });

  it('groups 22, "22" and "22.0" into one breakdown row', () => {
    const t = computeTotals(
      [
        { qty: 1, price: 100, vat_pct: 22 },
        { qty: 1, price: 100, vat_pct: '22' },
        { qty: 1, price: 100, vat_pct: '22.0' },
      ],
      onTop,
    );
    expect(t.vat_breakdown).toEqual([{ vat_pct: 22, net: '300.00', vat: '66.00', gross: '366.00' }]);
  });

  it('returns zero totals for no items', () => {
    expect(computeTotals([], onTop)).toEqual({
      lines: [],
      subtotal: '0.00',
      vat_total: '0.00',
      total: '0.00',
      vat_breakdown: [],
      total_kopecks: '0',
    });
  });

  it('returns every money value with exactly two decimals', () => {
    const t = computeTotals([{ qty: '1.5', price: '0.3', vat_pct: '7.5' }], onTop);
    for (const v of [t.subtotal, t.vat_total, t.total, ...Object.values(t.lines[0] ?? {})]) {
      if (typeof v === 'string') expect(v).toMatch(/^-?\d+\.\d{2}$/);
    }
    expect(t.lines[0]).toMatchObject({ amount: '0.45', vat: '0.03', vat_pct: 7.5 });
  });
});

describe('computeTotals: non-finite input', () => {
  it.each([
    [{ qty: Number.NaN, price: 1, vat_pct: null }, /items\[0\]\.qty/],
    [{ qty: 1, price: Number.POSITIVE_INFINITY, vat_pct: null }, /items\[0\]\.price/],
    [{ qty: 1, price: 'abc', vat_pct: null }, /items\[0\]\.price/],
    [{ qty: 1, price: 'Infinity', vat_pct: null }, /items\[0\]\.price/],
    [{ qty: 1, price: '0x10', vat_pct: null }, /items\[0\]\.price/],
    [{ qty: 1, price: '1,5', vat_pct: null }, /items\[0\]\.price/],
    [{ qty: '', price: 1, vat_pct: null }, /items\[0\]\.qty/],
    [{ qty: 1, price: 1, vat_pct: 'NaN' }, /items\[0\]\.vat_pct/],
  ])('throws a clear error for %j', (item, message) => {
    expect(() => computeTotals([item], onTop)).toThrow(message);
  });

  it('names the offending line', () => {
    expect(() => computeTotals([{ qty: 1, price: 1 }, { qty: 1, price: 'x' }], onTop)).toThrow(/items\[1\]\.price/);
  });

  it('throws when an included rate of -100 % would divide by zero', () => {
    expect(() => computeTotals([{ qty: 1, price: 1, vat_pct: -100 }], included)).toThrow(/vat_pct/);
  });
});

describe('formatMoney', () => {
  it.each([
    ['990', '990.00'],
    [990, '990.00'],
    ['0.385', '0.39'],
    [0.1, '0.10'],
    ['-0.001', '0.00'],
    ['-1.005', '-1.01'],
    ['1e3', '1000.00'],
  ] as const)('formats %j as %s', (input, expected) => {
    expect(formatMoney(input)).toBe(expected);
  });

  it('throws on non-finite input', () => {
    expect(() => formatMoney(Number.NaN)).toThrow(/finite/);
  });
});

describe('computeTotals: agrees with integer-kopeck arithmetic (property)', () => {
  /** Half-up division of non-negative integers: floor((2n + d) / 2d). */
  const divHalfUp = (n: bigint, d: bigint): bigint => (2n * n + d) / (2n * d);
  const kopecksToString = (k: bigint): string => `${k / 100n}.${String(k % 100n).padStart(2, '0')}`;
  const lineArb = fc.record({
    qty: fc.integer({ min: 1, max: 10_000 }),
    priceKopecks: fc.bigInt({ min: 0n, max: 10_000_000_000n }),
    pct: fc.constantFrom(0, 5, 7, 10, 20, 22, null),
  });

  it.each([false, true])('pricesIncludeVat = %s', (pricesIncludeVat) => {
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 20 }), (rows) => {
        const items = rows.map((r) => ({ qty: r.qty, price: kopecksToString(r.priceKopecks), vat_pct: r.pct }));
        const t = computeTotals(items, { pricesIncludeVat });
        let net = 0n;
        let vat = 0n;
        rows.forEach((r, i) => {
          const amount = BigInt(r.qty) * r.priceKopecks;
          const pct = BigInt(r.pct ?? 0);
          const lineVat = pricesIncludeVat ? divHalfUp(amount * pct, 100n + pct) : divHalfUp(amount * pct, 100n);
          const lineNet = pricesIncludeVat ? amount - lineVat : amount;
          expect(t.lines[i]?.vat).toBe(kopecksToString(lineVat));
          expect(t.lines[i]?.net).toBe(kopecksToString(lineNet));
          net += lineNet;
          vat += lineVat;
        });
        expect(t.subtotal).toBe(kopecksToString(net));
        expect(t.vat_total).toBe(kopecksToString(vat));
        expect(t.total).toBe(kopecksToString(net + vat));
        expect(t.total_kopecks).toBe(String(net + vat));
      }),
      { numRuns: 300 },
    );
  });
});

describe('minor units (exact money strings)', () => {
  it('converts money to whole kopecks and back exactly, above 2^53 too', () => {
    expect(toMinorUnits('1234.56')).toBe('123456');
    expect(toMinorUnits('0.05')).toBe('5');
    expect(toMinorUnits('0.00')).toBe('0');
    expect(toMinorUnits('-0.10')).toBe('-10');
    expect(toMinorUnits('3333333332999999.67')).toBe('333333333299999967');
    expect(fromMinorUnits('333333333299999967')).toBe('3333333332999999.67');
    expect(fromMinorUnits('5')).toBe('0.05');
    expect(fromMinorUnits('-10')).toBe('-0.10');
    expect(fromMinorUnits('0')).toBe('0.00');
    expect(() => fromMinorUnits('1.5')).toThrow();
  });

  it('gives total_kopecks of a total above 10^15 exactly', () => {
    const t = computeTotals([{ qty: '3333.333333', price: '999999999999.9999' }], { pricesIncludeVat: false });
    expect(t.total).toBe('3333333332999999.67');
    expect(t.total_kopecks).toBe('333333333299999967');
  });
});
