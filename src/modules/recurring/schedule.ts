/**
 * The schedule of a recurring invoice (operating contract §6.3): occurrence 0 is the start
 * date, occurrence i is i periods later, each computed from the start (never step by step) so
 * a month-end start never drifts: monthly from Jan 31 gives Feb 28 (29), Mar 31, Apr 30…;
 * yearly from Feb 29 gives Feb 28 in common years and Feb 29 again in leap years.
 *
 * Pure: the caller passes the team's today (`localDateIn(now, team.timezone)`) and the count
 * of occurrences already made (`generated_count`). Occurrence i is made once, dated its own
 * date, in index order; the table of examples and the catch-up rule: docs/recurring.md.
 */
import { addDays, addMonthsClamped, isAfter, isBefore, parseCalendarDate, type CalendarDate } from '../../shared/calendar.js';
import { describeJsonType, fieldPath, type Checked, type FieldIssue } from '../../shared/field-issue.js';

export const SCHEDULE_PERIODS = ['week', 'month', 'quarter', 'year'] as const;
export type SchedulePeriod = (typeof SCHEDULE_PERIODS)[number];

export interface Schedule {
  every: SchedulePeriod;
  start_date: CalendarDate;
  /** The last date an occurrence may fall on (inclusive). */
  end_date?: CalendarDate;
  /** How many occurrences in all. */
  count?: number;
}

/** A thousand occurrences: 19 years weekly, 83 monthly; longer runs are a new schedule. */
export const SCHEDULE_COUNT_MAX = 1000;
/**
 * Occurrence dates become document dates, which are bounded to the years 1900–2999
 * (INVOICE_LIMITS); a schedule without an end finishes when its next date leaves them.
 */
export const SCHEDULE_YEAR_MIN = 1900;
export const SCHEDULE_YEAR_MAX = 2999;
const LAST_DATE = `${SCHEDULE_YEAR_MAX}-12-31`;
const SCHEDULE_KEYS = ['every', 'start_date', 'end_date', 'count'] as const;

function checkDate(value: unknown, field: string, issues: FieldIssue[]): CalendarDate | undefined {
  const parts = parseCalendarDate(value);
  if (!parts) {
    const got = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : describeJsonType(value);
    issues.push({ field, code: 'invalid_date', message: `${field} must be a calendar date YYYY-MM-DD, got ${got}` });
    return undefined;
  }
  if (parts.year < SCHEDULE_YEAR_MIN || parts.year > SCHEDULE_YEAR_MAX) {
    issues.push({ field, code: 'out_of_range', message: `${field} must be in the years ${SCHEDULE_YEAR_MIN}–${SCHEDULE_YEAR_MAX}, got ${value as string}` });
    return undefined;
  }
  return value as CalendarDate;
}

/**
 * Validates a schedule (a create's or update's `schedule`). `end_date` and `count` are both
 * optional and may be given together: the schedule finishes at whichever comes first; with
 * neither it runs until it is deleted. `end_date` may equal `start_date` (one occurrence).
 */
