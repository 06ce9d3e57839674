/**
 * Payment reminders (operating contract §6.2): the team's settings, the stages of one
 * document, which stage a pass sends, when the document next needs a look, and the subject.
 * Pure: the caller passes the team's today and local hour (`localDateIn` / `localHourIn`).
 *
 * Stages: "d days before" (`before_d`) is due on due date − d, "d days after" (`after_d`) on
 * due date + d; `before_0` and `after_0` are both due on the due date itself. The rule, with
 * the sent stages of the document (its `metadata.reminders`) as the only state:
 *
 * - a stage is *pending* when it is not sent and its date is after the date of every sent
 *   stage (a stage earlier than one already sent counts as sent: it was passed over);
 * - a pass sends the latest pending stage whose date has come, and the earlier pending ones
 *   count as sent (`alsoMarkSent`): a document created 10 days overdue with after [1, 7, 14]
 *   gets `after_7` only;
 * - `nextDueOn` is the earliest pending stage's date: the day the document next needs a look.
 *
 * The full rule with examples: docs/reminders.md.
 */
import { addDays, daysBetween, earliestDate, isAfter, type CalendarDate } from '../../shared/calendar.js';
import { describeJsonType, fieldPath, type Checked, type FieldIssue } from '../../shared/field-issue.js';
import { countDaysRu } from '../../shared/ru-plural.js';

export interface ReminderSettings {
  enabled: boolean;
  /** Days before the due date; order as given, no duplicates. */
  before_due_days: number[];
  /** Days after the due date; order as given, no duplicates. */
  after_due_days: number[];
  /** Local hours [from, to): from inclusive, to exclusive, 0 ≤ from < to ≤ 24. */
  hours: [number, number];
}

export const DEFAULT_REMINDER_SETTINGS: Readonly<ReminderSettings> = Object.freeze({
  enabled: false,
  before_due_days: [3],
  after_due_days: [1, 7, 14],
  hours: [9, 20] as [number, number],
});

/** Contract bounds: each value 0–365 (a year), at most 10 per list. */
export const REMINDER_DAYS_MAX = 365;
export const REMINDER_LIST_MAX = 10;
export const REMINDER_SETTINGS_KEYS = ['enabled', 'before_due_days', 'after_due_days', 'hours'] as const;

function checkDayList(value: unknown, field: string, issues: FieldIssue[]): number[] | undefined {
  if (!Array.isArray(value)) {
    issues.push({ field, code: 'invalid_type', message: `${field} must be an array of whole days, got ${describeJsonType(value)}` });
    return undefined;
  }
  if (value.length > REMINDER_LIST_MAX) {
    issues.push({ field, code: 'too_many', message: `${field} may hold at most ${REMINDER_LIST_MAX} values, got ${value.length}` });
    return undefined;
  }
  const before = issues.length;
  const seen = new Set<number>();
  value.forEach((d: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof d !== 'number' || !Number.isInteger(d)) {
      issues.push({ field: at, code: 'invalid_type', message: `${at} must be a whole number of days, got ${typeof d === 'number' ? d : describeJsonType(d)}` });
    } else if (d < 0 || d > REMINDER_DAYS_MAX) {
      issues.push({ field: at, code: 'out_of_range', message: `${at} must be 0–${REMINDER_DAYS_MAX}, got ${d}` });
    } else if (seen.has(d)) {
      issues.push({ field: at, code: 'duplicate', message: `${at}: ${d} is already in ${field}` });
    } else {
      seen.add(d);
    }
  });
  return issues.length === before ? (value as number[]).slice() : undefined;
}

function checkHours(value: unknown, field: string, issues: FieldIssue[]): [number, number] | undefined {
  const shape = `${field} must be [from, to]: two whole local hours 0–24, from < to`;
  if (!Array.isArray(value) || value.length !== 2) {
    issues.push({ field, code: 'invalid_type', message: `${shape}, got ${Array.isArray(value) ? `${value.length} values` : describeJsonType(value)}` });
    return undefined;
  }
  const [from, to] = value as unknown[];
  if (typeof from !== 'number' || typeof to !== 'number' || !Number.isInteger(from) || !Number.isInteger(to)) {
    issues.push({ field, code: 'invalid_type', message: `${shape}, got ${JSON.stringify(value)}` });
    return undefined;
  }
  if (from < 0 || to > 24 || from > 24 || to < 0) {
    issues.push({ field, code: 'out_of_range', message: `${shape}, got [${from}, ${to}]` });
    return undefined;
  }
  if (from >= to) {
    issues.push({ field, code: 'invalid_range', message: `${shape} (a window across midnight is not supported), got [${from}, ${to}]` });
    return undefined;
  }
  return [from, to];
}

/**
 * Validates settings (a PUT body or a team's `reminders` in the bootstrap file). A key left out
 * keeps its value in `base` (the defaults, or the current settings for a merge); unknown keys
 * are refused. Lists keep the order given (GET answers what PUT stored); the rules below do
 * not depend on it.
 */
