/**
 * The per-team document counter (migration 2026-11-26T1300_team_document_counts): the
 * unfiltered list's exact `total` without counting the team's rows. Only the invoices
 * repository's insert (and bench/seed.ts, which inserts in bulk) calls `addDocuments`, inside
 * the transaction that inserts the documents, so the count commits or rolls back with them.
 * No document is ever deleted; should that change, the delete must subtract here as well.
 *
 * PostgreSQL: a team's count is spread over COUNTER_SHARDS rows and each transaction adds to
 * the shard `txid % COUNTER_SHARDS`, so concurrent creates of one team do not all wait on one
 * row lock. It is the shard the list triggers of the same transaction write (migration
 * 2026-11-26T1400_list_versions): one transaction holds at most one counter row of a team, so
 * two transactions cannot deadlock on them. SQLite has one writer at a time: one row (shard 0).
 *
 * The same rows carry `changes`, the team's list version (summed like `documents`), and
 * `team_month_counts` the documents per month of `date`: both kept by those triggers.
 */
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import { dialectOf, type Executor } from './database.js';
import { preparedQuery, preparedStatement } from './prepared-query.js';

export const COUNTER_SHARDS = 16;

// Written with every create: compiled once per dialect (prepared-query.ts).
const addDocumentsStatement = preparedStatement<'teamId' | 'n', never>((db, p) =>
  db
    .insertInto('team_document_counts')
    .values({
      team_id: p('teamId'),
      shard: dialectOf(db) === 'postgres' ? sql<number>`mod(txid_current(), ${sql.lit(COUNTER_SHARDS)})::int` : 0,
      documents: p('n'),
    })
    .onConflict((oc) => oc.columns(['team_id', 'shard']).doUpdateSet({ documents: sql<number>`team_document_counts.documents + ${p('n')}` })),
);

/** Adds `n` documents to the team's count; call inside the inserting transaction. */
export async function addDocuments(db: Executor, teamId: string, n: number): Promise<void> {
  if (n === 0) return;
  await addDocumentsStatement(db, { teamId, n });
}

/** `addDocuments` bound but not run (`n` > 0), for a writer that runs its statements later (`executeCompiled`). */
export function addDocumentsQuery(db: Executor, teamId: string, n: number): CompiledQuery {
  return addDocumentsStatement.bind(db, { teamId, n });
}

/**
 * PostgreSQL: `addDocuments` of one document as fixed SQL text (`teamParam` the team's
 * placeholder, the transaction's shard as above), for a caller that writes one fixed
 * statement (a named prepared one).
 */
export function pgAddOneDocumentSql(teamParam: string): string {
  return (
    `insert into "team_document_counts" ("team_id", "shard", "documents") values (${teamParam}, mod(txid_current(), ${COUNTER_SHARDS})::int, 1) ` +
    'on conflict ("team_id", "shard") do update set "documents" = team_document_counts.documents + 1'
  );
}

/** The team's number of documents (0 for a team that has none). */
export async function teamDocumentCount(db: Executor, teamId: string): Promise<number> {
  const row = await db
    .selectFrom('team_document_counts')
    .select((eb) => eb.fn.sum<number | string | null>('documents').as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * The team's document count and list version (the sum of `changes`) in one read. Read the
 * version BEFORE the page it validates: a write committing between the two then leaves a page
 * newer than its version, which the next request's version no longer matches (never the reverse).
 */
export async function teamListState(db: Executor, teamId: string): Promise<TeamListState> {
  const row = (await listStateOf(db, { teamId }))[0];
  return { documents: Number(row?.n ?? 0), version: Number(row?.v ?? 0), storedBytes: Number(row?.b ?? 0) };
}

/** A team's counters: documents, list version (the sum of `changes`) and stored bytes (migration 2026-11-29T0900). */
export interface TeamListState {
  documents: number;
  version: number;
  storedBytes: number;
}

/**
 * The two sums of `teamListState` as scalar subqueries on the team id `team` (an expression of
 * the outer query), for a caller that reads them inside another statement (authentication's).
 */
export function teamListStateColumns(
  team: RawBuilder<unknown> | ReturnType<typeof sql.ref>,
): { documents: RawBuilder<number>; version: RawBuilder<number>; storedBytes: RawBuilder<number> } {
  return {
    documents: sql<number>`(select sum(c.documents) from team_document_counts c where c.team_id = ${team})`,
    version: sql<number>`(select sum(c.changes) from team_document_counts c where c.team_id = ${team})`,
    storedBytes: sql<number>`(select sum(c.stored_bytes) from team_document_counts c where c.team_id = ${team})`,
  };
}

// Read by every list request: compiled once (prepared-query.ts).
const listStateOf = preparedQuery<'teamId', { n: number | string | null; v: number | string | null; b: number | string | null }>((db, p) =>
  db
    .selectFrom('team_document_counts')
    .select((eb) => [
      eb.fn.sum<number | string | null>('documents').as('n'),
      eb.fn.sum<number | string | null>('changes').as('v'),
      eb.fn.sum<number | string | null>('stored_bytes').as('b'),
    ])
    .where('team_id', '=', p('teamId')),
);

/** Documents of the team dated in the months `from`…`to` (`YYYY-MM`, inclusive; null: open). */
export async function teamMonthDocuments(db: Executor, teamId: string, from: string | null, to: string | null): Promise<number> {
  let query = db
    .selectFrom('team_month_counts')
    .select((eb) => eb.fn.sum<number | string | null>('documents').as('n'))
    .where('team_id', '=', teamId);
  if (from !== null) query = query.where('month', '>=', from);
  if (to !== null) query = query.where('month', '<=', to);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}
