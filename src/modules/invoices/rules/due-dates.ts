/**
 * Due dates and being overdue (operating contract §6.2). Pure: the caller passes the team's
 * "today" (`localDateIn(now, team.timezone)`), the document's status and what is outstanding.
 *
 * - `due_date` (a date not before `date`) or `payment_terms_days` (integer 0–365, due date =
 *   date + days); neither: the team's default terms; no default either: no due date, never
 *   overdue.
 * - Both given: they must name the same day, else 400 on `due_date`. Of the two readings
 *   (refuse a disagreement, or let one silently win) this is the stricter: a client that sends
 *   both and gets a due date it did not mean finds out only when a reminder goes out.
 * - Overdue: the due date is before today, the document is `issued` and something is
 *   outstanding; `days_overdue` = whole days from the due date to today (1 the day after it).
 */
import { addDays, daysBetween, isBefore, isCalendarDate, type CalendarDate } from '../../../shared/calendar.js';
import { describeJsonType, type Checked, type FieldIssue } from '../../../shared/field-issue.js';
import { toDecimal } from '../../../shared/money.js';
import type { SellerStatus } from './statuses.js';

/** Payment terms of at most a year: longer "terms" are no invoice's terms. */
export const PAYMENT_TERMS_DAYS_MAX = 365;

export type DueDateSource = 'due_date' | 'payment_terms_days' | 'team_default' | 'none';

export interface ResolvedDueDate {
  /** The due date, or null: the document has none and is never overdue. */
  due_date: CalendarDate | null;
  /** Where it came from. */
  source: DueDateSource;
}

export interface DueDateInput {
  /** The document date, already validated as a calendar date. */
  date: CalendarDate;
  /** The payload's values, as given (absent, null or blank: not given). */
  due_date?: unknown;
  payment_terms_days?: unknown;
}

const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/**
 * Checks a payment-terms value (a payload's `payment_terms_days` or a team's default in the
 * bootstrap file): a JSON integer 0–365. Returns the issue, or null when it is fine.
 */
export function paymentTermsDaysIssue(value: unknown, field: string): FieldIssue | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return { field, code: 'invalid_type', message: `${field} must be a whole number of days, got ${describeJsonType(value)}` };
  }
  if (!Number.isInteger(value)) return { field, code: 'not_integer', message: `${field} must be a whole number of days, got ${value}` };
  if (value < 0 || value > PAYMENT_TERMS_DAYS_MAX) {
    return { field, code: 'out_of_range', message: `${field} must be 0–${PAYMENT_TERMS_DAYS_MAX}, got ${value}` };
  }
  return null;
}

/**
 * The document's due date from its payload and the team's default terms (null: the team has
 * none). `teamDefaultDays` was validated when the bootstrap file was read; an invalid one is
 * a programming error and throws.
 */
export function resolveDueDate(input: DueDateInput, teamDefaultDays: number | null = null): Checked<ResolvedDueDate> {
  const issues: FieldIssue[] = [];
  let dueDate: CalendarDate | undefined;
  let termsDate: CalendarDate | undefined;

  if (!isBlank(input.due_date)) {
    if (!isCalendarDate(input.due_date)) {
      issues.push({ field: 'due_date', code: 'invalid_date', message: `due_date must be a calendar date YYYY-MM-DD, got ${JSON.stringify(input.due_date)}` });
    } else if (isBefore(input.due_date, input.date)) {
      issues.push({ field: 'due_date', code: 'due_date_before_date', message: `due_date ${input.due_date} is before the document date ${input.date}` });
    } else {
      dueDate = input.due_date;
    }
  }
  if (!isBlank(input.payment_terms_days)) {
    const issue = paymentTermsDaysIssue(input.payment_terms_days, 'payment_terms_days');
    if (issue) issues.push(issue);
    else termsDate = addDays(input.date, input.payment_terms_days as number);
  }
  if (dueDate !== undefined && termsDate !== undefined && dueDate !== termsDate) {
    const days = daysBetween(input.date, dueDate);
    issues.push({
      field: 'due_date',
      code: 'due_date_conflict',
      message: `due_date ${dueDate} is ${days} days after the date, payment_terms_days says ${String(input.payment_terms_days)} (${termsDate}): give one of them, or both naming the same day`,
    });
  }
  if (issues.length > 0) return { ok: false, issues };
  if (dueDate !== undefined) return { ok: true, value: { due_date: dueDate, source: 'due_date' } };
  if (termsDate !== undefined) return { ok: true, value: { due_date: termsDate, source: 'payment_terms_days' } };
  if (teamDefaultDays !== null) {
    const issue = paymentTermsDaysIssue(teamDefaultDays, 'teams[].payment_terms_days');
    if (issue) throw new RangeError(issue.message);
    return { ok: true, value: { due_date: addDays(input.date, teamDefaultDays), source: 'team_default' } };
  }
  return { ok: true, value: { due_date: null, source: 'none' } };
}

export interface OverdueInput {
  dueDate: CalendarDate | null;
  /** The team's today: `localDateIn(now, team.timezone)`. */
  today: CalendarDate;
  sellerStatus: SellerStatus;
  /** What is still to pay: a decimal string (rubles or kopecks: only its sign matters) or kopecks as a bigint. */
  outstanding: string | bigint;
}

export interface OverdueState {
  overdue: boolean;
  /** Whole days since the due date when overdue, else 0. */
  days_overdue: number;
}

function isPositive(amount: string | bigint): boolean {
  return typeof amount === 'bigint' ? amount > 0n : toDecimal(amount, 'outstanding').gt(0);
}

export function overdueState({ dueDate, today, sellerStatus, outstanding }: OverdueInput): OverdueState {
  if (dueDate === null || sellerStatus !== 'issued' || !isBefore(dueDate, today) || !isPositive(outstanding)) {
    return { overdue: false, days_overdue: 0 };
  }
  return { overdue: true, days_overdue: daysBetween(dueDate, today) };
}

/** The first date on which a document with this due date can be overdue: the day after it. */
export function firstOverdueDate(dueDate: CalendarDate): CalendarDate {
  return addDays(dueDate, 1);
}
