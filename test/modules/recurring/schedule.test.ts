import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, daysInMonth, isAfter, parseCalendarDate } from '../../../src/shared/calendar.js';
import {
  SCHEDULE_PERIODS,
  checkSchedule,
  dueOccurrences,
  isFinished,
  nextDate,
  occurrenceDate,
  type Schedule,
} from '../../../src/modules/recurring/schedule.js';

const dates = (schedule: Schedule, n: number) => Array.from({ length: n }, (_, i) => occurrenceDate(schedule, i));
const issues = (input: unknown) => {
  const r = checkSchedule(input);
  return r.ok ? [] : r.issues.map((i) => `${i.field}:${i.code}`);
};

describe('checkSchedule', () => {
  it('accepts a schedule with an end date, a count, both or neither', () => {
    expect(checkSchedule({ every: 'month', start_date: '2026-01-31' })).toEqual({ ok: true, value: { every: 'month', start_date: '2026-01-31' } });
    expect(checkSchedule({ every: 'week', start_date: '2026-01-05', end_date: '2026-01-05', count: 1000 })).toEqual({
      ok: true,
      value: { every: 'week', start_date: '2026-01-05', end_date: '2026-01-05', count: 1000 },
    });
    expect(checkSchedule({ every: 'year', start_date: '2024-02-29', end_date: null, count: null })).toEqual({ ok: true, value: { every: 'year', start_date: '2024-02-29' } });
  });

  it('refuses each bad field with its path', () => {
    expect(issues({})).toEqual(['schedule.every:required', 'schedule.start_date:required']);
    expect(issues({ every: 'day', start_date: '2026-02-30' })).toEqual(['schedule.every:invalid_value', 'schedule.start_date:invalid_date']);
    expect(issues({ every: 'month', start_date: '2026-03-01', end_date: '2026-02-28' })).toEqual(['schedule.end_date:end_before_start']);
    expect(issues({ every: 'month', start_date: '1899-12-31' })).toEqual(['schedule.start_date:out_of_range']);
    expect(issues({ every: 'month', start_date: '2026-03-01', count: 0 })).toEqual(['schedule.count:out_of_range']);
    expect(issues({ every: 'month', start_date: '2026-03-01', count: 1001 })).toEqual(['schedule.count:out_of_range']);
    expect(issues({ every: 'month', start_date: '2026-03-01', count: 2.5 })).toEqual(['schedule.count:invalid_type']);
    expect(issues({ every: 'month', start_date: '2026-03-01', count: '3' })).toEqual(['schedule.count:invalid_type']);
    expect(issues({ every: 'month', start_date: '2026-03-01', until: '2027-01-01' })).toEqual(['schedule.until:unknown_field']);
    expect(issues('monthly')).toEqual(['schedule:invalid_type']);
    const r = checkSchedule({ every: 'month', start_date: '2026-03-01', end_date: '2026-02-01' });
    expect(r.ok ? '' : r.issues[0]?.message).toBe('schedule.end_date 2026-02-01 is before schedule.start_date 2026-03-01');
  });
});

