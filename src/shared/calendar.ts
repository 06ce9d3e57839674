/**
 * Calendar dates as `YYYY-MM-DD` strings, and the local date and hour of an instant in an IANA
 * time zone. Pure: no clock reads (callers pass the instant), no host time zone.
 *
 * Date arithmetic works on whole day numbers (days since 1970-01-01, proleptic Gregorian),
 * never on local times, so no daylight-saving change can add or lose a day: a day is a day.
 * Only `localDateIn` / `localHourIn` touch time zones, through Intl (the tz database of the
 * Node build).
 *
 * Years are 0001–9999 (four digits keep `YYYY-MM-DD` strings in chronological order when
 * compared as text); arithmetic that leaves that range throws a RangeError.
 */

/** A calendar date, `YYYY-MM-DD`. */
export type CalendarDate = string;

export interface DateParts {
  year: number;
  month: number;
  day: number;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const YEAR_MIN = 1;
const YEAR_MAX = 9999;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** Days in `month` (1–12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  const days = MONTH_DAYS[month - 1];
  if (days === undefined) throw new RangeError(`month ${month} is not 1–12`);
  return days;
}

/** The parts of a real calendar date (`2026-02-29` is not one), or null. */
export function parseCalendarDate(value: unknown): DateParts | null {
  if (typeof value !== 'string') return null;
  const m = ISO_DATE.exec(value);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < YEAR_MIN || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return { year, month, day };
}

export function isCalendarDate(value: unknown): value is CalendarDate {
  return parseCalendarDate(value) !== null;
}

function partsOf(date: CalendarDate): DateParts {
  const parts = parseCalendarDate(date);
  if (!parts) throw new RangeError(`${JSON.stringify(date)} is not a calendar date YYYY-MM-DD`);
  return parts;
}

export function formatCalendarDate({ year, month, day }: DateParts): CalendarDate {
  if (!Number.isInteger(year) || year < YEAR_MIN || year > YEAR_MAX) throw new RangeError(`year ${year} is outside ${YEAR_MIN}–${YEAR_MAX}`);
  if (!Number.isInteger(month) || !Number.isInteger(day) || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw new RangeError(`${year}-${month}-${day} is not a calendar date`);
  }
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil: eras of
 * 400 years = 146097 days, years counted from March so the leap day comes last).
 */
function dayNumber({ year, month, day }: DateParts): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const marchMonth = (month + 9) % 12;
  const dayOfYear = Math.floor((153 * marchMonth + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** The inverse of `dayNumber` (civil_from_days). */
function partsOfDayNumber(n: number): DateParts {
  const z = n + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const marchMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * marchMonth + 2) / 5) + 1;
  const month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function requireInteger(n: number, what: string): void {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be an integer, got ${n}`);
}

/** `date` moved by `n` whole days (negative: back). */
export function addDays(date: CalendarDate, n: number): CalendarDate {
  requireInteger(n, 'days');
  return formatCalendarDate(partsOfDayNumber(dayNumber(partsOf(date)) + n));
}

/** Whole days from `a` to `b`: positive when `b` is later, 0 on the same date. */
export function daysBetween(a: CalendarDate, b: CalendarDate): number {
  return dayNumber(partsOf(b)) - dayNumber(partsOf(a));
}

/**
 * `start` moved by `months` calendar months, keeping the start's day of month or, when the
 * target month is shorter, its last day. Always computed from the start, never step by step,
 * so a series never drifts: from Jan 31, +1 → Feb 28 (29 in a leap year), +2 → Mar 31.
 */
export function addMonthsClamped(start: CalendarDate, months: number): CalendarDate {
  requireInteger(months, 'months');
  const { year, month, day } = partsOf(start);
  const index = year * 12 + (month - 1) + months;
  const targetYear = Math.floor(index / 12);
  const targetMonth = index - targetYear * 12 + 1;
  if (targetYear < YEAR_MIN || targetYear > YEAR_MAX) throw new RangeError(`year ${targetYear} is outside ${YEAR_MIN}–${YEAR_MAX}`);
  return formatCalendarDate({ year: targetYear, month: targetMonth, day: Math.min(day, daysInMonth(targetYear, targetMonth)) });
}

/** -1, 0 or 1. Four-digit years make text order chronological; both must be real dates. */
export function compareDates(a: CalendarDate, b: CalendarDate): -1 | 0 | 1 {
  partsOf(a);
  partsOf(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function isBefore(a: CalendarDate, b: CalendarDate): boolean {
  return compareDates(a, b) < 0;
}

export function isAfter(a: CalendarDate, b: CalendarDate): boolean {
  return compareDates(a, b) > 0;
}

/** The earliest of the dates, or null for none. */
export function earliestDate(dates: Iterable<CalendarDate>): CalendarDate | null {
  let earliest: CalendarDate | null = null;
  for (const d of dates) if (earliest === null || isBefore(d, earliest)) earliest = d;
  return earliest;
}

export function yearOf(date: CalendarDate): number {
  return partsOf(date).year;
}

export function monthOf(date: CalendarDate): number {
  return partsOf(date).month;
}

// ---- time zones ----

/** IANA names are at most ~30 characters ("America/Argentina/ComodRivadavia" is 32). */
const TIME_ZONE_MAX_LENGTH = 64;
/** Letters, digits and `/ _ + -`: every IANA name; offsets like "+03:00" are not names. */
const TIME_ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/**
 * One formatter per zone: building one costs tens of microseconds, formatting with it a few.
 * Keyed by the validated name; a zone count of ~600 bounds it, the cap guards against many
 * spellings of the same zones (names are case-insensitive to Intl).
 */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();
const FORMATTERS_MAX = 1000;

function formatterFor(timeZone: string): Intl.DateTimeFormat | null {
  const cached = FORMATTERS.get(timeZone);
  if (cached) return cached;
  if (typeof timeZone !== 'string' || timeZone.length > TIME_ZONE_MAX_LENGTH || !TIME_ZONE_SHAPE.test(timeZone)) return null;
  let formatter: Intl.DateTimeFormat;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      // h23: midnight is 00 (en-US with hour12:false gives "24" on some ICU versions).
      hourCycle: 'h23',
    });
  } catch {
    return null;
  }
  if (FORMATTERS.size >= FORMATTERS_MAX) FORMATTERS.clear();
  FORMATTERS.set(timeZone, formatter);
  return formatter;
}

/** True for a time zone name Intl knows (IANA names and their aliases, e.g. `Europe/Moscow`, `UTC`). */
export function isValidIanaTimeZone(name: unknown): name is string {
  return typeof name === 'string' && formatterFor(name) !== null;
}

/** The canonical spelling of a valid zone name (`europe/moscow` → `Europe/Moscow`), or null. */
export function canonicalTimeZone(name: unknown): string | null {
  if (typeof name !== 'string') return null;
  return formatterFor(name)?.resolvedOptions().timeZone ?? null;
}

function localParts(instant: Date, timeZone: string): { date: CalendarDate; hour: number } {
  const formatter = formatterFor(timeZone);
  if (!formatter) throw new RangeError(`${JSON.stringify(timeZone)} is not a known IANA time zone`);
  if (!(instant instanceof Date) || Number.isNaN(instant.getTime())) throw new RangeError('instant is not a valid Date');
  const fields: Record<string, string> = {};
  for (const part of formatter.formatToParts(instant)) fields[part.type] = part.value;
  const date = formatCalendarDate({ year: Number(fields.year), month: Number(fields.month), day: Number(fields.day) });
  return { date, hour: Number(fields.hour) };
}

/** The calendar date at `instant` in `timeZone`: the team's "today". */
export function localDateIn(instant: Date, timeZone: string): CalendarDate {
  return localParts(instant, timeZone).date;
}

/** The local hour (0–23) at `instant` in `timeZone`. */
export function localHourIn(instant: Date, timeZone: string): number {
  return localParts(instant, timeZone).hour;
}
