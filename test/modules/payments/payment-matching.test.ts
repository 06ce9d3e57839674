import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MATCH_LIMITS, MATCH_REASONS, matchPayment, type MatchCandidate, type PaymentToMatch } from '../../../src/modules/payments/index.js';

const PAYER = '7701234567';
const OTHER = '7809876543';

const doc = (public_id: string, number: string, outstanding: bigint, extra: Partial<MatchCandidate> = {}): MatchCandidate => ({
  public_id,
  number,
  date: '2026-01-10',
  currency: 'RUB',
  buyer_inn: PAYER,
  seller_inn: '7707083893',
  outstanding,
  ...extra,
});
const pay = (amount: bigint, purpose: string, payer_inn: string | null = PAYER): PaymentToMatch => ({ amount, currency: 'RUB', payer_inn, purpose });

describe('rule (a): exactly one named document, with the payer’s INN', () => {
  it('gets the whole payment when it covers it, and the payment is matched', () => {
    const r = matchPayment(pay(50_000n, 'Оплата по счету СЧ-1'), [doc('d1', 'СЧ-1', 120_000n), doc('d2', 'СЧ-2', 50_000n)]);
    expect(r).toEqual({ status: 'matched', allocations: [{ public_id: 'd1', amount: 50_000n }], candidates: [], allocated: 50_000n, unallocated: 0n });
  });

  it('gets its outstanding amount on an overpayment: partially matched, the rest unallocated', () => {
    const r = matchPayment(pay(150_000n, 'сч-1'), [doc('d1', 'СЧ-1', 120_000n)]);
    expect(r).toMatchObject({ status: 'partially_matched', allocations: [{ public_id: 'd1', amount: 120_000n }], allocated: 120_000n, unallocated: 30_000n });
  });

  it('is never applied when the named document’s buyer is someone else, or unknown', () => {
    const differs = matchPayment(pay(120_000n, 'СЧ-1'), [doc('d1', 'СЧ-1', 120_000n, { buyer_inn: OTHER })]);
    expect(differs).toMatchObject({ status: 'review', allocations: [], allocated: 0n, unallocated: 120_000n });
    expect(differs.candidates).toEqual([{ public_id: 'd1', number: 'СЧ-1', date: '2026-01-10', outstanding: 120_000n, reasons: ['named_in_purpose', 'payer_differs', 'amount_equals_outstanding'] }]);
    const noPayerInn = matchPayment(pay(100n, 'СЧ-1', null), [doc('d1', 'СЧ-1', 120_000n)]);
    expect(noPayerInn.candidates[0]!.reasons).toEqual(['named_in_purpose', 'payer_differs', 'payer_inn_unknown', 'partial_amount']);
    const noBuyerInn = matchPayment(pay(200_000n, 'СЧ-1'), [doc('d1', 'СЧ-1', 120_000n, { buyer_inn: null })]);
    expect(noBuyerInn.candidates[0]!.reasons).toEqual(['named_in_purpose', 'payer_differs', 'payer_inn_unknown', 'overpayment']);
  });

  it('wins over an unnamed document whose outstanding equals the amount', () => {
    const r = matchPayment(pay(50_000n, 'СЧ-1'), [doc('d2', 'СЧ-2', 50_000n), doc('d1', 'СЧ-1', 70_000n)]);
    expect(r.allocations).toEqual([{ public_id: 'd1', amount: 50_000n }]);
  });
});

