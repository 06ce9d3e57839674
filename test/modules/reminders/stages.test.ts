import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays, isAfter, localDateIn, localHourIn } from '../../../src/shared/calendar.js';
import { countDaysRu } from '../../../src/shared/ru-plural.js';
import {
  DEFAULT_REMINDER_SETTINGS,
  checkReminderSettings,
  dueStages,
  nextDueOn,
  pendingStages,
  reminderSubject,
  stageOffset,
  stageToSend,
  withinHours,
} from '../../../src/modules/reminders/stages.js';

const due = '2026-03-10';
const defaults = DEFAULT_REMINDER_SETTINGS;
const issues = (input: unknown) => {
  const r = checkReminderSettings(input);
  return r.ok ? [] : r.issues.map((i) => `${i.field}:${i.code}`);
};

describe('reminder settings', () => {
  it('has the contract defaults and fills keys left out from the base', () => {
    expect(checkReminderSettings({})).toEqual({ ok: true, value: { enabled: false, before_due_days: [3], after_due_days: [1, 7, 14], hours: [9, 20] } });
    expect(checkReminderSettings({ enabled: true, after_due_days: [30, 0] })).toEqual({
      ok: true,
      value: { enabled: true, before_due_days: [3], after_due_days: [30, 0], hours: [9, 20] },
    });
    const current = { enabled: true, before_due_days: [], after_due_days: [5], hours: [0, 24] as [number, number] };
    expect(checkReminderSettings({ hours: [8, 18] }, current)).toEqual({ ok: true, value: { ...current, hours: [8, 18] } });
  });

  it('bounds each value to 0–365, each list to 10, and refuses duplicates and non-integers', () => {
    expect(issues({ before_due_days: [366], after_due_days: [-1] })).toEqual(['before_due_days[0]:out_of_range', 'after_due_days[0]:out_of_range']);
    expect(issues({ after_due_days: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] })).toEqual(['after_due_days:too_many']);
    expect(issues({ after_due_days: [1, 7, 1] })).toEqual(['after_due_days[2]:duplicate']);
    expect(issues({ after_due_days: [1.5, '7', null] })).toEqual(['after_due_days[0]:invalid_type', 'after_due_days[1]:invalid_type', 'after_due_days[2]:invalid_type']);
    expect(issues({ before_due_days: 3 })).toEqual(['before_due_days:invalid_type']);
    expect(checkReminderSettings({ after_due_days: [0, 365, 10, 9, 8, 7, 6, 5, 4, 3] }).ok).toBe(true);
    const r = checkReminderSettings({ after_due_days: [400] });
    expect(r.ok ? '' : r.issues[0]?.message).toBe('after_due_days[0] must be 0–365, got 400');
  });

  it('takes hours as [from, to) with 0 ≤ from < to ≤ 24, no window across midnight', () => {
    expect(checkReminderSettings({ hours: [0, 24] }).ok).toBe(true);
    expect(issues({ hours: [20, 9] })).toEqual(['hours:invalid_range']);
    expect(issues({ hours: [9, 9] })).toEqual(['hours:invalid_range']);
    expect(issues({ hours: [9, 25] })).toEqual(['hours:out_of_range']);
    expect(issues({ hours: [-1, 5] })).toEqual(['hours:out_of_range']);
    expect(issues({ hours: [9] })).toEqual(['hours:invalid_type']);
    expect(issues({ hours: [9, 20.5] })).toEqual(['hours:invalid_type']);
    expect(issues({ hours: '9-20' })).toEqual(['hours:invalid_type']);
  });

  it('refuses unknown keys, a non-boolean enabled and a non-object, naming the path', () => {
    expect(issues({ enable: true, enabled: 'yes' })).toEqual(['enable:unknown_field', 'enabled:invalid_type']);
    expect(issues([])).toEqual(['body:invalid_type']);
    const nested = checkReminderSettings({ hours: [5, 1] }, defaults, 'teams[0].reminders');
    expect(nested.ok ? [] : nested.issues.map((i) => i.field)).toEqual(['teams[0].reminders.hours']);
  });

  it('withinHours: from inclusive, to exclusive, in the local hour', () => {
    expect([8, 9, 19, 20].map((h) => withinHours(h, [9, 20]))).toEqual([false, true, true, false]);
    expect(withinHours(0, [0, 24]) && withinHours(23, [0, 24])).toBe(true);
    // 06:30 UTC is 09:30 in Moscow (inside) and 16:30 in Vladivostok (inside), 22:30 the day before in Los Angeles.
    const now = new Date('2026-03-10T06:30:00Z');
    expect(withinHours(localHourIn(now, 'Europe/Moscow'), [9, 20])).toBe(true);
    expect(withinHours(localHourIn(now, 'America/Los_Angeles'), [9, 20])).toBe(false);
    expect(localDateIn(now, 'America/Los_Angeles')).toBe('2026-03-09');
  });
});

