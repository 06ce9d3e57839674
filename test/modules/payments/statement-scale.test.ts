import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { STATEMENT_LIMITS, StatementParser, parseStatementBuffer } from '../../../src/modules/payments/index.js';
import { OWN_ACCOUNT, encodeLines } from './statement-builder.js';

/** A compact document (~240 bytes in windows-1251): 20,000 of them fill the 5 MB. */
function compactDocument(i: number): string[] {
  return [
    'СекцияДокумент=Банковский ордер',
    `Номер=${i}`,
    'Дата=12.01.2026',
    `Сумма=${1000 + (i % 997)}.${String(i % 100).padStart(2, '0')}`,
    `ПлательщикСчет=407028104000${String(i).padStart(8, '0')}`,
    `ПлательщикИНН=77${String(i).padStart(8, '0')}`,
    `ПолучательСчет=${OWN_ACCOUNT}`,
    `НазначениеПлатежа=Оплата по СЧ-${i} без НДС`,
    'КонецДокумента',
  ];
}

function statementOf(documents: number): Buffer {
  const lines = ['1CClientBankExchange', 'ВерсияФормата=1.03', `РасчСчет=${OWN_ACCOUNT}`];
  for (let i = 1; i <= documents; i++) lines.push(...compactDocument(i));
  lines.push('КонецФайла');
  return encodeLines(lines, 'windows-1251');
}

const expectedTotal = (documents: number): bigint => {
  let total = 0n;
  for (let i = 1; i <= documents; i++) total += BigInt(1000 + (i % 997)) * 100n + BigInt(i % 100);
  return total;
};

/** Best of `runs` parse times, in ms: the least disturbed by other work on the machine. */
function bestParseMs(bytes: Buffer, runs: number): number {
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    parseStatementBuffer(bytes);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe('a statement at the size bound', () => {
  it('parses 20,000 documents in 5 MB, in 64 KiB pieces, holding bounded buffers', () => {
    const bytes = statementOf(20_000);
    expect(bytes.length).toBeGreaterThan(4.5 * 1024 * 1024);
    expect(bytes.length).toBeLessThanOrEqual(STATEMENT_LIMITS.maxBytes);
    const parser = new StatementParser();
    for (let at = 0; at < bytes.length; at += 64 * 1024) parser.push(bytes.subarray(at, at + 64 * 1024));
    const statement = parser.end();
    expect(statement.documents).toHaveLength(20_000);
    expect(statement.documents.reduce((sum, d) => sum + d.amount, 0n)).toBe(expectedTotal(20_000));
    expect(statement.documents[19_999]).toMatchObject({ number: '20000', purpose: 'Оплата по СЧ-20000 без НДС', payer: { inn: '7700020000' } });
    const stats = parser.stats();
    expect(stats.bytes).toBe(bytes.length);
    expect(stats.max_held_bytes).toBeLessThanOrEqual(64 * 1024);
    expect(stats.max_carried_chars).toBeLessThan(100); // only the line cut by a piece's end is carried
  });

  it('takes time linear in the file: eight times the documents, far under sixty-four times the time', () => {
    const small = statementOf(2_500);
    const large = statementOf(20_000);
    bestParseMs(small, 1); // warm-up
    const ratio = bestParseMs(large, 2) / bestParseMs(small, 3);
    // Linear is ~8, up to ~11 as the larger result outgrows the young generation and the garbage
    // collector copies it; a quadratic step (all text so far copied per line or piece) is ~64.
    expect(ratio).toBeLessThan(24);
  });
});
