/** Database error classification that differs between SQLite and PostgreSQL. */

/** True for a unique or primary-key violation on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
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
