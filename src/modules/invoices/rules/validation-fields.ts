/**
 * Building blocks of invoice validation: the bounds, an issue collector and readers for one
 * field each. Every reader reports into the collector and returns `undefined` when the value
 * is unusable, so the caller carries on and one pass reports every problem of the document.
 */
import { toDecimal } from '../../../shared/money.js';
import type { ValidationIssue } from '../model/invoice.model.js';
import { INVOICE_LIMITS } from './limits.js';

export { INVOICE_LIMITS };


/** How many messages `details` quotes before pointing at `errors` for the rest. */
const DETAILS_MAX_MESSAGES = 20;

export class IssueCollector {
  readonly errors: ValidationIssue[] = [];
  readonly missingFields: string[] = [];
  readonly warnings: ValidationIssue[] = [];

  error(field: string, code: string, message: string): undefined {
    this.errors.push({ field, code, message });
    return undefined;
  }

  /** A required path with no value: listed in `missing_fields` and as a `required` error. */
  missing(field: string, message = `${field} is required`): undefined {
    this.missingFields.push(field);
    return this.error(field, 'required', message);
  }

  warn(field: string, code: string, message: string): void {
    this.warnings.push({ field, code, message });
  }

  warnAll(issues: readonly ValidationIssue[]): void {
    this.warnings.push(...issues);
  }

  /** "3 fields are invalid: items[0].qty must be greater than 0; ..." */
  summary(): string {
    const fields = new Set(this.errors.map((e) => e.field)).size;
    const head = fields === 1 ? '1 field is invalid' : `${fields} fields are invalid`;
    const quoted = this.errors.slice(0, DETAILS_MAX_MESSAGES).map((e) => e.message);
    const rest = this.errors.length - quoted.length;
    return `${head}: ${quoted.join('; ')}${rest > 0 ? `; and ${rest} more (see errors)` : ''}`;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Absent, null or a blank string: "not given". */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}


/** True when `s` has more than `max` characters (code points), counting no further than needed. */
export function longerThan(s: string, max: number): boolean {
  if (s.length <= max) return false;
  if (s.length > 2 * max) return true;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++count > max) return true;
  }
  return false;
}

export function readString(value: unknown, path: string, c: IssueCollector, opts: { max: number; trim?: boolean }): string | undefined {
  if (typeof value !== 'string') return c.error(path, 'invalid_type', `${path} must be a string, got ${describeType(value)}`);
  const s = opts.trim ? value.trim() : value;
  // PostgreSQL text cannot hold U+0000, and no invoice text needs it: refuse it rather than fail the write.
  if (s.includes('\u0000')) return c.error(path, 'invalid_character', `${path} must not contain the NUL character (U+0000)`);
  // In characters (code points), as the databases count them, counting no further than needed.
  if (longerThan(s, opts.max)) {
    return c.error(path, 'too_long', `${path} must be at most ${opts.max} characters`);
  }
  return s;
}

export interface NumberRule {
  required: boolean;
  min: number;
  /** true: the value must be greater than `min`, not equal to it. */
  minExclusive?: boolean;
  max: number;
  maxDecimals: number;
}

/**
 * A JSON number within bounds and with at most `maxDecimals` decimals. Decimals are counted on
 * the decimal literal (`toDecimal`), so 0.1 has one decimal, not the 55 of its binary value.
 * Absent or null is "not given" (reported when required); a string is `invalid_type`.
 */
export function readNumber(value: unknown, path: string, c: IssueCollector, rule: NumberRule): number | undefined {
  if (rule.required ? isBlank(value) : value === undefined || value === null) {
    return rule.required ? c.missing(path) : undefined;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return c.error(path, 'invalid_type', `${path} must be a JSON number, got ${describeType(value)}`);
  }
  if (rule.minExclusive ? value <= rule.min : value < rule.min) {
    return c.error(path, 'out_of_range', `${path} must be ${rule.minExclusive ? 'greater than' : 'at least'} ${rule.min}`);
  }
  if (value > rule.max) return c.error(path, 'out_of_range', `${path} must be at most ${rule.max}`);
  if (decimalPlaces(value, path) > rule.maxDecimals) {
    return c.error(path, 'too_many_decimals', `${path} must have at most ${rule.maxDecimals} decimals`);
  }
  return value === 0 ? 0 : value; // -0 is stored as 0
}

/**
 * The decimals of a finite number's literal, as `toDecimal(value).decimalPlaces()` counts them:
 * `String(value)` is that literal, and without an exponent its decimals are the digits after
 * the point (never trailing zeros); with one, decimal arithmetic counts them.
 */
export function decimalPlaces(value: number, path = 'value'): number {
  const text = String(value);
  if (text.includes('e')) return toDecimal(value, path).decimalPlaces();
  const point = text.indexOf('.');
  return point === -1 ? 0 : text.length - point - 1;
}

/** Absent or null is "not given"; anything else must be a boolean. */
export function readBoolean(value: unknown, path: string, c: IssueCollector): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') return c.error(path, 'invalid_type', `${path} must be true or false, got ${describeType(value)}`);
  return value;
}

/** One of `allowed`, exactly (no case folding); absent, null or blank is "not given". */
export function readEnum<T extends string>(value: unknown, path: string, allowed: readonly T[], c: IssueCollector): T | undefined {
  if (isBlank(value)) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    return c.error(path, 'invalid_value', `${path} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Proleptic Gregorian; `Date.UTC` is avoided because it maps years 0–99 to 1900–1999. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** `YYYY-MM-DD`, a real calendar date (no 30 February), in years 1900–2999. */
export function readDate(value: unknown, path: string, c: IssueCollector, required: boolean): string | undefined {
  if (isBlank(value)) return required ? c.missing(path) : undefined;
  if (typeof value !== 'string') return c.error(path, 'invalid_type', `${path} must be a date string YYYY-MM-DD, got ${describeType(value)}`);
  const m = ISO_DATE.exec(value);
  if (!m) return c.error(path, 'invalid_format', `${path} must be a date in the form YYYY-MM-DD`);
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return c.error(path, 'invalid_date', `${path} ${value} is not a calendar date`);
  }
  if (year < INVOICE_LIMITS.yearMin || year > INVOICE_LIMITS.yearMax) {
    return c.error(path, 'out_of_range', `${path} must be in the years ${INVOICE_LIMITS.yearMin}–${INVOICE_LIMITS.yearMax}`);
  }
  return value;
}
