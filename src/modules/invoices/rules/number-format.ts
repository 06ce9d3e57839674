/**
 * A team's `number_format` (operating contract §6.3): literal text with the placeholders
 * `{YYYY}`, `{YY}`, `{MM}` (the document date's year and month), `{SEQ}` (the year's sequence
 * value) and `{SEQ:N}` (zero-padded to at least N digits). Default `"{SEQ}"`.
 *
 * Uniqueness: every placeholder but the sequence has a fixed width, so a number splits one way
 * only and two sequence values of one year never give the same number. A format is refused
 * when it has no sequence placeholder (every number would be the same) or two (one value is
 * the number). The sequence restarts each year, so a format without `{YYYY}` or `{YY}` (the
 * default `"{SEQ}"` among them) repeats numbers across years: accepted, since the contract's
 * default is such a format; `docs/recurring.md` says so.
 *
 * `sequenceValueOf` is the inverse the storage uses so that a number a client gave is never
 * produced by the sequence: the value that number stands for in the year, or null when the
 * format cannot produce it (the counter then need not move).
 */
import { describeJsonType, type Checked, type FieldIssue } from '../../../shared/field-issue.js';
import { INVOICE_LIMITS } from './limits.js';

export const DEFAULT_NUMBER_FORMAT = '{SEQ}';
/** A format's own length; the numbers it gives are bounded separately (NUMBER_MAX_LENGTH). */
export const NUMBER_FORMAT_MAX_LENGTH = 64;
/** A number is stored and validated as at most 64 characters (INVOICE_LIMITS.numberMaxLength). */
const NUMBER_MAX_LENGTH = INVOICE_LIMITS.numberMaxLength;
export const SEQ_PAD_MAX = 12;
/** The largest sequence value: a billion documents of one team in one year is beyond any tariff. */
export const SEQUENCE_MAX = 999_999_999;
const SEQUENCE_MAX_DIGITS = String(SEQUENCE_MAX).length;
/** Year placeholders render four digits: the document years are 1900–2999. */
const YEAR_MIN = 1000;
const YEAR_MAX = 9999;

/**
 * Literal characters: letters (Latin, Cyrillic), digits, space and `- _ / . # №`. Nothing that
 * quoting, URLs, file names of the PDF or the bank's purpose text would have to escape.
 */
const LITERAL_CHAR = /^[A-Za-z0-9А-Яа-яЁё \-_/.#№]$/;
const ALLOWED_LITERALS = 'letters, digits, space and - _ / . # №';

export type NumberFormatPart =
  | { kind: 'literal'; text: string }
  | { kind: 'year4' }
  | { kind: 'year2' }
  | { kind: 'month' }
  | { kind: 'seq'; pad: number };

/** A parsed, valid format. */
export interface NumberFormat {
  source: string;
  parts: readonly NumberFormatPart[];
}

const FIXED_WIDTH = { year4: 4, year2: 2, month: 2 } as const;

/** The part a placeholder's inner text names, or the reason it names none. */
function placeholderPart(inner: string): NumberFormatPart | string {
  if (inner === 'YYYY') return { kind: 'year4' };
  if (inner === 'YY') return { kind: 'year2' };
  if (inner === 'MM') return { kind: 'month' };
  if (inner === 'SEQ') return { kind: 'seq', pad: 1 };
  if (inner.startsWith('SEQ:')) {
    const n = inner.slice(4);
    if (!/^\d{1,2}$/.test(n) || Number(n) < 1 || Number(n) > SEQ_PAD_MAX) {
      return `{${inner}}: the padding N of {SEQ:N} must be a whole number 1–${SEQ_PAD_MAX}`;
    }
    return { kind: 'seq', pad: Number(n) };
  }
  const hint = ['YYYY', 'YY', 'MM', 'SEQ'].includes(inner.toUpperCase()) ? ` (placeholders are upper case: {${inner.toUpperCase()}})` : '';
  return `unknown placeholder {${inner}}${hint}: use {YYYY}, {YY}, {MM}, {SEQ} or {SEQ:N}`;
}

/** The longest number the parts can give: the sequence at SEQUENCE_MAX or its padding. */
function longestNumber(parts: readonly NumberFormatPart[]): number {
  let length = 0;
  for (const p of parts) {
    if (p.kind === 'literal') length += p.text.length;
    else if (p.kind === 'seq') length += Math.max(p.pad, SEQUENCE_MAX_DIGITS);
    else length += FIXED_WIDTH[p.kind];
  }
  return length;
}

/** Parses and validates a format; every problem is named with the position it is at. */
export function parseNumberFormat(value: unknown, field = 'number_format'): Checked<NumberFormat> {
  const fail = (code: string, message: string): Checked<NumberFormat> => ({ ok: false, issues: [{ field, code, message: `${field}: ${message}` }] });
  if (typeof value !== 'string') return fail('invalid_type', `must be a string, got ${describeJsonType(value)}`);
  if (value.length === 0) return fail('required', 'must not be empty');
  if (value.length > NUMBER_FORMAT_MAX_LENGTH) return fail('too_long', `must be at most ${NUMBER_FORMAT_MAX_LENGTH} characters, got ${value.length}`);
  if (value !== value.trim()) return fail('invalid_format', 'must not start or end with a space (numbers are trimmed)');

  const parts: NumberFormatPart[] = [];
  const issues: FieldIssue[] = [];
  let literal = '';
  let seqCount = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value.charAt(i);
    if (ch === '{') {
      const close = value.indexOf('}', i + 1);
      const nextOpen = value.indexOf('{', i + 1);
      if (close < 0 || (nextOpen >= 0 && nextOpen < close)) {
        issues.push({ field, code: 'invalid_placeholder', message: `${field}: "{" at position ${i + 1} is not closed by "}"` });
        break;
      }
      const part = placeholderPart(value.slice(i + 1, close));
      if (typeof part === 'string') {
        issues.push({ field, code: 'invalid_placeholder', message: `${field}: ${part}` });
      } else {
        if (literal !== '') parts.push({ kind: 'literal', text: literal });
        literal = '';
        if (part.kind === 'seq') seqCount++;
        parts.push(part);
      }
      i = close;
    } else if (ch === '}') {
      issues.push({ field, code: 'invalid_placeholder', message: `${field}: "}" at position ${i + 1} has no "{" before it` });
    } else if (!LITERAL_CHAR.test(ch)) {
      issues.push({ field, code: 'invalid_character', message: `${field}: character ${JSON.stringify(ch)} at position ${i + 1} is not allowed; literal text may use ${ALLOWED_LITERALS}` });
    } else {
      literal += ch;
    }
  }
  if (literal !== '') parts.push({ kind: 'literal', text: literal });
  if (issues.length > 0) return { ok: false, issues };
  if (seqCount === 0) return fail('sequence_missing', 'must contain {SEQ} or {SEQ:N} exactly once: without it every number would be the same');
  if (seqCount > 1) return fail('sequence_repeated', `contains the sequence ${seqCount} times; it must appear exactly once`);
  const longest = longestNumber(parts);
  if (longest > NUMBER_MAX_LENGTH) {
    return fail('too_long', `gives numbers of up to ${longest} characters (the sequence counted at ${SEQUENCE_MAX_DIGITS} digits); a number holds at most ${NUMBER_MAX_LENGTH}`);
  }
  return { ok: true, value: { source: value, parts } };
}