describe('occurrenceDate', () => {
  it('weekly: every seven days', () => {
    expect(dates({ every: 'week', start_date: '2026-12-24' }, 3)).toEqual(['2026-12-24', '2026-12-31', '2027-01-07']);
  });

  it('monthly from Jan 31 over a leap year: the month end, back to the 31st when the month has it', () => {
    expect(dates({ every: 'month', start_date: '2024-01-31' }, 14)).toEqual([
      '2024-01-31', '2024-02-29', '2024-03-31', '2024-04-30', '2024-05-31', '2024-06-30', '2024-07-31',
      '2024-08-31', '2024-09-30', '2024-10-31', '2024-11-30', '2024-12-31', '2025-01-31', '2025-02-28',
    ]);
    expect(dates({ every: 'month', start_date: '2026-01-30' }, 3)).toEqual(['2026-01-30', '2026-02-28', '2026-03-30']);
  });

  it('quarterly from Nov 30: Feb 28 (29), then the 30th again', () => {
    expect(dates({ every: 'quarter', start_date: '2025-11-30' }, 5)).toEqual(['2025-11-30', '2026-02-28', '2026-05-30', '2026-08-30', '2026-11-30']);
    expect(dates({ every: 'quarter', start_date: '2023-11-30' }, 2)).toEqual(['2023-11-30', '2024-02-29']);
  });

  it('yearly from Feb 29: Feb 28 in common years, Feb 29 in leap years', () => {
    expect(dates({ every: 'year', start_date: '2024-02-29' }, 5)).toEqual(['2024-02-29', '2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29']);
    expect(occurrenceDate({ every: 'year', start_date: '2096-02-29' }, 4)).toBe('2100-02-28'); // 2100 is no leap year
  });

  it('ends after 2999-12-31 (the last document date)', () => {
    expect(occurrenceDate({ every: 'year', start_date: '2998-06-01' }, 1)).toBe('2999-06-01');
    expect(occurrenceDate({ every: 'year', start_date: '2998-06-01' }, 2)).toBeNull();
    expect(occurrenceDate({ every: 'week', start_date: '2999-12-30' }, 1_000_000)).toBeNull();
    expect(nextDate({ every: 'year', start_date: '2998-06-01' }, 2)).toBeNull();
    expect(() => occurrenceDate({ every: 'week', start_date: '2026-01-01' }, -1)).toThrow(RangeError);
  });

  it('month steps keep the start day or the month end, computed from the start (property)', () => {
    const start = fc.date({ min: new Date('1900-01-01'), max: new Date('2900-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    fc.assert(
      fc.property(start, fc.constantFrom('month', 'quarter', 'year') as fc.Arbitrary<'month' | 'quarter' | 'year'>, fc.integer({ min: 0, max: 1000 }), (start_date, every, index) => {
        const date = occurrenceDate({ every, start_date }, index);
        if (date === null) return;
        const s = parseCalendarDate(start_date)!;
        const d = parseCalendarDate(date)!;
        const step = { month: 1, quarter: 3, year: 12 }[every];
        expect((d.year - s.year) * 12 + d.month - s.month).toBe(step * index);
        expect(d.day).toBe(Math.min(s.day, daysInMonth(d.year, d.month)));
      }),
    );
  });
});

describe('nextDate and isFinished', () => {
  it('finishes after count occurrences', () => {
    const s: Schedule = { every: 'month', start_date: '2026-01-31', count: 3 };
    expect([0, 1, 2, 3].map((n) => nextDate(s, n))).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', null]);
    expect(isFinished(s, 2)).toBe(false);
    expect(isFinished(s, 3)).toBe(true);
  });

  it('finishes after end_date, which is inclusive', () => {
    const s: Schedule = { every: 'week', start_date: '2026-03-02', end_date: '2026-03-16' };
    expect([0, 1, 2, 3].map((n) => nextDate(s, n))).toEqual(['2026-03-02', '2026-03-09', '2026-03-16', null]);
    expect(isFinished({ every: 'week', start_date: '2026-03-02', end_date: '2026-03-15' }, 2)).toBe(true);
  });

  it('with both, at whichever comes first; with neither, never (until deleted)', () => {
    expect(isFinished({ every: 'month', start_date: '2026-01-01', end_date: '2026-12-31', count: 2 }, 2)).toBe(true);
    expect(isFinished({ every: 'month', start_date: '2026-01-01', end_date: '2026-02-15', count: 5 }, 2)).toBe(true);
    expect(nextDate({ every: 'month', start_date: '2026-01-01' }, 500)).toBe('2067-09-01');
  });
});

describe('dueOccurrences', () => {
  const monthly: Schedule = { every: 'month', start_date: '2026-01-31' };

  it('gives every occurrence whose date has come, each with its own date', () => {
    expect(dueOccurrences({ schedule: monthly, generatedCount: 0, today: '2026-04-29', max: 10 })).toEqual([
      { index: 0, date: '2026-01-31' },
      { index: 1, date: '2026-02-28' },
      { index: 2, date: '2026-03-31' },
    ]);
    expect(dueOccurrences({ schedule: monthly, generatedCount: 3, today: '2026-04-29', max: 10 })).toEqual([]);
    expect(dueOccurrences({ schedule: monthly, generatedCount: 3, today: '2026-04-30', max: 10 })).toEqual([{ index: 3, date: '2026-04-30' }]);
    expect(dueOccurrences({ schedule: monthly, generatedCount: 0, today: '2026-01-30', max: 10 })).toEqual([]);
  });

  it('catches up at most max at a time, carrying on from the new count', () => {
    const weekly: Schedule = { every: 'week', start_date: '2026-01-01' };
    const today = '2026-03-01'; // 9 occurrences due: Jan 1 … Feb 26
    const first = dueOccurrences({ schedule: weekly, generatedCount: 0, today, max: 4 });
    expect(first.map((o) => o.index)).toEqual([0, 1, 2, 3]);
    const second = dueOccurrences({ schedule: weekly, generatedCount: 4, today, max: 4 });
    expect(second.map((o) => o.date)).toEqual(['2026-01-29', '2026-02-05', '2026-02-12', '2026-02-19']);
    expect(dueOccurrences({ schedule: weekly, generatedCount: 8, today, max: 4 })).toEqual([{ index: 8, date: '2026-02-26' }]);
    expect(() => dueOccurrences({ schedule: weekly, generatedCount: 0, today, max: 0 })).toThrow(RangeError);
  });

  it('respects count and end_date during catch-up', () => {
    const today = '2027-01-01';
    expect(dueOccurrences({ schedule: { ...monthly, count: 2 }, generatedCount: 0, today, max: 50 })).toHaveLength(2);
    expect(dueOccurrences({ schedule: { ...monthly, end_date: '2026-05-30' }, generatedCount: 0, today, max: 50 }).map((o) => o.date)).toEqual([
      '2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30',
    ]);
  });

  it('passes in any rhythm make each occurrence exactly once, in order, never before its date (property)', () => {
    const arbSchedule = fc.record({
      every: fc.constantFrom(...SCHEDULE_PERIODS),
      start_date: fc.date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
      end_offset: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined }),
      count: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(arbSchedule, fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 5 }), (a, gaps, max) => {
        const schedule: Schedule = { every: a.every, start_date: a.start_date };
        if (a.end_offset !== undefined) schedule.end_date = addDays(a.start_date, a.end_offset);
        if (a.count !== undefined) schedule.count = a.count;
        let generated = 0;
        let today = addDays(a.start_date, -3);
        for (const gap of gaps) {
          today = addDays(today, gap);
          const made = dueOccurrences({ schedule, generatedCount: generated, today, max });
          expect(made.length).toBeLessThanOrEqual(max);
          for (const o of made) {
            expect(o.index).toBe(generated);
            expect(o.date).toBe(occurrenceDate(schedule, o.index));
            expect(isAfter(o.date, today)).toBe(false);
            if (schedule.end_date) expect(isAfter(o.date, schedule.end_date)).toBe(false);
            generated++;
          }
          if (schedule.count !== undefined) expect(generated).toBeLessThanOrEqual(schedule.count);
          // Nothing due is left behind when the pass was not cut by max.
          const next = nextDate(schedule, generated);
          if (made.length < max) expect(next === null || isAfter(next, today)).toBe(true);
        }
      }),
    );
  });
});
