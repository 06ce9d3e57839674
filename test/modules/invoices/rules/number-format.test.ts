import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_NUMBER_FORMAT,
  SEQUENCE_MAX,
  formatNumber,
  parseNumberFormat,
  sequenceValueOf,
} from '../../../../src/modules/invoices/rules/number-format.js';

function refusal(format: unknown): { code: string; message: string } {
  const parsed = parseNumberFormat(format);
  if (parsed.ok) throw new Error(`${String(format)} was accepted`);
  const first = parsed.issues[0]!;
  expect(first.field).toBe('number_format');
  return { code: first.code, message: first.message };
}

describe('parseNumberFormat', () => {
  it('accepts the default and the placeholders with literal text', () => {
    for (const format of [DEFAULT_NUMBER_FORMAT, '{SEQ:4}', 'СЧ-{YYYY}-{SEQ:4}', 'INV/{YY}{MM}/{SEQ}', '№ {SEQ:6}', '{SEQ}-{YYYY}', 'A_1.{MM}#{SEQ:12}']) {
      expect(parseNumberFormat(format).ok, format).toBe(true);
    }
    const parsed = parseNumberFormat('СЧ-{YY}/{SEQ:4}');
    expect(parsed.ok && parsed.value.parts).toEqual([
      { kind: 'literal', text: 'СЧ-' },
      { kind: 'year2' },
      { kind: 'literal', text: '/' },
      { kind: 'seq', pad: 4 },
    ]);
  });

  it('refuses a format without the sequence, or with it twice', () => {
    expect(refusal('{YYYY}-{MM}')).toEqual({
      code: 'sequence_missing',
      message: 'number_format: must contain {SEQ} or {SEQ:N} exactly once: without it every number would be the same',
    });
    expect(refusal('INV-1')).toMatchObject({ code: 'sequence_missing' });
    expect(refusal('{SEQ}-{SEQ:3}')).toMatchObject({ code: 'sequence_repeated', message: 'number_format: contains the sequence 2 times; it must appear exactly once' });
  });

  it('names an unknown or malformed placeholder', () => {
    expect(refusal('{DD}-{SEQ}').message).toBe('number_format: unknown placeholder {DD}: use {YYYY}, {YY}, {MM}, {SEQ} or {SEQ:N}');
    expect(refusal('{seq}').message).toBe('number_format: unknown placeholder {seq} (placeholders are upper case: {SEQ}): use {YYYY}, {YY}, {MM}, {SEQ} or {SEQ:N}');
    expect(refusal('{}{SEQ}')).toMatchObject({ code: 'invalid_placeholder' });
    for (const pad of ['0', '13', '', 'x', '04a', '-1', '100']) {
      expect(refusal(`{SEQ:${pad}}`).message, pad).toBe(`number_format: {SEQ:${pad}}: the padding N of {SEQ:N} must be a whole number 1–12`);
    }
    expect(refusal('INV-{SEQ').message).toBe('number_format: "{" at position 5 is not closed by "}"');
    expect(refusal('{YY{SEQ}').message).toBe('number_format: "{" at position 1 is not closed by "}"');
    expect(refusal('INV}-{SEQ}').message).toBe('number_format: "}" at position 4 has no "{" before it');
  });

  it('refuses characters outside the safe set, naming them and their position', () => {
    expect(refusal('INV<{SEQ}').message).toBe('number_format: character "<" at position 4 is not allowed; literal text may use letters, digits, space and - _ / . # №');
    for (const bad of ['"{SEQ}', "{SEQ}'", 'a\tb{SEQ}', 'a\\{SEQ}', '{SEQ}%', 'Ä{SEQ}', '😀{SEQ}', '{SEQ}?x=1']) {
      expect(refusal(bad).code, bad).toBe('invalid_character');
    }
  });

  it('bounds the format and the numbers it gives', () => {
    expect(refusal(42)).toMatchObject({ code: 'invalid_type', message: 'number_format: must be a string, got a number' });
    expect(refusal('')).toMatchObject({ code: 'required' });
    expect(refusal(' {SEQ}')).toMatchObject({ code: 'invalid_format' });
    expect(refusal(`${'A'.repeat(60)}{SEQ}`)).toMatchObject({ code: 'too_long', message: 'number_format: must be at most 64 characters, got 65' });
    // 55 literal characters + up to 9 sequence digits = 64: the longest number still fits.
    expect(parseNumberFormat(`${'A'.repeat(55)}{SEQ}`).ok).toBe(true);
    expect(refusal(`${'A'.repeat(56)}{SEQ}`).message).toBe(
      'number_format: gives numbers of up to 65 characters (the sequence counted at 9 digits); a number holds at most 64',
    );
    expect(refusal(`${'A'.repeat(56)}{SEQ:1}`)).toMatchObject({ code: 'too_long' });
    expect(refusal('{SEQ}\n')).toMatchObject({ code: 'invalid_format' });
    // Four-digit years take fewer characters than their placeholders: 64 in, 64 out.
    expect(parseNumberFormat(`${'A'.repeat(44)}{YYYY}{YYYY}{SEQ:12}`).ok).toBe(true);
  });

  it('reports every bad character and placeholder in one answer', () => {
    const parsed = parseNumberFormat('<{X}>{SEQ}');
    expect(parsed.ok ? [] : parsed.issues.map((i) => i.code)).toEqual(['invalid_character', 'invalid_placeholder', 'invalid_character']);
  });
});

