import fc from 'fast-check';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { StatementParser, detectEncoding, parseStatementBuffer, type ParsedStatement } from '../../../src/modules/payments/index.js';
import { encodeLines, statementLines, type Encoding } from './statement-builder.js';

const LINES = statementLines({ documents: [{ purpose: 'Оплата по счёту №СЧ-15 от 10.01.2026 "Ёлка" - ёж, без НДС' }, { kind: 'Банковский ордер', number: '7002' }] });
const reference = parseStatementBuffer(encodeLines(LINES, 'utf-8'));
const withoutEncoding = (s: ParsedStatement) => ({ ...s, encoding: undefined });

/** Feeds the bytes in pieces cut at the given offsets. */
function parseInPieces(bytes: Buffer, cuts: number[]): { statement: ParsedStatement; parser: StatementParser } {
  const parser = new StatementParser();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parser.push(bytes.subarray(at, cut));
    at = cut;
  }
  parser.push(bytes.subarray(at));
  return { statement: parser.end(), parser };
}

describe('encoding detection', () => {
  const cases: Array<[Encoding, string, ParsedStatement['encoding']]> = [
    ['utf-8', '\r\n', 'utf-8'],
    ['utf-8', '\n', 'utf-8'],
    ['utf-8-bom', '\r\n', 'utf-8'],
    ['utf-8-bom', '\n', 'utf-8'],
    ['windows-1251', '\r\n', 'windows-1251'],
    ['windows-1251', '\n', 'windows-1251'],
    ['cp866', '\r\n', 'cp866'],
    ['cp866', '\n', 'cp866'],
  ];
  for (const [encoding, eol, detected] of cases) {
    it(`reads ${encoding} with ${JSON.stringify(eol)} line ends to the same statement`, () => {
      const s = parseStatementBuffer(encodeLines(LINES, encoding, eol));
      expect(s.encoding).toBe(detected);
      expect(withoutEncoding(s)).toEqual(withoutEncoding(reference));
      expect(s.documents[0]!.purpose).toBe('Оплата по счёту №СЧ-15 от 10.01.2026 "Ёлка" - ёж, без НДС');
    });
  }

  it('ignores the header’s Кодировка: a cp866 file labelled Windows and a 1251 file labelled DOS', () => {
    expect(parseStatementBuffer(encodeLines(statementLines({ encodingLabel: 'Windows' }), 'cp866')).encoding).toBe('cp866');
    expect(parseStatementBuffer(encodeLines(statementLines({ encodingLabel: 'DOS' }), 'windows-1251')).encoding).toBe('windows-1251');
  });

  it('is right when the first Cyrillic comes after 100 KB of ASCII', () => {
    const ascii = Array.from({ length: 100 }, (_, i) => `Comment${i}=${'a'.repeat(1000)}`);
    const lines = ['1CClientBankExchange', ...ascii, ...statementLines().slice(1)];
    for (const encoding of ['utf-8', 'windows-1251', 'cp866'] as const) {
      const s = parseStatementBuffer(encodeLines(lines, encoding));
      expect(s.encoding).toBe(encoding);
      expect(s.documents[0]!.payer.name).toBe('ООО "Покупатель"');
      expect(s.header['Comment99']).toHaveLength(1000);
    }
  });

  it('decides on the sample whatever the chunking, holding at most 64 KiB', () => {
    for (const encoding of ['utf-8', 'utf-8-bom', 'windows-1251', 'cp866'] as const) {
      const bytes = encodeLines(LINES, encoding);
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (cuts) => {
          const { statement } = parseInPieces(bytes, cuts);
          expect(withoutEncoding(statement)).toEqual(withoutEncoding(reference));
        }),
        { numRuns: 60 },
      );
      // One byte at a time: a BOM, a CRLF and every multi-byte sequence are cut.
      const oneByOne = parseInPieces(bytes, Array.from({ length: bytes.length }, (_, i) => i));
      expect(withoutEncoding(oneByOne.statement)).toEqual(withoutEncoding(reference));
    }
    const big = encodeLines(statementLines({ documents: Array.from({ length: 2000 }, () => ({})) }), 'windows-1251');
    const parser = new StatementParser();
    for (let i = 0; i < big.length; i += 16 * 1024) parser.push(big.subarray(i, i + 16 * 1024));
    expect(parser.end().documents).toHaveLength(2000);
    expect(parser.stats().max_held_bytes).toBeLessThanOrEqual(64 * 1024);
    expect(parser.stats().max_held_bytes).toBeGreaterThan(0);
  });

  it('warns undecodable_bytes, naming the line, for a corrupt byte of UTF-8 inside or after the sample', () => {
    const docs = Array.from({ length: 40 }, (_, i) => ({ number: String(i + 1), purpose: `Оплата ${'ПЛАТЁЖ'.repeat(20)} MARK${i}` }));
    const text = Buffer.from(encodeLines(statementLines({ documents: docs }), 'utf-8'));
    text[text.indexOf('СберБизнес') + 2] = 0xff; // line 4, inside the sample that decides
    text[text.indexOf('MARK39')] = 0xff; // after it
    const s = parseStatementBuffer(text);
    expect(s.encoding).toBe('utf-8');
    expect(s.warnings).toEqual([
      { code: 'undecodable_bytes', message: expect.any(String), line: 4 },
      { code: 'undecodable_bytes', message: expect.any(String), line: s.documents[39]!.line + 23 },
    ]);
    expect(s.documents[39]!.purpose).toContain('\uFFFD');
    expect(s.documents[39]!.number).toBe('40');
    expect(s.sender).toMatch(/^С\uFFFD+ербизнес$/i);
  });
});

describe('detectEncoding on samples', () => {
  const sample = (text: string, encoding: string) => [iconv.encode(text, encoding)];

  it('tells the three apart on one key', () => {
    expect(detectEncoding(sample('СекцияДокумент', 'utf8'))).toBe('utf-8');
    expect(detectEncoding(sample('СекцияДокумент', 'win1251'))).toBe('windows-1251');
    expect(detectEncoding(sample('СекцияДокумент', 'cp866'))).toBe('cp866');
  });

  it('does not count a UTF-8 sequence cut by the end of the sample against UTF-8', () => {
    const bytes = Buffer.from('Сумма', 'utf8');
    expect(detectEncoding([bytes.subarray(0, bytes.length - 1)])).toBe('utf-8');
  });

  it('takes the byte ranges’ majority for any Cyrillic text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ'), minLength: 12 }), (word) => {
        expect(detectEncoding(sample(`Ключ${word}`, 'win1251'))).toBe('windows-1251');
        expect(detectEncoding(sample(`Ключ${word}`, 'cp866'))).toBe('cp866');
        expect(detectEncoding(sample(`Ключ${word}`, 'utf8'))).toBe('utf-8');
      }),
    );
  });
});
