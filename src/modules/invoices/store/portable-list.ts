/**
 * The documents list, written once for both databases: the count (the team's counter when
 * unfiltered, the month counters for dates alone, else a count of the matches), the page in the
 * list order, then the page's buyer share tokens. How each filter is written so that the
 * database runs the intended plan is the per-database `ListPlanner`'s (sqlite-search.ts for
 * SQLite, which has no statistics; plain predicates for PostgreSQL, whose planner chooses).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { extended } from '../../../shared/objects.js';
import { FIELD_SEPARATOR } from '../rules/search-text.js';
import type { InvoiceListRow, KnownTotals, ListFilters } from './index.js';
import { listState } from './portable-documents.js';

/**
 * How the matches of `q` are to be found. `index`: they may be few; collect them through the
 * text index. `scan`: they are known to be many; test rows while walking another index (the
 * list order) and stop early. `rowids`: SQLite's trigram table already named every candidate,
 * so the query only looks those rows up.
 */
export type SearchPlan = 'index' | 'scan' | { rowids: readonly number[] };

/**
 * How the filters are written. `q`: see SearchPlan. `collectUpdated`: the count says the
 * matches are few, so `updated_since` collects them from its own index.
 */
export interface Access {
  q: SearchPlan;
  collectUpdated: boolean;
}

/** A database's way of writing the list's filters (see the top). */
export interface ListPlanner {
  /** The plan for `q` given the other filters (`filteredBy` writes them). */
  searchPlan(db: Executor, teamId: string, f: ListFilters): Promise<SearchPlan>;
  /** Whether `q` is collected through an index of its own (the team condition then must not drive). */
  collectsText(q: string, plan: SearchPlan): boolean;
  /** `invoices.team_id = teamId`; `collect`: another filter's index is to find the rows. */
  teamScope(teamId: string, collect: boolean): RawBuilder<boolean>;
  /** `invoices.last_modified_at >= since`; `collect`: the matches are few, find them by their index. */
  modifiedSince(teamId: string, since: string, collect: boolean): RawBuilder<boolean>;
  /** True when `invoices.search_text` contains q (case-insensitively). */
  matches(q: string, plan: SearchPlan): RawBuilder<boolean>;
}

/**
 * Above this many matches a page is found faster by walking the list index in order and
 * testing each row (it stops after offset + limit matches) than by collecting every match
 * and sorting them; at or below it, collecting is faster, as the matches may be anywhere.
 */
