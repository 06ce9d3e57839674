/**
 * One reason a field is refused, in the shape of the API's `errors[]` entries (invoices'
 * `ValidationIssue`): pure rule validators outside invoices report in it without importing
 * that module, and a route answers 400 `validation_failed` with them.
 */
export interface FieldIssue {
  /** Path of the field, e.g. `schedule.end_date` or `after_due_days[2]`. */
  field: string;
  /** Machine-readable reason, e.g. `out_of_range`, `duplicate`, `unknown_placeholder`. */
  code: string;
  /** Human-readable reason naming the value and the bound. */
  message: string;
}

/** A validator's answer: the normalized value, or every reason it is refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** The field's path under `prefix` (`''` → `name`, `'schedule'` → `schedule.name`). */
export function fieldPath(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}.${name}`;
}

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
