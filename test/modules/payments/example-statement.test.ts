/**
 * examples/bank-statement-1c.txt (windows-1251, CRLF) read as the service reads it, and the
 * worked examples of docs/payments.md run on it against the demo team's documents.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  direction,
  matchPayment,
  parseStatement,
  paymentDate,
  type MatchCandidate,
  type ParsedStatement,
} from '../../../src/modules/payments/index.js';

const FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/bank-statement-1c.txt');

/** The demo seller «Ромашка»'s issued documents the examples run against. */
const VECTOR = '7704211201';
const SMIRNOV = '781012345678';
const NORTH_WIND = '7816123456';
const documents: MatchCandidate[] = [
  ['СЧ-1', VECTOR, 5_900_000n],
  ['СЧ-2', SMIRNOV, 1_200_000n],
  ['СЧ-3', SMIRNOV, 1_250_000n],
  ['СЧ-4', '7700000001', 150_000n],
  ['СЧ-5', NORTH_WIND, 2_000_000n],
  ['СЧ-6', NORTH_WIND, 1_000_000n],
  ['СЧ-7', VECTOR, 1_200_000n],
].map(([number, buyer_inn, outstanding], i) => ({
  public_id: `doc-${i + 1}`,
  number: number as string,
  date: `2026-01-0${i + 1}`,
  currency: 'RUB',
  buyer_inn: buyer_inn as string,
  seller_inn: '7707083893',
  outstanding: outstanding as bigint,
}));

describe('examples/bank-statement-1c.txt', () => {
  let statement: ParsedStatement;
  beforeAll(async () => {
    statement = await parseStatement(fs.createReadStream(FILE, { highWaterMark: 1024 })); // a stream, as a request body arrives
  });

  it('is a windows-1251 statement with CRLF line ends that adds up', () => {
    const bytes = fs.readFileSync(FILE);
    expect(bytes.toString('latin1').split('\r\n')).toHaveLength(259);
    expect(bytes.toString('latin1').split('\n')).toHaveLength(259);
    expect(statement).toMatchObject({ format_version: '1.03', encoding: 'windows-1251', sender: 'СберБизнес', date_from: '2026-01-12', date_to: '2026-01-16', warnings: [] });
    expect(statement.accounts).toMatchObject([{ account: '40702810938000000001', opening_balance: 15_000_000n, received_total: 14_285_240n, written_off_total: 8_549_000n, closing_balance: 20_736_240n }]);
    expect(statement.documents.map((d) => d.kind)).toEqual([
      'Платежное поручение', 'Платежное поручение', 'Банковский ордер', 'Банковский ордер', 'Платежное поручение', 'Мемориальный ордер', 'Платежное поручение', 'Платежное поручение',
    ]);
  });

  it('reads names, accounts and purposes by the format’s precedence rules', () => {
    const [, smirnov, , sbp, , , northWind] = statement.documents;
    expect(smirnov!.purpose).toBe('Оплата по счетам СЧ-2 от 10.01.2026 и СЧ-3 от 11.01.2026 за товары. Без налога (НДС)');
    expect(sbp!.payer).toMatchObject({ name: 'Иванов Иван Иванович', inn: null, account: '30232810838000000007' });
    expect(northWind!.payer).toMatchObject({ name: 'ООО "Северный ветер"', inn: NORTH_WIND, account: '40702810910000123456' });
  });

  it('gives directions, dates and the worked matching examples of docs/payments.md', () => {
    const accounts = statement.accounts.map((a) => a.account);
    const outcomes = statement.documents.map((d) => {
      const dir = direction(d, accounts);
      if (dir === 'outgoing') return [d.number, dir, paymentDate(d, dir)];
      const r = matchPayment({ amount: d.amount, currency: 'RUB', payer_inn: d.payer.inn, purpose: d.purpose }, documents);
      return [d.number, r.status, r.allocations.map((a) => `${a.public_id}:${a.amount}`).join(' '), r.candidates.map((c) => `${c.public_id}:${c.reasons.join('+')}`).join(' ')];
    });
    expect(outcomes).toEqual([
      ['412', 'matched', 'doc-1:5900000', ''], // (a)
      ['37', 'matched', 'doc-2:1200000 doc-3:1250000', ''], // (b)
      ['880131', 'unmatched', '', ''], // acquiring: nothing named, no document of the bank
      ['880245', 'review', '', 'doc-4:named_in_purpose+payer_differs+payer_inn_unknown+amount_equals_outstanding'], // SBP: no payer INN
      ['15', 'outgoing', '2026-01-15'],
      ['55102', 'outgoing', '2026-01-15'],
      ['1203', 'review', '', 'doc-5:named_in_purpose+payer_inn_equal+overpayment doc-6:named_in_purpose+payer_inn_equal+overpayment'], // 360.00 ≠ 200.00 + 100.00
      ['433', 'matched', 'doc-7:1200000', ''], // (c)
    ]);
  });
});
