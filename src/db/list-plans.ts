/**
 * How the documents list's filters are written so that both databases run the intended plan.
 *
 * Two shapes exist. Many matches: walk invoices_team_list_idx in list order and stop after the
 * page. Few matches: collect them through the index of their filter (the trigram index for
 * `q`, invoices_team_modified_idx for `updated_since`) and sort them. PostgreSQL's planner picks
 * between the two from its statistics, so it gets plain predicates. SQLite has no statistics
 * (nothing runs ANALYZE) and then takes `team_id = ?` for a handful of rows, so it would walk
 * every document of the team even for three matches; when the caller knows the matches are
 * few, the team condition is written as `+team_id` (which SQLite cannot use as an index key)
 * and the filter as a rowid subquery, and SQLite collects.
 */
import { sql, type RawBuilder } from 'kysely';
import { dialectOf, type Executor } from './database.js';

/** `invoices.team_id = teamId`; `collect`: another filter's index is to find the rows. */
export function teamScope(db: Executor, teamId: string, collect: boolean): RawBuilder<boolean> {
  if (collect && dialectOf(db) === 'sqlite') return sql<boolean>`+invoices.team_id = ${teamId}`;
  return sql<boolean>`invoices.team_id = ${teamId}`;
}

/** `invoices.last_modified_at >= since`; `collect`: the matches are few, find them by their index. */
export function modifiedSince(db: Executor, teamId: string, since: string, collect: boolean): RawBuilder<boolean> {
  if (collect && dialectOf(db) === 'sqlite') {
    return sql<boolean>`invoices.rowid in (select modified.rowid from invoices as modified where modified.team_id = ${teamId} and modified.last_modified_at >= ${since})`;
  }
  return sql<boolean>`invoices.last_modified_at >= ${since}`;
}
