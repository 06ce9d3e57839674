/**
 * The values of a statement line: amounts to exact kopecks, dates to calendar dates, names.
 * Pure; an unreadable value throws StatementError naming its line.
 */
import { StatementError, type Kopecks } from './statement-types.js';

/**
 * `840`, `840.5`, `12354.00`, `1,5`: digits, then optionally `.` or `,` and one or two digits.
 * At most 15 integer digits (999 trillion rubles), far above any payment. No sign, no spaces,
 * no exponent, no third fraction digit (a kopeck is the smallest unit: nothing is rounded).
 */
const STATEMENT_AMOUNT = /^(\d{1,15})(?:[.,](\d{1,2}))?$/;
/** Balances (`НачальныйОстаток`, `КонечныйОстаток`) may be negative on an overdraft account. */
const STATEMENT_BALANCE = /^(-?)(\d{1,15})(?:[.,](\d{1,2}))?$/;
const STATEMENT_DATE = /^(\d{2})\.(\d{2})\.(\d{4})$/;

function kopecks(whole: string, fraction: string | undefined): Kopecks {
  return BigInt(whole) * 100n + BigInt((fraction ?? '').padEnd(2, '0'));
}

/** A document's `Сумма` or a section total: a non-negative amount in kopecks. */
export function parseStatementAmount(value: string, line: number, key: string): Kopecks {
  const m = STATEMENT_AMOUNT.exec(value);
  if (m === null) throw new StatementError('invalid_amount', line, `${key} is not an amount: ${JSON.stringify(value.slice(0, 40))}`);
  return kopecks(m[1] as string, m[2]);
}

/** An account balance in kopecks; a leading `-` is allowed. */
export function parseStatementBalance(value: string, line: number, key: string): Kopecks {
  const m = STATEMENT_BALANCE.exec(value);
  if (m === null) throw new StatementError('invalid_amount', line, `${key} is not an amount: ${JSON.stringify(value.slice(0, 40))}`);
  const k = kopecks(m[2] as string, m[3]);
  return m[1] === '-' ? -k : k;
}

/** Days in each month of a common year; February gains one in a Gregorian leap year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** True for a real Gregorian calendar date (year 1–9999). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = (MONTH_DAYS[month - 1] as number) + (month === 2 && leap ? 1 : 0);
  return day <= days;
}

/** `dd.mm.yyyy` → `YYYY-MM-DD`; anything else, or a day that does not exist (31.02), is refused. */
export function parseStatementDate(value: string, line: number, key: string): string {
  const m = STATEMENT_DATE.exec(value);
  if (m === null || !isCalendarDate(Number(m[3]), Number(m[2]), Number(m[1]))) {
    throw new StatementError('invalid_date', line, `${key} is not a date dd.mm.yyyy: ${JSON.stringify(value.slice(0, 40))}`);
  }
  return `${m[3]}-${m[2]}-${m[1]}`;
}

/** `Плательщик` often reads «ИНН 7707083893 ООО Ромашка» (sometimes with «КПП nnn» after it): the name alone. */
const LEADING_REQUISITES = /^ИНН\s*\d*\s*(?:КПП\s*\d*\s*)?/iu;

/** The name from a `Плательщик` / `Получатель` value: a leading «ИНН nnn» (and «КПП nnn») stripped. */
export function nameWithoutInn(value: string): string {
  return value.replace(LEADING_REQUISITES, '').trim();
}