describe('stages', () => {
  it('names and dates stages: before_d on due − d, after_d on due + d, ordered by date whatever the input order', () => {
    expect(dueStages(due, { before_due_days: [1, 7, 3], after_due_days: [14, 1, 7] })).toEqual([
      { stage: 'before_7', date: '2026-03-03' },
      { stage: 'before_3', date: '2026-03-07' },
      { stage: 'before_1', date: '2026-03-09' },
      { stage: 'after_1', date: '2026-03-11' },
      { stage: 'after_7', date: '2026-03-17' },
      { stage: 'after_14', date: '2026-03-24' },
    ]);
    expect(dueStages(due, { before_due_days: [0], after_due_days: [0] })).toEqual([
      { stage: 'before_0', date: due },
      { stage: 'after_0', date: due },
    ]);
    expect(dueStages(due, { before_due_days: [], after_due_days: [] })).toEqual([]);
    expect([stageOffset('before_3'), stageOffset('after_0'), stageOffset('after_365')]).toEqual([-3, 0, 365]);
    expect([stageOffset('after_366'), stageOffset('after_07'), stageOffset('during_1'), stageOffset('after_')]).toEqual([null, null, null, null]);
  });

  it('a document created 10 days overdue gets the 7-day stage only', () => {
    const today = addDays(due, 10);
    expect(stageToSend({ dueDate: due, today, settings: defaults, sentStages: [] })).toEqual({
      stage: 'after_7',
      date: '2026-03-17',
      alsoMarkSent: ['before_3', 'after_1'],
    });
    // Once it is sent, nothing more until the 14-day stage.
    const sent = ['after_7'];
    expect(stageToSend({ dueDate: due, today, settings: defaults, sentStages: sent })).toBeNull();
    expect(nextDueOn({ dueDate: due, settings: defaults, sentStages: sent })).toBe('2026-03-24');
    expect(stageToSend({ dueDate: due, today: '2026-03-24', settings: defaults, sentStages: sent })).toMatchObject({ stage: 'after_14', alsoMarkSent: [] });
    expect(nextDueOn({ dueDate: due, settings: defaults, sentStages: ['after_7', 'after_14'] })).toBeNull();
  });

  it('walks the stages day by day: each once, on its own date', () => {
    const sent: string[] = [];
    const log: string[] = [];
    for (let d = -10; d <= 30; d++) {
      const today = addDays(due, d);
      const pick = stageToSend({ dueDate: due, today, settings: defaults, sentStages: sent });
      if (pick) {
        log.push(`${today} ${pick.stage}`);
        sent.push(pick.stage, ...pick.alsoMarkSent);
      }
    }
    expect(log).toEqual(['2026-03-07 before_3', '2026-03-11 after_1', '2026-03-17 after_7', '2026-03-24 after_14']);
  });

  it('sends nothing before the first stage, and a before stage on its day', () => {
    expect(stageToSend({ dueDate: due, today: '2026-03-06', settings: defaults, sentStages: [] })).toBeNull();
    expect(nextDueOn({ dueDate: due, settings: defaults, sentStages: [] })).toBe('2026-03-07');
    expect(stageToSend({ dueDate: due, today: '2026-03-08', settings: defaults, sentStages: [] })).toEqual({ stage: 'before_3', date: '2026-03-07', alsoMarkSent: [] });
  });

  it('on the due date: before_0 and after_0 are one day; the later one goes and the other is passed over', () => {
    const settings = { before_due_days: [0], after_due_days: [0, 2] };
    expect(stageToSend({ dueDate: due, today: due, settings, sentStages: [] })).toEqual({ stage: 'after_0', date: due, alsoMarkSent: ['before_0'] });
    // A before_0 already sent that day passes over after_0 too.
    expect(stageToSend({ dueDate: due, today: due, settings, sentStages: ['before_0'] })).toBeNull();
    expect(nextDueOn({ dueDate: due, settings, sentStages: ['before_0'] })).toBe('2026-03-12');
  });

  it('a stage earlier than a sent one counts as sent, also when the sent one left the settings', () => {
    // after_7 went out; the settings then dropped 7 and added 3: after_3 (Mar 13) is before it.
    const settings = { before_due_days: [], after_due_days: [3, 14] };
    const state = { dueDate: due, settings, sentStages: ['after_7'] };
    expect(pendingStages(state).map((s) => s.stage)).toEqual(['after_14']);
    expect(stageToSend({ ...state, today: '2026-03-20' })).toBeNull();
    expect(nextDueOn(state)).toBe('2026-03-24');
    // Unknown names in the record are ignored.
    expect(pendingStages({ dueDate: due, settings, sentStages: ['manual'] }).map((s) => s.stage)).toEqual(['after_3', 'after_14']);
  });

  it('a stage held back (outside hours) stays due: nextDueOn stays on or before today', () => {
    const today = addDays(due, 2);
    const state = { dueDate: due, settings: defaults, sentStages: [] };
    const next = nextDueOn(state);
    expect(next !== null && !isAfter(next, today)).toBe(true);
    expect(stageToSend({ ...state, today })?.stage).toBe('after_1');
  });

  it('no stages: nothing to send and no next date', () => {
    const settings = { before_due_days: [], after_due_days: [] };
    expect(stageToSend({ dueDate: due, today: due, settings, sentStages: [] })).toBeNull();
    expect(nextDueOn({ dueDate: due, settings, sentStages: [] })).toBeNull();
  });

  it('whatever the settings and the day, the pass sends each stage at most once, and nextDueOn is the first day it sends (property)', () => {
    const days = fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 10 });
    fc.assert(
      fc.property(days, days, fc.integer({ min: -50, max: 60 }), fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 30 }), (before, after, startAt, gaps) => {
        const settings = { before_due_days: before, after_due_days: after };
        const sent: string[] = [];
        const stamped = new Set<string>();
        let today = addDays(due, startAt);
        let expectedNext = nextDueOn({ dueDate: due, settings, sentStages: sent });
        for (const gap of gaps) {
          const pick = stageToSend({ dueDate: due, today, settings, sentStages: sent });
          if (pick) {
            // It sends on the first pass on or after nextDueOn, never earlier.
            expect(expectedNext !== null && !isAfter(expectedNext, today)).toBe(true);
            for (const s of [pick.stage, ...pick.alsoMarkSent]) {
              expect(stamped.has(s)).toBe(false);
              stamped.add(s);
            }
            expect(isAfter(pick.date, today)).toBe(false);
            sent.push(pick.stage);
            expectedNext = nextDueOn({ dueDate: due, settings, sentStages: sent });
            if (expectedNext !== null) expect(isAfter(expectedNext, today)).toBe(true);
          } else if (expectedNext !== null) {
            expect(isAfter(expectedNext, today)).toBe(true);
          }
          today = addDays(today, gap);
        }
      }),
    );
  });
});