export function checkReminderSettings(
  input: unknown,
  base: Readonly<ReminderSettings> = DEFAULT_REMINDER_SETTINGS,
  prefix = '',
): Checked<ReminderSettings> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, issues: [{ field: prefix || 'body', code: 'invalid_type', message: `reminder settings must be an object, got ${describeJsonType(input)}` }] };
  }
  const body = input as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(body)) {
    if (!(REMINDER_SETTINGS_KEYS as readonly string[]).includes(key)) {
      const field = fieldPath(prefix, key.slice(0, 100));
      issues.push({ field, code: 'unknown_field', message: `${field} is not a reminder setting (${REMINDER_SETTINGS_KEYS.join(', ')})` });
    }
  }
  const out: ReminderSettings = { enabled: base.enabled, before_due_days: [...base.before_due_days], after_due_days: [...base.after_due_days], hours: [...base.hours] };
  if (body.enabled !== undefined) {
    if (typeof body.enabled === 'boolean') out.enabled = body.enabled;
    else issues.push({ field: fieldPath(prefix, 'enabled'), code: 'invalid_type', message: `${fieldPath(prefix, 'enabled')} must be true or false, got ${describeJsonType(body.enabled)}` });
  }
  for (const key of ['before_due_days', 'after_due_days'] as const) {
    if (body[key] === undefined) continue;
    const list = checkDayList(body[key], fieldPath(prefix, key), issues);
    if (list) out[key] = list;
  }
  if (body.hours !== undefined) {
    const hours = checkHours(body.hours, fieldPath(prefix, 'hours'), issues);
    if (hours) out.hours = hours;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: out };
}

/** True when the local hour is inside the window: from ≤ hour < to. */
export function withinHours(localHour: number, [from, to]: readonly [number, number]): boolean {
  return localHour >= from && localHour < to;
}

// ---- stages ----

export type StageName = `before_${number}` | `after_${number}`;

export interface Stage {
  stage: StageName;
  date: CalendarDate;
}

type StageDays = Pick<ReminderSettings, 'before_due_days' | 'after_due_days'>;

const STAGE_NAME = /^(before|after)_(0|[1-9]\d{0,2})$/;

/** Days relative to the due date (before_3 → −3, after_7 → 7), or null for no stage name. */
export function stageOffset(name: string): number | null {
  const m = STAGE_NAME.exec(name);
  if (!m) return null;
  const days = Number(m[2]);
  if (days > REMINDER_DAYS_MAX) return null;
  return m[1] === 'before' ? -days : days;
}

/** Orders by date; on the due date `before_0` comes before `after_0`. */
function compareStages(a: { offset: number; after: boolean }, b: { offset: number; after: boolean }): number {
  return a.offset - b.offset || Number(a.after) - Number(b.after);
}

/** Every stage of the settings for this due date, by date (duplicates once). */
export function dueStages(dueDate: CalendarDate, settings: StageDays): Stage[] {
  const keyed = new Map<string, { stage: StageName; offset: number; after: boolean }>();
  for (const d of settings.before_due_days) keyed.set(`before_${d}`, { stage: `before_${d}`, offset: -d, after: false });
  for (const d of settings.after_due_days) keyed.set(`after_${d}`, { stage: `after_${d}`, offset: d, after: true });
  return [...keyed.values()].sort(compareStages).map((s) => ({ stage: s.stage, date: addDays(dueDate, s.offset) }));
}

export interface StageState {
  dueDate: CalendarDate;
  settings: StageDays;
  /** Stage names already recorded for the document (its `metadata.reminders[].stage`). */
  sentStages: readonly string[];
}

/**
 * The stages still to come: not sent, and dated after the latest sent stage. A sent stage is
 * placed by its name under the current due date, also when the settings no longer list it; a
 * `before_0` sent on the due date passes over an `after_0` of the same day.
 */
export function pendingStages({ dueDate, settings, sentStages }: StageState): Stage[] {
  const sent = new Set(sentStages);
  let latestSentOffset = -Infinity;
  for (const name of sent) latestSentOffset = Math.max(latestSentOffset, stageOffset(name) ?? -Infinity);
  // Strictly later dates only: one e-mail a day at most, even with before_0 and after_0.
  return dueStages(dueDate, settings).filter((s) => !sent.has(s.stage) && (stageOffset(s.stage) as number) > latestSentOffset);
}

export interface StageToSend {
  stage: StageName;
  /** The stage's own date (on or before today). */
  date: CalendarDate;
  /** Earlier stages whose dates have come too, passed over by this one. */
  alsoMarkSent: StageName[];
}

/** The stage a pass sends today, or null: the latest pending stage whose date has come. */
export function stageToSend(state: StageState & { today: CalendarDate }): StageToSend | null {
  const come = pendingStages(state).filter((s) => !isAfter(s.date, state.today));
  const latest = come.at(-1);
  if (!latest) return null;
  return { stage: latest.stage, date: latest.date, alsoMarkSent: come.slice(0, -1).map((s) => s.stage) };
}

/**
 * The next date on which the document needs a reminder pass: the earliest pending stage's
 * date (today or earlier: a stage is due now, e.g. one held back by the hours window), or null
 * when no stage is left. The storage keeps it in an indexed column and the pass reads only
 * rows with `next_reminder_on <= today`; after a send it is recomputed with the new stage in
 * `sentStages`, which moves it past today.
 */
export function nextDueOn(state: StageState): CalendarDate | null {
  return earliestDate(pendingStages(state).map((s) => s.date));
}

// ---- wording ----

/**
 * The e-mail subject on the day it is sent: «Напоминание об оплате счёта № N» up to and
 * including the due date, «Счёт № N просрочен на K дней» after it (K whole days since the due
 * date, the contract's `days_overdue`). It follows the day, not the stage, so a `before_3`
 * that goes out after the due date still tells the truth. "№ N" as in the document e-mail.
 */
export function reminderSubject({ number, dueDate, today }: { number: string; dueDate: CalendarDate; today: CalendarDate }): string {
  const late = daysBetween(dueDate, today);
  return late > 0 ? `Счёт № ${number} просрочен на ${countDaysRu(late)}` : `Напоминание об оплате счёта № ${number}`;
}
