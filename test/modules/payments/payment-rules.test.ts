import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/shared/errors.js';
import {
  MAX_REQUEST_AMOUNT_KOPECKS,
  dedupKeyText,
  direction,
  parseRequestAmount,
  parseStatementBuffer,
  paymentDate,
  paymentDedupKey,
  requireRequestAmount,
  type DedupKeyInput,
} from '../../../src/modules/payments/index.js';
import { OWN_ACCOUNT, encodeLines, statementLines } from './statement-builder.js';

const SECOND = '40702810938000000002';
const party = (account: string | null) => ({ account });

describe('direction', () => {
  const ours = [OWN_ACCOUNT, SECOND];
  it('is incoming when the recipient is a statement account and the payer is not', () => {
    expect(direction({ payer: party('40702810400000012345'), recipient: party(OWN_ACCOUNT) }, ours)).toBe('incoming');
    expect(direction({ payer: party(null), recipient: party(SECOND) }, new Set(ours))).toBe('incoming');
  });

  it('is outgoing otherwise: paid by us, between our accounts, or naming none of them', () => {
    expect(direction({ payer: party(OWN_ACCOUNT), recipient: party('40702810400000012345') }, ours)).toBe('outgoing');
    expect(direction({ payer: party(OWN_ACCOUNT), recipient: party(SECOND) }, ours)).toBe('outgoing');
    expect(direction({ payer: party('1'), recipient: party('2') }, ours)).toBe('outgoing');
    expect(direction({ payer: party(null), recipient: party(null) }, ours)).toBe('outgoing');
  });

  it('reads the parsed statement’s accounts: …РасчСчет decides', () => {
    const s = parseStatementBuffer(encodeLines(statementLines({ documents: [{}, { payerAccount: OWN_ACCOUNT, recipientAccount: '40702810400000012345', writtenOff: '13.01.2026', received: '' }] })));
    const accounts = s.accounts.map((a) => a.account);
    expect(s.documents.map((d) => direction(d, accounts))).toEqual(['incoming', 'outgoing']);
    expect(s.documents.map((d) => paymentDate(d, direction(d, accounts)))).toEqual(['2026-01-12', '2026-01-13']);
  });
});

describe('paymentDate', () => {
  const d = { date: '2026-01-10', received_date: '2026-01-12', written_off_date: '2026-01-11' };
  it('is ДатаПоступило when incoming, ДатаСписано when outgoing, else Дата', () => {
    expect(paymentDate(d, 'incoming')).toBe('2026-01-12');
    expect(paymentDate(d, 'outgoing')).toBe('2026-01-11');
    expect(paymentDate({ ...d, received_date: null }, 'incoming')).toBe('2026-01-10');
    expect(paymentDate({ ...d, written_off_date: null }, 'outgoing')).toBe('2026-01-10');
    expect(paymentDate({ date: null, received_date: null, written_off_date: '2026-01-11' }, 'incoming')).toBe('2026-01-11');
  });
});