describe('subject', () => {
  it('says «Напоминание» before and on the due date, «просрочен на K дней» after it', () => {
    expect(reminderSubject({ number: '42', dueDate: due, today: '2026-03-07' })).toBe('Напоминание об оплате счёта № 42');
    expect(reminderSubject({ number: '42', dueDate: due, today: due })).toBe('Напоминание об оплате счёта № 42');
    expect(reminderSubject({ number: 'СЧ-2026/7', dueDate: due, today: '2026-03-11' })).toBe('Счёт № СЧ-2026/7 просрочен на 1 день');
    expect(reminderSubject({ number: '42', dueDate: due, today: '2026-03-17' })).toBe('Счёт № 42 просрочен на 7 дней');
  });

  it('declines «день» by the number', () => {
    const cases: Array<[number, string]> = [
      [1, '1 день'],
      [2, '2 дня'],
      [4, '4 дня'],
      [5, '5 дней'],
      [11, '11 дней'],
      [12, '12 дней'],
      [14, '14 дней'],
      [21, '21 день'],
      [22, '22 дня'],
      [25, '25 дней'],
      [101, '101 день'],
      [111, '111 дней'],
      [112, '112 дней'],
      [364, '364 дня'],
    ];
    for (const [n, text] of cases) expect(countDaysRu(n)).toBe(text);
  });
});
