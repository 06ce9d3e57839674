/**
 * Case-insensitive substring search. Both sides are lower-cased in JavaScript (SQLite's
 * lower() folds ASCII only), so the SQL is a plain LIKE with the wildcards escaped.
 */
import { sql, type RawBuilder } from 'kysely';

export function normalizeSearchText(...parts: Array<string | null | undefined>): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .join(' ')
    .toLowerCase();
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `column LIKE '%q%' ESCAPE '\'` with q lower-cased; works the same on both databases. */
export function containsText(column: string, q: string): RawBuilder<boolean> {
  const pattern = `%${escapeLike(q.toLowerCase())}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}