describe('the deduplication key', () => {
  const base: DedupKeyInput = {
    direction: 'incoming',
    date: '2026-01-12',
    number: '101',
    amount: 1235400n,
    payer: { account: '40702810400000012345', inn: '7701234567' },
    recipient: { account: OWN_ACCOUNT },
  };

  it('is the same for the same payment, from either parse of the same file', () => {
    const bytes = encodeLines(statementLines());
    const [a, b] = [parseStatementBuffer(bytes), parseStatementBuffer(encodeLines(statementLines(), 'cp866', '\n'))];
    const key = (s: typeof a) => {
      const doc = s.documents[0]!;
      const dir = direction(doc, s.accounts.map((x) => x.account));
      return paymentDedupKey({ direction: dir, date: paymentDate(doc, dir), number: doc.number, amount: doc.amount, payer: doc.payer, recipient: doc.recipient });
    };
    expect(key(a)).toBe(key(b));
    expect(key(a)).toBe(paymentDedupKey(base));
    expect(paymentDedupKey(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores the payer INN when there is an account, and uses it when there is none', () => {
    expect(paymentDedupKey({ ...base, payer: { ...base.payer, inn: '1' } })).toBe(paymentDedupKey(base));
    const noAccount = { ...base, payer: { account: null, inn: '7701234567' } };
    expect(paymentDedupKey(noAccount)).not.toBe(paymentDedupKey(base));
    expect(paymentDedupKey({ ...noAccount, payer: { account: null, inn: '7700000000' } })).not.toBe(paymentDedupKey(noAccount));
    expect(paymentDedupKey({ ...base, payer: { account: '7701234567', inn: null } })).not.toBe(paymentDedupKey(noAccount));
  });

  it('differs when any part differs', () => {
    const variants: DedupKeyInput[] = [
      { ...base, direction: 'outgoing' },
      { ...base, date: '2026-01-13' },
      { ...base, number: '102' },
      { ...base, number: null },
      { ...base, amount: 1235401n },
      { ...base, payer: { ...base.payer, account: '40702810400000012346' } },
      { ...base, recipient: { account: SECOND } },
    ];
    const keys = new Set([base, ...variants].map(paymentDedupKey));
    expect(keys.size).toBe(variants.length + 1);
  });

  it('cannot be forged by moving text between parts', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const x = dedupKeyText({ ...base, number: a, recipient: { account: b } });
        const y = dedupKeyText({ ...base, number: `${a}\u001f`, recipient: { account: b } });
        expect(x.split('\u001f')).toHaveLength(7);
        expect(y.split('\u001f')).toHaveLength(7);
      }),
    );
  });
});

describe('the request amount rule', () => {
  it('reads numbers and decimal strings with at most two fraction digits to kopecks', () => {
    const cases: Array<[unknown, bigint]> = [
      [840, 84000n], [840.5, 84050n], [0.01, 1n], [0.1, 10n], [1234.56, 123456n], ['840', 84000n], ['840.5', 84050n], ['0.01', 1n],
      ['007.10', 710n], [999999999999.99, MAX_REQUEST_AMOUNT_KOPECKS], ['999999999999.99', MAX_REQUEST_AMOUNT_KOPECKS],
    ];
    for (const [value, kopecks] of cases) expect(parseRequestAmount(value), String(value)).toEqual({ ok: true, kopecks });
  });

  it('refuses everything else, saying why', () => {
    const cases: Array<[unknown, string]> = [
      [0.1 + 0.2, 'invalid_amount'], [1e21, 'invalid_amount'], [5e-7, 'invalid_amount'], [0.001, 'invalid_amount'], ['1.005', 'invalid_amount'],
      ['1e3', 'invalid_amount'], ['1,5', 'invalid_amount'], [' 5', 'invalid_amount'], ['+5', 'invalid_amount'], ['-5', 'invalid_amount'],
      [-5, 'invalid_amount'], ['', 'invalid_amount'], ['5.', 'invalid_amount'], ['.5', 'invalid_amount'], [NaN, 'invalid_amount'], [Infinity, 'invalid_amount'],
      [0, 'out_of_range'], ['0.00', 'out_of_range'], [-0, 'out_of_range'], [1e12, 'out_of_range'], ['1000000000000', 'out_of_range'],
      [true, 'invalid_type'], [{}, 'invalid_type'], [[5], 'invalid_type'], [5n, 'invalid_type'], [undefined, 'required'], [null, 'required'],
    ];
    for (const [value, code] of cases) expect(parseRequestAmount(value), String(value)).toMatchObject({ ok: false, code });
  });

  it('names the field in a 400 validation_failed', () => {
    expect(requireRequestAmount('12.30', 'allocations[0].amount')).toBe(1230n);
    const error = (() => {
      try {
        requireRequestAmount(0.1 + 0.2, 'allocations[0].amount');
      } catch (e) {
        return e;
      }
    })() as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.body).toMatchObject({ ok: false, error: 'validation_failed', missing_fields: [], errors: [{ field: 'allocations[0].amount', code: 'invalid_amount' }] });
    expect(error.body.details).toContain('allocations[0].amount');
  });

  it('property: any kopeck amount in range round-trips through a number and a string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_REQUEST_AMOUNT_KOPECKS }), (kopecks) => {
        const text = `${kopecks / 100n}.${String(kopecks % 100n).padStart(2, '0')}`;
        expect(parseRequestAmount(text)).toEqual({ ok: true, kopecks });
        expect(parseRequestAmount(Number(text))).toEqual({ ok: true, kopecks });
      }),
    );
  });
});