const DENSE_MATCHES = 2000;

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * `invoices.search_text LIKE '%q%' ESCAPE '\'`, the exact test on both databases: both sides
 * lower-cased in JavaScript (SQLite's lower() folds ASCII only), `%` and `_` in q literal. A q
 * holding the field separator matches nothing (it cannot span two fields).
 */
export function containsText(q: string): RawBuilder<boolean> {
  const needle = q.toLowerCase();
  if (needle.includes(FIELD_SEPARATOR)) return sql<boolean>`1 = 0`;
  return sql<boolean>`${sql.ref('invoices.search_text')} like ${`%${escapeLike(needle)}%`} escape '\\'`;
}

/** The team's documents matching `f`, written as `planner` says for `access`. */
export function filtered(db: Executor, planner: ListPlanner, teamId: string, f: ListFilters, access: Access) {
  const collect = (f.q !== undefined && planner.collectsText(f.q, access.q)) || (f.updatedSince !== undefined && access.collectUpdated);
  let query = db.selectFrom('invoices').where(planner.teamScope(teamId, collect));
  if (f.dateFrom) query = query.where('invoices.date', '>=', f.dateFrom);
  if (f.dateTo) query = query.where('invoices.date', '<=', f.dateTo);
  if (f.updatedSince) query = query.where(planner.modifiedSince(teamId, f.updatedSince, access.collectUpdated));
  if (f.changedSince) query = query.where('invoices.changed_at', '>=', f.changedSince);
  if (f.q) query = query.where(planner.matches(f.q, access.q));
  return query;
}

async function countMatches(db: Executor, planner: ListPlanner, teamId: string, f: ListFilters, plan: SearchPlan): Promise<number> {
  const row = await filtered(db, planner, teamId, f, { q: plan, collectUpdated: false })
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Documents of the team dated in the months `from`…`to` (`YYYY-MM`, inclusive; null: open). */
async function monthDocuments(db: Executor, teamId: string, from: string | null, to: string | null): Promise<number> {
  let query = db
    .selectFrom('team_month_counts')
    .select((eb) => eb.fn.sum<number | string | null>('documents').as('n'))
    .where('team_id', '=', teamId);
  if (from !== null) query = query.where('month', '>=', from);
  if (to !== null) query = query.where('month', '<=', to);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function shiftMonth(month: string, by: 1 | -1): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const next = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${String(next.getUTCFullYear()).padStart(4, '0')}-${String(next.getUTCMonth() + 1).padStart(2, '0')}`;
}

function lastDayOf(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return `${month}-${String(new Date(Date.UTC(y, m, 0)).getUTCDate()).padStart(2, '0')}`;
}

/**
 * The exact number of the team's documents dated `from`…`to` (inclusive, either open): the
 * whole months in between from the per-month counters (team_month_counts, kept by triggers in
 * the writing transactions), the partial first and last months counted on the list index.
 * Stored dates are calendar dates `YYYY-MM-DD` (validated on write), so a month's counter is
 * exactly the rows between its first and last day. Cost: one indexed sum over ≤ 16 rows per
 * month of the range plus at most two months of index entries, whatever the volume.
 */
async function dateRangeCount(db: Executor, planner: ListPlanner, teamId: string, from: string | undefined, to: string | undefined): Promise<number> {
  if ((from !== undefined && !ISO_DAY.test(from)) || (to !== undefined && !ISO_DAY.test(to))) {
    return countMatches(db, planner, teamId, { dateFrom: from, dateTo: to, limit: 0, offset: 0 }, 'index');
  }
  const fromMonth = from?.slice(0, 7);
  const toMonth = to?.slice(0, 7);
  // The whole months inside the range (null: open).
  const first = from === undefined || fromMonth === undefined ? null : from.endsWith('-01') ? fromMonth : shiftMonth(fromMonth, 1);
  const last = to === undefined || toMonth === undefined ? null : to === lastDayOf(toMonth) ? toMonth : shiftMonth(toMonth, -1);
  if (first !== null && last !== null && first > last) {
    return countMatches(db, planner, teamId, { dateFrom: from, dateTo: to, limit: 0, offset: 0 }, 'index');
  }
  let n = await monthDocuments(db, teamId, first, last);
  if (from !== undefined && fromMonth !== undefined && first !== fromMonth) {
    n += await countMatches(db, planner, teamId, { dateFrom: from, dateTo: lastDayOf(fromMonth), limit: 0, offset: 0 }, 'index');
  }
  if (to !== undefined && toMonth !== undefined && last !== toMonth) {
    n += await countMatches(db, planner, teamId, { dateFrom: `${toMonth}-01`, dateTo: to, limit: 0, offset: 0 }, 'index');
  }
  return n;
}

/**
 * One page in the list order (date desc, creation desc, then public_id for a stable order)
 * and the count of all matches. The page's buyer share tokens are read afterwards for its
 * rows only: a correlated subquery would run for every match before the sort.
 */
export async function listInvoices(
  db: Executor,
  planner: ListPlanner,
  teamId: string,
  f: ListFilters,
  known: KnownTotals = {},
): Promise<{ rows: InvoiceListRow[]; total: number }> {
  // A total already known decides without asking the planner again (SQLite's trigram probe
  // counts up to 200,000 candidates, ~10,000 for a 1 % search at 1M documents): no page to
  // read, or matches too many to collect (the page walks the list index whatever the plan).
  if (known.total !== undefined && (known.total === 0 || f.offset >= known.total)) return { rows: [], total: known.total };
  const plan = known.total !== undefined && known.total > DENSE_MATCHES ? 'scan' : await planner.searchPlan(db, teamId, f);
  // No filter: the team's document counter, kept in the creating transactions, is the count.
  const unfiltered = !f.q && !f.dateFrom && !f.dateTo && !f.updatedSince && !f.changedSince;
  const onlyDates = !f.q && !f.updatedSince && !f.changedSince && (f.dateFrom !== undefined || f.dateTo !== undefined);
  const total =
    known.total ??
    (unfiltered
      ? (known.documents ?? (await listState(db, teamId)).documents)
      : onlyDates
        ? await dateRangeCount(db, planner, teamId, f.dateFrom, f.dateTo)
        : await countMatches(db, planner, teamId, f, plan));
  if (total === 0 || f.offset >= total) return { rows: [], total };
  const dense = plan === 'scan' || total > DENSE_MATCHES;
  const page = await filtered(db, planner, teamId, f, { q: dense ? 'scan' : plan, collectUpdated: !dense })
    .select([
      'invoices.public_id',
      'invoices.number',
      'invoices.date',
      'invoices.currency',
      'invoices.direction',
      'invoices.seller_name',
      'invoices.seller_inn',
      'invoices.buyer_name',
      'invoices.buyer_inn',
      'invoices.subtotal',
      'invoices.vat_total',
      'invoices.total',
      'invoices.seller_status',
      'invoices.buyer_status',
      'invoices.service_status',
      'invoices.service_status_reason',
      'invoices.editor_mode',
      'invoices.created_at',
      'invoices.last_modified_at',
      'invoices.changed_at',
    ])
    .orderBy('invoices.date', 'desc')
    .orderBy('invoices.created_at', 'desc')
    .orderBy('invoices.public_id', 'desc')
    .limit(f.limit)
    .offset(f.offset)
    .execute();
  const tokens = new Map<string, string>();
  const ids = page.map((r) => r.public_id);
  if (ids.length > 0) {
    const links = await db
      .selectFrom('share_links')
      .select(['public_id', 'token'])
      .where('team_id', '=', teamId)
      // SQLite (3.53, no statistics) plans `public_id IN (?)` of one value beside `kind = ?`
      // as a scan of the whole table; `=` uses the key.
      .where((eb) => (ids.length === 1 ? eb('public_id', '=', ids[0] as string) : eb('public_id', 'in', ids)))
      .where('kind', '=', 'buyer')
      .execute();
    for (const link of links) if (!tokens.has(link.public_id)) tokens.set(link.public_id, link.token);
  }
  return { rows: page.map((r) => extended(r, { buyer_token: tokens.get(r.public_id) ?? null })), total };
}