describe('formatNumber', () => {
  it('fills the placeholders, padding the sequence but never cutting it', () => {
    expect(formatNumber('{SEQ}', { year: 2026, month: 3, seq: 7 })).toBe('7');
    expect(formatNumber('{SEQ:4}', { year: 2026, month: 3, seq: 7 })).toBe('0007');
    expect(formatNumber('{SEQ:4}', { year: 2026, month: 3, seq: 12345 })).toBe('12345');
    expect(formatNumber('СЧ-{YYYY}-{MM}/{SEQ:3}', { year: 2026, month: 3, seq: 42 })).toBe('СЧ-2026-03/042');
    expect(formatNumber('{YY}{SEQ}', { year: 2005, month: 11, seq: 1 })).toBe('051');
    expect(formatNumber('{SEQ:12}', { year: 2026, month: 1, seq: SEQUENCE_MAX })).toBe('000999999999');
  });

  it('refuses values outside their ranges and an invalid format', () => {
    expect(() => formatNumber('{SEQ}', { year: 2026, month: 1, seq: 0 })).toThrow(RangeError);
    expect(() => formatNumber('{SEQ}', { year: 2026, month: 1, seq: SEQUENCE_MAX + 1 })).toThrow(RangeError);
    expect(() => formatNumber('{SEQ}', { year: 2026, month: 13, seq: 1 })).toThrow(RangeError);
    expect(() => formatNumber('{SEQ}', { year: 2026, month: 1, seq: 1.5 })).toThrow(RangeError);
    expect(() => formatNumber('{DD}', { year: 2026, month: 1, seq: 1 })).toThrow(TypeError);
  });
});

describe('sequenceValueOf', () => {
  it('reads the value a number stands for, only as the sequence itself would write it', () => {
    expect(sequenceValueOf('{SEQ}', '7', 2026)).toBe(7);
    expect(sequenceValueOf('{SEQ}', '0007', 2026)).toBeNull();
    expect(sequenceValueOf('{SEQ:4}', '0007', 2026)).toBe(7);
    expect(sequenceValueOf('{SEQ:4}', '7', 2026)).toBeNull();
    expect(sequenceValueOf('{SEQ:4}', '12345', 2026)).toBe(12345);
    expect(sequenceValueOf('{SEQ:4}', '01234', 2026)).toBeNull();
    expect(sequenceValueOf('{SEQ}', '0', 2026)).toBeNull();
    expect(sequenceValueOf('{SEQ}', '', 2026)).toBeNull();
    expect(sequenceValueOf('{SEQ}', '7a', 2026)).toBeNull();
    expect(sequenceValueOf('{SEQ}', '1000000000', 2026)).toBeNull(); // past SEQUENCE_MAX
  });

  it('matches literals and the year exactly and takes any month of the year', () => {
    const f = 'СЧ-{YYYY}-{MM}/{SEQ:3}';
    expect(sequenceValueOf(f, 'СЧ-2026-03/042', 2026)).toBe(42);
    expect(sequenceValueOf(f, 'СЧ-2026-12/042', 2026)).toBe(42);
    expect(sequenceValueOf(f, 'СЧ-2026-13/042', 2026)).toBeNull();
    expect(sequenceValueOf(f, 'СЧ-2026-00/042', 2026)).toBeNull();
    expect(sequenceValueOf(f, 'СЧ-2025-03/042', 2026)).toBeNull();
    expect(sequenceValueOf(f, 'сч-2026-03/042', 2026)).toBeNull();
    expect(sequenceValueOf('{YY}{SEQ}', '26100', 2026)).toBe(100);
    expect(sequenceValueOf('{YY}{SEQ}', '25100', 2026)).toBeNull();
    // The sequence in front: its width is what the fixed parts leave.
    expect(sequenceValueOf('{SEQ}{MM}', '11202', 2026)).toBe(112);
    expect(sequenceValueOf('{SEQ}/{YY}', '15/26', 2026)).toBe(15);
  });

  it('a format without a year reads the same number in every year', () => {
    expect(sequenceValueOf('INV-{SEQ}', 'INV-9', 2026)).toBe(9);
    expect(sequenceValueOf('INV-{SEQ}', 'INV-9', 2027)).toBe(9);
  });

  it('inverts formatNumber for every format, month and value (property)', () => {
    const literal = fc.constantFrom('', 'INV-', 'СЧ', '/', '№ ', '-', '0', '1', '.');
    const placeholder = fc.constantFrom('{YYYY}', '{YY}', '{MM}', '');
    const seq = fc.constantFrom('{SEQ}', '{SEQ:1}', '{SEQ:3}', '{SEQ:6}', '{SEQ:12}');
    const arbFormat = fc
      .tuple(literal, placeholder, literal, seq, literal, placeholder, literal)
      .map((parts) => parts.join(''))
      .filter((f) => f === f.trim());
    fc.assert(
      fc.property(arbFormat, fc.integer({ min: 1900, max: 2999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: SEQUENCE_MAX }), (format, year, month, seq) => {
        const number = formatNumber(format, { year, month, seq });
        expect(sequenceValueOf(format, number, year)).toBe(seq);
      }),
    );
  });

  it('two values of one year never give the same number (property)', () => {
    const formats = ['{SEQ}', '{MM}{SEQ}', '{SEQ}{MM}', '1{SEQ:2}', '{SEQ:3}0', '{YY}{MM}{SEQ}'];
    fc.assert(
      fc.property(
        fc.constantFrom(...formats),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        (format, m1, m2, a, b) => {
          fc.pre(a !== b);
          expect(formatNumber(format, { year: 2026, month: m1, seq: a })).not.toBe(formatNumber(format, { year: 2026, month: m2, seq: b }));
        },
      ),
    );
  });
});
