/**
 * SQLite: the list's text search and plans. Both sides of `q` are lower-cased in JavaScript and
 * the exact test is the LIKE (portable-list.ts `containsText`); what makes it fast is the FTS5
 * trigram table (migration 2026-11-25T2350_invoice_search), asked explicitly, whose candidates
 * the LIKE then confirms.
 *
 * SQLite has no statistics (nothing runs ANALYZE), so it does not know how selective a filter
 * is: given `team_id = ?` it walks every document of the team even for three matches. Two
 * shapes exist. Many matches: walk invoices_team_list_idx in list order and stop after the
 * page. Few matches: collect them through the index of their filter (the trigram table for
 * `q`, invoices_team_modified_idx for `updated_since`) and sort them; then the team condition is
 * written `+team_id` (which SQLite cannot use as an index key) and the filter as a rowid
 * subquery. The trigram table is asked how many candidates it has (bounded, cheap) and compared
 * with the rows the other filters leave: collecting a candidate costs about two row visits,
 * scanning a row in range one. Measured at 1M documents, the trigram table took a `q` from
 * 1.1–1.4 s to 10–255 ms (docs/performance.md).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { executeSql } from '../../../db/direct-execution.js';
import { FIELD_SEPARATOR } from '../rules/search-text.js';
import type { ListFilters } from './index.js';
import { containsText, filtered, type ListPlanner, type SearchPlan } from './portable-list.js';

/** Trigram indexes can only answer patterns of at least this many characters. */
const TRIGRAM_MIN_LENGTH = 3;

/** Up to this many candidates are collected by rowid; beyond, counted up to CANDIDATE_CAP. */
const FEW_CANDIDATES = 2000;
const CANDIDATE_CAP = 200_000;

/** An FTS5 string literal: the whole q as one phrase, i.e. its consecutive trigrams. */
function fts5Phrase(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

/** Whether q is answered from the trigram table (rather than by LIKE alone). */
function usesTrigramTable(q: string): boolean {
  return [...q.toLowerCase()].length >= TRIGRAM_MIN_LENGTH && !q.includes(FIELD_SEPARATOR);
}

/**
 * The rows inserted since the last `flushSearchIndex`, not yet in the trigram table (migration
 * 2026-11-26T1510_search_index_batched). Every candidate query adds them, so a row is found
 * whether or not it was flushed; normally there are none (the group commit flushes before each
 * COMMIT), at most the rows of a bulk insert outside it until the next flush. `CROSS JOIN`
 * fixes the order: the few pending rows drive, each finds its document by the unique public_id
 * (without statistics SQLite would scan every document and probe the list).
 */
export const PENDING_ROWIDS = sql`select i.rowid from invoices_fts_pending p cross join invoices i on i.public_id = p.public_id`;

/** The pending rows with their text, for the flush (same order as PENDING_ROWIDS). */
export const PENDING_TEXTS = sql`select i.rowid, i.search_text from invoices_fts_pending p cross join invoices i on i.public_id = p.public_id`;

type TrigramProbe = { rowids: number[] } | { candidates: number };

/**
 * Asks the trigram table for q's candidates, documents of any team, reading only the index (no
 * table rows). Up to `few` of them it returns them all; beyond, it counts them up to `cap`.
 * Null when q is not answered from the table (too short).
 */
async function probeTrigramTable(db: Executor, q: string, few: number, cap: number): Promise<TrigramProbe | null> {
  if (!usesTrigramTable(q)) return null;
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

let flushSql: string | undefined;

/**
 * Puts the pending rows (above) into the trigram table, one statement for all of them, and
 * forgets them; inside the writing transaction, after its inserts (the group commit runs it
 * before each COMMIT: the store registers it). One FTS5 segment per batch instead of one per
 * document (≈70 µs less per create, docs/performance.md).
 */
export async function flushSearchIndex(db: Executor): Promise<void> {
  // Fixed text, so in a group commit's transaction it runs straight on better-sqlite3 (direct-execution.ts).
  flushSql ??= sql`insert into invoices_fts(rowid, search_text) ${PENDING_TEXTS}`.compile(db).sql;
  await executeSql(db, flushSql);
  await executeSql(db, 'delete from invoices_fts_pending');
}

/** The list's plans on SQLite (see the top). */
export const sqliteListPlanner: ListPlanner = {
  async searchPlan(db: Executor, teamId: string, f: ListFilters): Promise<SearchPlan> {
    if (!f.q) return 'index';
    const probe = await probeTrigramTable(db, f.q, FEW_CANDIDATES, CANDIDATE_CAP);
    if (probe === null) return 'index';
    if ('rowids' in probe) return { rowids: probe.rowids };
    if (probe.candidates >= CANDIDATE_CAP) return 'scan';
    const bound = 2 * probe.candidates;
    const scope = await db
      .selectFrom(
        filtered(db, sqliteListPlanner, teamId, { ...f, q: undefined }, { q: 'index', collectUpdated: false })
          .select(sql<number>`1`.as('one'))
          .limit(bound)
          .as('scope'),
      )
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(scope.n) < bound ? 'scan' : 'index';
  },

  collectsText(q: string, plan: SearchPlan): boolean {
    return plan !== 'scan' && usesTrigramTable(q);
  },

  teamScope(teamId: string, collect: boolean): RawBuilder<boolean> {
    return collect ? sql<boolean>`+invoices.team_id = ${teamId}` : sql<boolean>`invoices.team_id = ${teamId}`;
  },

  modifiedSince(teamId: string, since: string, collect: boolean): RawBuilder<boolean> {
    if (collect) {
      return sql<boolean>`invoices.rowid in (select modified.rowid from invoices as modified where modified.team_id = ${teamId} and modified.last_modified_at >= ${since})`;
    }
    return sql<boolean>`invoices.last_modified_at >= ${since}`;
  },

  matches(q: string, plan: SearchPlan): RawBuilder<boolean> {
    const needle = q.toLowerCase();
    if (needle.includes(FIELD_SEPARATOR)) return sql<boolean>`1 = 0`;
    const like = containsText(needle);
    if (typeof plan === 'object') {
      if (plan.rowids.length === 0) return sql<boolean>`1 = 0`;
      return sql<boolean>`(invoices.rowid in (${sql.join([...plan.rowids])}) and ${like})`;
    }
    // Shorter patterns have no whole trigram: the team's rows are scanned.
    if (plan === 'scan' || !usesTrigramTable(q)) return like;
    // FTS5 folds case itself (Unicode-aware), so its candidates are a superset; LIKE decides.
    return sql<boolean>`(invoices.rowid in (select rowid from invoices_fts where invoices_fts match ${fts5Phrase(needle)} union all ${PENDING_ROWIDS}) and ${like})`;
  },
};
