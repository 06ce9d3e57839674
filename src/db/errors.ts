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

/**
 * PostgreSQL could not be used in time: no connection within the connect timeout (refused,
 * unreachable, no answer to the start-up, every pooled connection busy), or a connection lost
 * or given up on while a statement ran (src/db/pg-pool.ts). A write that fails so may have
 * committed (its COMMIT can have reached the server before the connection went).
 */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * node-postgres' own failures of a connection (no SQLSTATE: the server said nothing) and the
 * socket's error codes. Anything else without a SQLSTATE is a fault of this program, not of
 * the database's reachability.
 */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|Query read timeout|timeout exceeded when trying to connect|timeout expired)/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** True for a failure of node-postgres' connection itself (see PG_CONNECTION_MESSAGES). */
export function isPgConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error) || isServerError(err)) return false;
  const code = (err as { code?: unknown }).code;
  return PG_CONNECTION_MESSAGES.test(err.message) || (typeof code === 'string' && SOCKET_CODES.has(code));
}

/**
 * Why the database cannot serve this request now, in words for the client, or null when `err`
 * is no such failure. Each of these is answered 503 with Retry-After (src/http/error-handler.ts):
 * the request may succeed when repeated, and none of them is the request's fault.
 * - unreachable (DatabaseUnavailableError; PostgreSQL connection exceptions, class 08; the server
 *   shutting down or starting, 57P01–57P03; its session ended for an idle transaction, 25P03);
 * - a statement cancelled at its time limit (57014: statement_timeout);
 * - out of resources: disk full (SQLITE_FULL, 53100), memory or connections (class 53).
 */
export function databaseUnavailableReason(err: unknown): string | null {
  if (err instanceof DatabaseUnavailableError) {
    return 'the database did not answer in time (a write answered so may have been stored: repeat it with the same Idempotency-Key)';
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === 'SQLITE_FULL' || code === '53100') return 'the database has no disk space left; nothing was stored';
  if (!isServerError(err)) return null;
  if (code === '57014') return 'a database statement ran past its time limit; nothing was stored';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '25P03' || code.startsWith('53')) {
    return 'the database is not available now';
  }
  return null;
}
