/**
 * PostgreSQL: a transaction (or a statement run on its own) that the server aborted because of
 * a deadlock (SQLSTATE 40P01) or a serialization failure (40001) stored nothing, so it can simply
 * be run again. Deadlocks between creates should not happen (one transaction holds at most one
 * counter row of a team, document-counts.ts), but they can while nodes of two releases write
 * side by side (docs/deployment.md, the release that adds the list version), and any future
 * lock-order slip would otherwise answer 500. The work must be re-runnable: nothing but database
 * writes on the aborted transaction, whose effects are gone.
 */

/** How many times a piece of work runs at most (the first run and the retries). */
export const PG_CONFLICT_ATTEMPTS = 3;

/** Work retried so far (observability and tests). */
export const pgConflictStats = { retried: 0 };

export function isPgConflict(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === '40P01' || code === '40001';
}

/** Runs `work`, again (up to PG_CONFLICT_ATTEMPTS in all) when PostgreSQL aborted it as a conflict. */
export async function retryPgConflicts<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= PG_CONFLICT_ATTEMPTS || !isPgConflict(err)) throw err;
      pgConflictStats.retried += 1;
    }
  }
}