export function checkSchedule(input: unknown, prefix = 'schedule'): Checked<Schedule> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, issues: [{ field: prefix, code: 'invalid_type', message: `${prefix} must be an object, got ${describeJsonType(input)}` }] };
  }
  const body = input as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(body)) {
    if (!(SCHEDULE_KEYS as readonly string[]).includes(key)) {
      const field = fieldPath(prefix, key.slice(0, 100));
      issues.push({ field, code: 'unknown_field', message: `${field} is not a schedule field (${SCHEDULE_KEYS.join(', ')})` });
    }
  }
  const at = (name: string) => fieldPath(prefix, name);
  let every: SchedulePeriod | undefined;
  if (body.every === undefined || body.every === null) {
    issues.push({ field: at('every'), code: 'required', message: `${at('every')} is required: ${SCHEDULE_PERIODS.join(', ')}` });
  } else if (typeof body.every !== 'string' || !(SCHEDULE_PERIODS as readonly string[]).includes(body.every)) {
    issues.push({ field: at('every'), code: 'invalid_value', message: `${at('every')} must be one of ${SCHEDULE_PERIODS.join(', ')}` });
  } else {
    every = body.every as SchedulePeriod;
  }
  let start: CalendarDate | undefined;
  if (body.start_date === undefined || body.start_date === null) {
    issues.push({ field: at('start_date'), code: 'required', message: `${at('start_date')} is required` });
  } else {
    start = checkDate(body.start_date, at('start_date'), issues);
  }
  let end: CalendarDate | undefined;
  if (body.end_date !== undefined && body.end_date !== null) {
    end = checkDate(body.end_date, at('end_date'), issues);
    if (end !== undefined && start !== undefined && isBefore(end, start)) {
      issues.push({ field: at('end_date'), code: 'end_before_start', message: `${at('end_date')} ${end} is before ${at('start_date')} ${start}` });
    }
  }
  let count: number | undefined;
  if (body.count !== undefined && body.count !== null) {
    const c = body.count;
    if (typeof c !== 'number' || !Number.isInteger(c)) {
      issues.push({ field: at('count'), code: 'invalid_type', message: `${at('count')} must be a whole number, got ${typeof c === 'number' ? c : describeJsonType(c)}` });
    } else if (c < 1 || c > SCHEDULE_COUNT_MAX) {
      issues.push({ field: at('count'), code: 'out_of_range', message: `${at('count')} must be 1–${SCHEDULE_COUNT_MAX}, got ${c}` });
    } else {
      count = c;
    }
  }
  if (issues.length > 0 || every === undefined || start === undefined) return { ok: false, issues };
  const value: Schedule = { every, start_date: start };
  if (end !== undefined) value.end_date = end;
  if (count !== undefined) value.count = count;
  return { ok: true, value };
}

const MONTHS_PER_PERIOD = { month: 1, quarter: 3, year: 12 } as const;

/**
 * The date of occurrence `index` (0 = the start), or null when it falls after 2999-12-31.
 * Ignores `end_date` and `count`: `isFinished` and `nextDate` apply them.
 */
export function occurrenceDate(schedule: Schedule, index: number): CalendarDate | null {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`occurrence index must be a whole number ≥ 0, got ${index}`);
  // A step past the whole span of document years (1100 years) lands after the last date;
  // stopping there keeps the arithmetic inside the calendar's years.
  const years = SCHEDULE_YEAR_MAX - SCHEDULE_YEAR_MIN + 1;
  let date: CalendarDate;
  if (schedule.every === 'week') {
    if (7 * index > years * 366) return null;
    date = addDays(schedule.start_date, 7 * index);
  } else {
    const months = MONTHS_PER_PERIOD[schedule.every] * index;
    if (months > years * 12) return null;
    date = addMonthsClamped(schedule.start_date, months);
  }
  return isAfter(date, LAST_DATE) ? null : date;
}

/**
 * The date of the next occurrence to make after `generatedCount` have been made, or null when
 * the schedule is finished (count reached, past `end_date`, or past the last document year).
 */
export function nextDate(schedule: Schedule, generatedCount: number): CalendarDate | null {
  if (!Number.isSafeInteger(generatedCount) || generatedCount < 0) throw new RangeError(`generated count must be a whole number ≥ 0, got ${generatedCount}`);
  if (schedule.count !== undefined && generatedCount >= schedule.count) return null;
  const date = occurrenceDate(schedule, generatedCount);
  if (date === null) return null;
  if (schedule.end_date !== undefined && isAfter(date, schedule.end_date)) return null;
  return date;
}

/** True when no occurrence is left: the status is then `finished`. */
export function isFinished(schedule: Schedule, generatedCount: number): boolean {
  return nextDate(schedule, generatedCount) === null;
}

export interface Occurrence {
  index: number;
  date: CalendarDate;
}

/**
 * The occurrences to make now, in order: from index `generatedCount` on, every one whose date
 * is on or before `today`, within `end_date` and `count`, at most `max` (a pass makes a bounded
 * number per schedule, the next pass carries on from the new `generated_count`).
 */
export function dueOccurrences({ schedule, generatedCount, today, max }: { schedule: Schedule; generatedCount: number; today: CalendarDate; max: number }): Occurrence[] {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a whole number ≥ 1, got ${max}`);
  const out: Occurrence[] = [];
  for (let index = generatedCount; out.length < max; index++) {
    const date = nextDate(schedule, index);
    if (date === null || isAfter(date, today)) break;
    out.push({ index, date });
  }
  return out;
}
