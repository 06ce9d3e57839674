import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, localDateIn } from '../../../../src/shared/calendar.js';
import { firstOverdueDate, overdueState, paymentTermsDaysIssue, resolveDueDate } from '../../../../src/modules/invoices/rules/due-dates.js';

const codes = (r: ReturnType<typeof resolveDueDate>) => (r.ok ? [] : r.issues.map((i) => `${i.field}:${i.code}`));

describe('resolveDueDate', () => {
  it('takes due_date as given', () => {
    expect(resolveDueDate({ date: '2026-03-01', due_date: '2026-03-15' })).toEqual({ ok: true, value: { due_date: '2026-03-15', source: 'due_date' } });
    expect(resolveDueDate({ date: '2026-03-01', due_date: '2026-03-01' })).toEqual({ ok: true, value: { due_date: '2026-03-01', source: 'due_date' } });
  });

  it('computes date + payment_terms_days across months and leap days', () => {
    expect(resolveDueDate({ date: '2024-02-20', payment_terms_days: 10 })).toEqual({ ok: true, value: { due_date: '2024-03-01', source: 'payment_terms_days' } });
    expect(resolveDueDate({ date: '2026-12-31', payment_terms_days: 0 })).toEqual({ ok: true, value: { due_date: '2026-12-31', source: 'payment_terms_days' } });
    expect(resolveDueDate({ date: '2026-01-01', payment_terms_days: 365 })).toEqual({ ok: true, value: { due_date: '2027-01-01', source: 'payment_terms_days' } });
  });

  it('falls back to the team default, then to no due date', () => {
    expect(resolveDueDate({ date: '2026-03-01' }, 14)).toEqual({ ok: true, value: { due_date: '2026-03-15', source: 'team_default' } });
    expect(resolveDueDate({ date: '2026-03-01', due_date: null, payment_terms_days: null }, null)).toEqual({ ok: true, value: { due_date: null, source: 'none' } });
    expect(resolveDueDate({ date: '2026-03-01', due_date: '  ' })).toEqual({ ok: true, value: { due_date: null, source: 'none' } });
    // The payload's own terms win over the team's.
    expect(resolveDueDate({ date: '2026-03-01', payment_terms_days: 5 }, 30)).toMatchObject({ ok: true, value: { due_date: '2026-03-06' } });
    expect(() => resolveDueDate({ date: '2026-03-01' }, 400)).toThrow(RangeError);
  });

  it('refuses a due_date that is no date or is before the document date', () => {
    expect(codes(resolveDueDate({ date: '2026-03-01', due_date: '2026-02-30' }))).toEqual(['due_date:invalid_date']);
    expect(codes(resolveDueDate({ date: '2026-03-01', due_date: 20260315 }))).toEqual(['due_date:invalid_date']);
    const before = resolveDueDate({ date: '2026-03-01', due_date: '2026-02-28' });
    expect(codes(before)).toEqual(['due_date:due_date_before_date']);
    expect(before.ok ? '' : before.issues[0]?.message).toBe('due_date 2026-02-28 is before the document date 2026-03-01');
  });

  it('refuses payment_terms_days outside 0–365 or not a whole number', () => {
    for (const [value, code] of [
      [-1, 'out_of_range'],
      [366, 'out_of_range'],
      [1.5, 'not_integer'],
      ['10', 'invalid_type'],
      [Number.NaN, 'invalid_type'],
      [true, 'invalid_type'],
    ] as const) {
      expect(codes(resolveDueDate({ date: '2026-03-01', payment_terms_days: value })), String(value)).toEqual([`payment_terms_days:${code}`]);
    }
    expect(paymentTermsDaysIssue(30, 'teams[0].payment_terms_days')).toBeNull();
    expect(paymentTermsDaysIssue(-3, 'teams[0].payment_terms_days')?.message).toBe('teams[0].payment_terms_days must be 0–365, got -3');
  });

  it('accepts both when they name the same day and refuses them when they disagree', () => {
    expect(resolveDueDate({ date: '2026-03-01', due_date: '2026-03-11', payment_terms_days: 10 })).toEqual({ ok: true, value: { due_date: '2026-03-11', source: 'due_date' } });
    const conflict = resolveDueDate({ date: '2026-03-01', due_date: '2026-03-20', payment_terms_days: 10 });
    expect(codes(conflict)).toEqual(['due_date:due_date_conflict']);
    expect(conflict.ok ? '' : conflict.issues[0]?.message).toContain('payment_terms_days says 10 (2026-03-11)');
  });

  it('reports every problem at once', () => {
    expect(codes(resolveDueDate({ date: '2026-03-01', due_date: '2026-02-01', payment_terms_days: 999 }))).toEqual([
      'due_date:due_date_before_date',
      'payment_terms_days:out_of_range',
    ]);
  });
});

describe('overdueState', () => {
  const base = { dueDate: '2026-03-10', sellerStatus: 'issued', outstanding: '1500.00' } as const;

  it('is not overdue on the due date, overdue from the next day, counting whole days', () => {
    expect(overdueState({ ...base, today: '2026-03-09' })).toEqual({ overdue: false, days_overdue: 0 });
    expect(overdueState({ ...base, today: '2026-03-10' })).toEqual({ overdue: false, days_overdue: 0 });
    expect(overdueState({ ...base, today: '2026-03-11' })).toEqual({ overdue: true, days_overdue: 1 });
    expect(overdueState({ ...base, today: '2026-04-10' })).toEqual({ overdue: true, days_overdue: 31 });
    expect(firstOverdueDate('2026-03-10')).toBe('2026-03-11');
  });

  it('needs an issued document with something outstanding and a due date', () => {
    const today = '2026-04-01';
    for (const status of ['draft', 'paid', 'cancelled'] as const) {
      expect(overdueState({ ...base, today, sellerStatus: status }), status).toEqual({ overdue: false, days_overdue: 0 });
    }
    expect(overdueState({ ...base, today, outstanding: '0.00' }).overdue).toBe(false);
    expect(overdueState({ ...base, today, outstanding: '-5.00' }).overdue).toBe(false);
    expect(overdueState({ ...base, today, outstanding: 0n }).overdue).toBe(false);
    expect(overdueState({ ...base, today, outstanding: 1n }).overdue).toBe(true);
    expect(overdueState({ ...base, today, outstanding: '0.01' }).overdue).toBe(true);
    expect(overdueState({ ...base, today, dueDate: null })).toEqual({ overdue: false, days_overdue: 0 });
  });

  it("counts from the team's today: the same instant is overdue in Vladivostok and not yet in Moscow", () => {
    const now = new Date('2026-03-10T16:00:00Z'); // 19:00 in Moscow, 02:00 on the 11th in Vladivostok
    expect(overdueState({ ...base, today: localDateIn(now, 'Europe/Moscow') }).overdue).toBe(false);
    expect(overdueState({ ...base, today: localDateIn(now, 'Asia/Vladivostok') })).toEqual({ overdue: true, days_overdue: 1 });
  });

  it('days_overdue is the distance in days whenever overdue (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -400, max: 4000 }), (offset) => {
        const today = addDays('2026-03-10', offset);
        const state = overdueState({ ...base, today });
        expect(state).toEqual(offset > 0 ? { overdue: true, days_overdue: offset } : { overdue: false, days_overdue: 0 });
      }),
    );
  });
});