describe('rule (b): several named documents, each with the payer’s INN, the amount their sum', () => {
  it('each gets its outstanding amount', () => {
    const r = matchPayment(pay(170_000n, 'Оплата по счетам СЧ-1, СЧ-2'), [doc('d1', 'СЧ-1', 120_000n), doc('d2', 'СЧ-2', 50_000n), doc('d3', 'СЧ-3', 170_000n)]);
    expect(r).toMatchObject({ status: 'matched', allocations: [{ public_id: 'd1', amount: 120_000n }, { public_id: 'd2', amount: 50_000n }], unallocated: 0n });
  });

  it('is not applied when the sum differs: review', () => {
    const r = matchPayment(pay(100_000n, 'СЧ-1 и СЧ-2'), [doc('d1', 'СЧ-1', 120_000n), doc('d2', 'СЧ-2', 50_000n)]);
    expect(r.status).toBe('review');
    expect(r.candidates.map((c) => [c.public_id, c.reasons])).toEqual([
      ['d1', ['named_in_purpose', 'payer_inn_equal', 'partial_amount']],
      ['d2', ['named_in_purpose', 'payer_inn_equal', 'overpayment']],
    ]);
  });

  it('is not applied when one of them belongs to another buyer: review, saying the sum fits', () => {
    const r = matchPayment(pay(170_000n, 'СЧ-1 и СЧ-2'), [doc('d1', 'СЧ-1', 120_000n), doc('d2', 'СЧ-2', 50_000n, { buyer_inn: OTHER })]);
    expect(r.status).toBe('review');
    expect(r.candidates.map((c) => c.reasons)).toEqual([
      ['named_in_purpose', 'payer_inn_equal', 'overpayment', 'amount_equals_named_total'],
      ['named_in_purpose', 'payer_differs', 'overpayment', 'amount_equals_named_total'],
    ]);
  });

  it(`allocates nothing when more than ${MATCH_LIMITS.namedCandidates} documents are named`, () => {
    const docs = Array.from({ length: MATCH_LIMITS.namedCandidates + 1 }, (_, i) => doc(`d${i}`, `${i + 1}`, 100n));
    const purpose = docs.map((d) => d.number).join(' ');
    expect(matchPayment(pay(BigInt(docs.length) * 100n, purpose), docs)).toMatchObject({ status: 'review', allocations: [] });
    expect(matchPayment(pay(BigInt(docs.length - 1) * 100n, purpose), docs.slice(1))).toMatchObject({ status: 'matched' });
  });
});

describe('rule (c): nothing named, one document of the payer with exactly the amount outstanding', () => {
  it('gets the payment', () => {
    const r = matchPayment(pay(50_000n, 'Оплата за услуги'), [doc('d1', 'СЧ-1', 120_000n), doc('d2', 'СЧ-2', 50_000n), doc('d3', 'СЧ-3', 50_000n, { buyer_inn: OTHER })]);
    expect(r).toMatchObject({ status: 'matched', allocations: [{ public_id: 'd2', amount: 50_000n }] });
  });

  it('is not applied when two of the payer’s documents have that amount: review', () => {
    const r = matchPayment(pay(50_000n, 'Оплата'), [doc('d1', 'СЧ-1', 50_000n, { date: '2026-01-12' }), doc('d2', 'СЧ-2', 50_000n, { date: '2026-01-11' })]);
    expect(r.status).toBe('review');
    expect(r.candidates.map((c) => [c.public_id, c.reasons])).toEqual([
      ['d2', ['payer_inn_equal', 'amount_equals_outstanding']],
      ['d1', ['payer_inn_equal', 'amount_equals_outstanding']],
    ]);
  });

  it('is not applied when something is named (even by another buyer)', () => {
    const r = matchPayment(pay(50_000n, 'СЧ-9'), [doc('d9', 'СЧ-9', 10_000n, { buyer_inn: OTHER }), doc('d2', 'СЧ-2', 50_000n)]);
    expect(r.status).toBe('review');
    expect(r.candidates.map((c) => c.public_id)).toEqual(['d9', 'd2']);
  });

  it('needs the payer’s INN', () => {
    expect(matchPayment(pay(50_000n, 'Оплата', null), [doc('d2', 'СЧ-2', 50_000n)]).status).toBe('unmatched');
  });
});