function requireFormat(format: NumberFormat | string): NumberFormat {
  if (typeof format !== 'string') return format;
  const parsed = parseNumberFormat(format);
  if (!parsed.ok) throw new TypeError(parsed.issues.map((i) => i.message).join('; '));
  return parsed.value;
}

function requireInRange(n: number, min: number, max: number, what: string): void {
  if (!Number.isInteger(n) || n < min || n > max) throw new RangeError(`${what} must be an integer ${min}–${max}, got ${n}`);
}

export interface NumberValues {
  /** The document date's year. */
  year: number;
  /** The document date's month, 1–12. */
  month: number;
  /** The year's sequence value, 1–SEQUENCE_MAX. */
  seq: number;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The number the format gives: `formatNumber('СЧ-{YY}/{SEQ:4}', {year: 2026, month: 3, seq: 7})` → "СЧ-26/0007". */
export function formatNumber(format: NumberFormat | string, { year, month, seq }: NumberValues): string {
  const { parts } = requireFormat(format);
  requireInRange(year, YEAR_MIN, YEAR_MAX, 'year');
  requireInRange(month, 1, 12, 'month');
  requireInRange(seq, 1, SEQUENCE_MAX, 'sequence value');
  let out = '';
  for (const p of parts) {
    if (p.kind === 'literal') out += p.text;
    else if (p.kind === 'year4') out += pad(year, 4);
    else if (p.kind === 'year2') out += pad(year % 100, 2);
    else if (p.kind === 'month') out += pad(month, 2);
    else out += pad(seq, p.pad);
  }
  return out;
}

/**
 * The sequence value `number` stands for in `year` under `format` (its `{MM}` may be any month
 * of the year), or null when the format cannot give that number in that year. Exact: under
 * `{SEQ:4}` "0007" is 7 and "7" is null (the sequence writes 7 as "0007"); under `{SEQ}`
 * "0007" is null and "7" is 7; "12345" is 12345 under both.
 */
export function sequenceValueOf(format: NumberFormat | string, number: string, year: number): number | null {
  const { parts } = requireFormat(format);
  requireInRange(year, YEAR_MIN, YEAR_MAX, 'year');
  let fixed = 0;
  for (const p of parts) if (p.kind !== 'seq') fixed += p.kind === 'literal' ? p.text.length : FIXED_WIDTH[p.kind];
  const seqWidth = number.length - fixed;
  if (seqWidth < 1 || seqWidth > Math.max(SEQUENCE_MAX_DIGITS, SEQ_PAD_MAX)) return null;

  let at = 0;
  let seq: number | null = null;
  for (const p of parts) {
    if (p.kind === 'seq') {
      const digits = number.slice(at, at + seqWidth);
      if (!/^\d+$/.test(digits)) return null;
      const value = Number(digits);
      // Only the rendering the sequence itself would give: no extra or missing zeros.
      if (value < 1 || value > SEQUENCE_MAX || pad(value, p.pad) !== digits) return null;
      seq = value;
      at += seqWidth;
      continue;
    }
    const width = p.kind === 'literal' ? p.text.length : FIXED_WIDTH[p.kind];
    const piece = number.slice(at, at + width);
    at += width;
    if (p.kind === 'literal' && piece !== p.text) return null;
    if (p.kind === 'year4' && piece !== pad(year, 4)) return null;
    if (p.kind === 'year2' && piece !== pad(year % 100, 2)) return null;
    if (p.kind === 'month' && !/^(0[1-9]|1[0-2])$/.test(piece)) return null;
  }
  return seq;
}
