/**
 * Case-insensitive substring search over `invoices.search_text`. Both sides are lower-cased
 * in JavaScript (SQLite's lower() folds ASCII only), so the exact test is a plain
 * `LIKE '%q%'` with the wildcards escaped: `%` and `_` in q are literal characters.
 *
 * What makes it fast differs per database (migration 2026-11-25T2350_invoice_search):
 * PostgreSQL's planner serves that same LIKE from the pg_trgm GIN index; SQLite needs the
 * FTS5 trigram table asked explicitly, and the LIKE then only confirms its candidates.
 */
import { sql, type RawBuilder } from 'kysely';
import { dialectOf, type Executor } from './database.js';
import { executeSql } from './direct-execution.js';

/**
 * Separates the fields inside `search_text`, so that q cannot match across two of them
 * (number "15" followed by seller "ООО" must not match "15 ооо"). Rows written before this
 * separator used a space; they can at worst match such a spanning q.
 */
const FIELD_SEPARATOR = '\u001f';

/** Trigram indexes can only answer patterns of at least this many characters. */
export const TRIGRAM_MIN_LENGTH = 3;

export function normalizeSearchText(...parts: Array<string | null | undefined>): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .join(FIELD_SEPARATOR)
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

/** An FTS5 string literal: the whole q as one phrase, i.e. its consecutive trigrams. */
function fts5Phrase(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

/**
 * How the matches are to be found. `index`: they may be few; collect them through the trigram
 * index. `scan`: they are known to be many; test rows while walking another index (the list
 * order) and stop early. `rowids`: SQLite's trigram table already named every candidate
 * (see probeTrigramTable), so the query only looks those rows up. PostgreSQL's planner makes
 * this choice itself from its statistics and always gets the plain LIKE.
 */
export type SearchPlan = 'index' | 'scan' | { rowids: readonly number[] };

/** Whether q is answered from SQLite's trigram table (rather than by LIKE alone). */
export function usesTrigramTable(db: Executor, q: string): boolean {
  return dialectOf(db) === 'sqlite' && [...q.toLowerCase()].length >= TRIGRAM_MIN_LENGTH && !q.includes(FIELD_SEPARATOR);
}

export type TrigramProbe = { rowids: number[] } | { candidates: number };

/**
 * SQLite only: asks the trigram table for q's candidates, documents of any team, reading
 * only the index (no table rows). Up to `few` of them it returns them all; beyond, it counts
 * them up to `cap`. Null where the trigram table is not used (PostgreSQL, q too short).
 */
export async function probeTrigramTable(db: Executor, q: string, few: number, cap: number): Promise<TrigramProbe | null> {
  if (!usesTrigramTable(db, q)) return null;
  const phrase = fts5Phrase(q.toLowerCase());
  const { rows } = await sql<{ id: number }>`
    select rowid as id from invoices_fts where invoices_fts match ${phrase} union all ${PENDING_ROWIDS} limit ${few + 1}
  `.execute(db);
  if (rows.length <= few) return { rowids: rows.map((r) => Number(r.id)) };
  const counted = await sql<{ n: number }>`
    select count(*) as n from (select rowid from invoices_fts where invoices_fts match ${phrase} union all ${PENDING_ROWIDS} limit ${cap})
  `.execute(db);
  return { candidates: Number(counted.rows[0]?.n ?? 0) };
}

/** True when `invoices.search_text` contains q (case-insensitively). */
export function invoiceSearchMatches(db: Executor, q: string, plan: SearchPlan = 'index'): RawBuilder<boolean> {
  const needle = q.toLowerCase();
  if (needle.includes(FIELD_SEPARATOR)) return sql<boolean>`1 = 0`;
  const like = containsText('invoices.search_text', needle);
  if (typeof plan === 'object') {
    if (plan.rowids.length === 0) return sql<boolean>`1 = 0`;
    return sql<boolean>`(invoices.rowid in (${sql.join([...plan.rowids])}) and ${like})`;
  }
  // Shorter patterns have no whole trigram: both databases fall back to scanning the team.
  if (plan === 'scan' || !usesTrigramTable(db, q)) return like;
  // FTS5 folds case itself (Unicode-aware), so its candidates are a superset; LIKE decides.
  return sql<boolean>`(invoices.rowid in (select rowid from invoices_fts where invoices_fts match ${fts5Phrase(needle)} union all ${PENDING_ROWIDS}) and ${like})`;
}

/**
 * SQLite: the rows inserted since the last `flushSearchIndex`, not yet in the trigram table
 * (migration 2026-11-26T1510_search_index_batched). Every candidate query adds them, so a row
 * is found whether or not it was flushed; normally there are none (the group commit flushes
 * before each COMMIT), at most the rows of a bulk insert outside it until the next flush.
 * `CROSS JOIN` fixes the order: the few pending rows drive, each finds its document by the
 * unique public_id (without statistics SQLite would scan every document and probe the list).
 */
export const PENDING_ROWIDS = sql`select i.rowid from invoices_fts_pending p cross join invoices i on i.public_id = p.public_id`;

/** The pending rows with their text, for the flush (same order as PENDING_ROWIDS). */
export const PENDING_TEXTS = sql`select i.rowid, i.search_text from invoices_fts_pending p cross join invoices i on i.public_id = p.public_id`;

/**
 * SQLite: puts the pending rows (above) into the trigram table, one statement for all of
 * them, and forgets them; call inside the writing transaction, after its inserts (the group
 * commit does, before each COMMIT). One FTS5 segment per call instead of one per document.
 * PostgreSQL: nothing to do.
 */
export async function flushSearchIndex(db: Executor): Promise<void> {
  if (dialectOf(db) !== 'sqlite') return;
  // Fixed text, so in a group commit's transaction it runs straight on better-sqlite3 (direct-execution.ts).
  flushSql ??= sql`insert into invoices_fts(rowid, search_text) ${PENDING_TEXTS}`.compile(db).sql;
  await executeSql(db, flushSql);
  await executeSql(db, 'delete from invoices_fts_pending');
}

let flushSql: string | undefined;
