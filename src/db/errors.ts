/** Database error classification that differs between SQLite and PostgreSQL. */

/** True for a unique or primary-key violation on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * PostgreSQL: the server answered with an error (an SQLSTATE and a severity), so a statement
 * run on its own committed nothing. A lost connection is not one: its statement may have
 * committed.
 */
export function isServerError(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string';
}

/**
 * True when SQLite's write lock was not had in time: the busy timeout ran out (`SQLITE_BUSY`
 * and its extended codes) or the primary's cross-process lock was not granted
 * (src/cluster/write-lock.ts, the same code). Every write takes the lock before its first
 * statement (BEGIN IMMEDIATE, or the autocommit statement itself), so such a write wrote nothing.
 */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}
