import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  addMonthsClamped,
  canonicalTimeZone,
  compareDates,
  daysBetween,
  daysInMonth,
  earliestDate,
  isAfter,
  isBefore,
  isCalendarDate,
  isValidIanaTimeZone,
  localDateIn,
  localHourIn,
  monthOf,
  parseCalendarDate,
  yearOf,
} from '../../src/shared/calendar.js';

/** A date as JavaScript's own UTC calendar computes it: the reference for the day arithmetic. */
const viaDate = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const arbDate = fc
  .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

describe('calendar dates', () => {
  it('accepts real dates only', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2000-02-29')).toBe(true);
    for (const bad of ['2026-02-29', '1900-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-1-5', '26-01-05', '2026-01-05T00:00', '0000-01-01', 20260105, null]) {
      expect(isCalendarDate(bad), String(bad)).toBe(false);
    }
    expect(parseCalendarDate('2026-03-09')).toEqual({ year: 2026, month: 3, day: 9 });
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2100, 2)).toBe(28);
    expect(() => daysInMonth(2024, 13)).toThrow(RangeError);
  });

  it('adds days across month, year and leap-day boundaries', () => {
    expect(addDays('2026-01-31', 1)).toBe('2026-02-01');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2025-02-28', 1)).toBe('2025-03-01');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-03-10', 0)).toBe('2026-03-10');
    expect(addDays('2026-01-01', 365)).toBe('2027-01-01');
    expect(() => addDays('2026-01-01', 1.5)).toThrow(RangeError);
    expect(() => addDays('2026-02-30', 1)).toThrow(RangeError);
    expect(() => addDays('9999-12-31', 1)).toThrow(RangeError);
  });

  it('counts whole days exactly, also across DST changes (dates carry no time of day)', () => {
    expect(daysBetween('2026-03-28', '2026-03-30')).toBe(2); // Europe's spring change is 2026-03-29
    expect(daysBetween('2026-10-24', '2026-10-26')).toBe(2); // and the autumn one 2026-10-25
    expect(daysBetween('2024-01-01', '2025-01-01')).toBe(366);
    expect(daysBetween('2026-03-10', '2026-03-01')).toBe(-9);
    expect(daysBetween('2026-03-10', '2026-03-10')).toBe(0);
  });

  it('agrees with the UTC calendar of Date for any date and step (property)', () => {
    fc.assert(
      fc.property(arbDate, fc.integer({ min: -40_000, max: 40_000 }), (date, n) => {
        const expected = viaDate(date, n);
        if (expected < '1900' || expected > '3000') return;
        expect(addDays(date, n)).toBe(expected);
        expect(daysBetween(date, expected)).toBe(n);
      }),
    );
  });

  it('clamps months to the month end relative to the start, never drifting', () => {
    const fromJan31 = [0, 1, 2, 3, 4, 13, 14].map((m) => addMonthsClamped('2024-01-31', m));
    expect(fromJan31).toEqual(['2024-01-31', '2024-02-29', '2024-03-31', '2024-04-30', '2024-05-31', '2025-02-28', '2025-03-31']);
    expect(addMonthsClamped('2024-02-29', 12)).toBe('2025-02-28');
    expect(addMonthsClamped('2024-02-29', 48)).toBe('2028-02-29');
    expect(addMonthsClamped('2025-11-30', 3)).toBe('2026-02-28');
    expect(addMonthsClamped('2025-11-30', 6)).toBe('2026-05-30');
    expect(addMonthsClamped('2026-03-31', -1)).toBe('2026-02-28');
    expect(addMonthsClamped('2026-01-15', -13)).toBe('2024-12-15');
  });

  it('month steps keep the day of month or the month end (property)', () => {
    fc.assert(
      fc.property(arbDate, fc.integer({ min: -2400, max: 2400 }), (start, months) => {
        const result = addMonthsClamped(start, months);
        const s = parseCalendarDate(start)!;
        const r = parseCalendarDate(result)!;
        expect((r.year - s.year) * 12 + (r.month - s.month)).toBe(months);
        expect(r.day).toBe(Math.min(s.day, daysInMonth(r.year, r.month)));
      }),
    );
  });

  it('compares and picks dates', () => {
    expect(compareDates('2026-01-02', '2026-01-10')).toBe(-1);
    expect(compareDates('2026-01-10', '2026-01-10')).toBe(0);
    expect(isBefore('2025-12-31', '2026-01-01')).toBe(true);
    expect(isAfter('2025-12-31', '2026-01-01')).toBe(false);
    expect(earliestDate(['2026-05-01', '2026-02-01', '2026-03-01'])).toBe('2026-02-01');
    expect(earliestDate([])).toBeNull();
    expect(yearOf('2026-07-04')).toBe(2026);
    expect(monthOf('2026-07-04')).toBe(7);
    expect(() => compareDates('2026-02-30', '2026-03-01')).toThrow(RangeError);
  });
});