describe('review and unmatched', () => {
  it('ranks named with the payer’s INN, named, the payer’s with the amount, the payer’s oldest; at most 5', () => {
    const candidates = [
      doc('p-old', 'П-1', 10n, { date: '2025-12-01' }),
      doc('p-new', 'П-2', 10n, { date: '2026-01-05' }),
      doc('p-eq', 'П-3', 999n, { date: '2026-01-06' }),
      doc('n-other', 'СЧ-7', 999n, { buyer_inn: OTHER }),
      doc('n-payer-over', 'СЧ-5', 500n),
      doc('n-payer-eq', 'СЧ-6', 999n, { date: '2026-01-20' }),
      doc('unrelated', 'Х-1', 999n, { buyer_inn: OTHER }),
    ];
    const r = matchPayment(pay(999n, 'СЧ-5 СЧ-6 СЧ-7'), candidates);
    expect(r.status).toBe('review');
    expect(r.candidates.map((c) => c.public_id)).toEqual(['n-payer-eq', 'n-payer-over', 'n-other', 'p-eq', 'p-old']);
    expect(matchPayment(pay(999n, 'СЧ-5 СЧ-6 СЧ-7'), [...candidates].reverse())).toEqual(r);
  });

  it('is unmatched when nothing is named and no document is the payer’s', () => {
    expect(matchPayment(pay(999n, 'Возврат займа'), [doc('x', 'СЧ-1', 999n, { buyer_inn: OTHER })])).toEqual({
      status: 'unmatched',
      allocations: [],
      candidates: [],
      allocated: 0n,
      unallocated: 999n,
    });
    expect(matchPayment(pay(999n, 'СЧ-1'), []).status).toBe('unmatched');
  });

  it('ignores documents of another currency or with nothing outstanding, and repeated ones', () => {
    const r = matchPayment(pay(100n, 'СЧ-1'), [doc('d1', 'СЧ-1', 100n, { currency: 'USD' }), doc('d2', 'СЧ-1', 0n), doc('d3', 'СЧ-1', 100n), doc('d3', 'СЧ-1', 100n)]);
    expect(r).toMatchObject({ status: 'matched', allocations: [{ public_id: 'd3', amount: 100n }] });
  });

  it('allocates nothing for a zero payment', () => {
    expect(matchPayment(pay(0n, 'СЧ-1'), [doc('d1', 'СЧ-1', 100n)])).toMatchObject({ status: 'unmatched', allocations: [] });
  });
});

describe('property: whatever is handed in', () => {
  const candidate = fc.record({
    public_id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
    number: fc.constantFrom('1', '2', '3', 'СЧ-1', 'СЧ-2'),
    date: fc.constantFrom('2026-01-01', '2026-01-02', '2026-01-03'),
    currency: fc.constantFrom('RUB', 'RUB', 'USD'),
    buyer_inn: fc.constantFrom(PAYER, OTHER, null),
    seller_inn: fc.constant('7707083893'),
    outstanding: fc.bigInt({ min: -5n, max: 500n }),
  });
  const payment = fc.record({
    amount: fc.bigInt({ min: 0n, max: 1000n }),
    currency: fc.constant('RUB'),
    payer_inn: fc.constantFrom(PAYER, null),
    purpose: fc.constantFrom('', 'Оплата 1', 'Оплата 1 и 2', 'сч-1, сч-2', 'СЧ-1. 3'),
  });

  it('allocations never exceed a document’s outstanding or the payment, and the status says what happened', () => {
    fc.assert(
      fc.property(payment, fc.array(candidate, { maxLength: 10 }), (p, cs) => {
        const r = matchPayment(p, cs);
        const total = r.allocations.reduce((s, a) => s + a.amount, 0n);
        expect(total).toBe(r.allocated);
        expect(r.allocated + r.unallocated).toBe(p.amount);
        expect(r.unallocated >= 0n).toBe(true);
        for (const a of r.allocations) {
          const d = cs.find((c) => c.public_id === a.public_id && c.currency === 'RUB' && c.outstanding > 0n);
          expect(d).toBeDefined();
          expect(a.amount > 0n && a.amount <= d!.outstanding).toBe(true);
          expect(d!.buyer_inn).toBe(p.payer_inn);
        }
        expect(new Set(r.allocations.map((a) => a.public_id)).size).toBe(r.allocations.length);
        if (r.allocations.length > 0) expect(r.status).toBe(r.unallocated === 0n ? 'matched' : 'partially_matched');
        else expect(['review', 'unmatched']).toContain(r.status);
        expect(r.candidates.length).toBeLessThanOrEqual(MATCH_LIMITS.reviewCandidates);
        if (r.status !== 'review') expect(r.candidates).toEqual([]);
        for (const c of r.candidates) for (const reason of c.reasons) expect(MATCH_REASONS).toContain(reason);
      }),
      { numRuns: 500 },
    );
  });
});