describe('time zones', () => {
  it('knows IANA names and refuses anything else', () => {
    for (const good of ['Europe/Moscow', 'Asia/Vladivostok', 'America/Los_Angeles', 'UTC', 'Etc/GMT-3', 'America/Argentina/Buenos_Aires']) {
      expect(isValidIanaTimeZone(good), good).toBe(true);
    }
    for (const bad of ['Mars/Olympus', 'Europe/Moscow ', '+03:00', 'MSK+3:00', '', 'a'.repeat(65), '../etc/passwd', 42, null, undefined]) {
      expect(isValidIanaTimeZone(bad), String(bad)).toBe(false);
    }
    expect(canonicalTimeZone('europe/moscow')).toBe('Europe/Moscow');
    expect(canonicalTimeZone('Nowhere/Place')).toBeNull();
  });

  it('gives the local date: already tomorrow in Vladivostok, still yesterday in Los Angeles', () => {
    const instant = new Date('2026-03-01T15:30:00Z');
    expect(localDateIn(instant, 'UTC')).toBe('2026-03-01');
    expect(localDateIn(instant, 'Asia/Vladivostok')).toBe('2026-03-02'); // UTC+10: 01:30
    expect(localHourIn(instant, 'Asia/Vladivostok')).toBe(1);
    const early = new Date('2026-03-01T05:00:00Z');
    expect(localDateIn(early, 'America/Los_Angeles')).toBe('2026-02-28'); // UTC−8: 21:00
    expect(localHourIn(early, 'America/Los_Angeles')).toBe(21);
    expect(localDateIn(new Date('2026-12-31T21:00:00Z'), 'Europe/Moscow')).toBe('2027-01-01'); // 00:00 MSK
    expect(localHourIn(new Date('2026-12-31T21:00:00Z'), 'Europe/Moscow')).toBe(0);
  });

  it('follows daylight saving time where the zone has it', () => {
    // New York: EST (UTC−5) until 2026-03-08 02:00 local, EDT (UTC−4) after.
    expect(localHourIn(new Date('2026-03-08T06:30:00Z'), 'America/New_York')).toBe(1);
    expect(localHourIn(new Date('2026-03-08T07:30:00Z'), 'America/New_York')).toBe(3);
    // 04:30 UTC: 23:30 on the 7th in EST, 00:30 on the 8th once EDT starts the day before.
    expect(localDateIn(new Date('2026-03-08T04:30:00Z'), 'America/New_York')).toBe('2026-03-07');
    expect(localDateIn(new Date('2026-03-09T04:30:00Z'), 'America/New_York')).toBe('2026-03-09');
    // Berlin: CET until 2026-03-29 01:00 UTC, CEST after; back on 2026-10-25 01:00 UTC.
    expect(localHourIn(new Date('2026-03-29T00:30:00Z'), 'Europe/Berlin')).toBe(1);
    expect(localHourIn(new Date('2026-03-29T01:30:00Z'), 'Europe/Berlin')).toBe(3);
    expect(localHourIn(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe(2);
    expect(localHourIn(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe(2);
    // Moscow has no DST: UTC+3 all year.
    expect(localHourIn(new Date('2026-07-01T06:00:00Z'), 'Europe/Moscow')).toBe(9);
    expect(localHourIn(new Date('2026-01-01T06:00:00Z'), 'Europe/Moscow')).toBe(9);
  });

  it('refuses an unknown zone or an invalid instant', () => {
    expect(() => localDateIn(new Date(), 'Nowhere/Place')).toThrow(RangeError);
    expect(() => localHourIn(new Date(Number.NaN), 'UTC')).toThrow(RangeError);
  });

  it('every local date is within a day of the UTC date (property)', () => {
    const zones = ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Kathmandu', 'America/St_Johns', 'Europe/Moscow', 'Australia/Lord_Howe'];
    fc.assert(
      fc.property(fc.date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true }), fc.constantFrom(...zones), (instant, zone) => {
        const utc = instant.toISOString().slice(0, 10);
        expect(Math.abs(daysBetween(utc, localDateIn(instant, zone)))).toBeLessThanOrEqual(1);
        const hour = localHourIn(instant, zone);
        expect(hour >= 0 && hour <= 23).toBe(true);
      }),
    );
  });
});
