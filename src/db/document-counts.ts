/**
 * The per-team document counter (migration 2026-11-26T1300_team_document_counts): the
 * unfiltered list's exact `total` without counting the team's rows. Only the invoices
 * repository's insert (and bench/seed.ts, which inserts in bulk) calls `addDocuments`, inside
 * the transaction that inserts the documents, so the count commits or rolls back with them.
 * No document is ever deleted; should that change, the delete must subtract here as well.
 *
 * PostgreSQL: a team's count is spread over COUNTER_SHARDS rows and each insert adds to a
 * random one, so concurrent creates of one team do not all wait on one row lock. SQLite has
 * one writer at a time: one row (shard 0).
 */
import { sql, type QueryCreator } from 'kysely';
import { dialectOf, type Executor } from './database.js';
import type { Database } from './types.js';

export const COUNTER_SHARDS = 16;

/** Adds `n` documents to the team's count; call inside the inserting transaction. */
export async function addDocuments(db: Executor, teamId: string, n: number): Promise<void> {
  if (n === 0) return;
  const shard = dialectOf(db) === 'postgres' ? Math.floor(Math.random() * COUNTER_SHARDS) : 0;
  await db
    .insertInto('team_document_counts')
    .values({ team_id: teamId, shard, documents: n })
    .onConflict((oc) => oc.columns(['team_id', 'shard']).doUpdateSet({ documents: sql<number>`team_document_counts.documents + ${n}` }))
    .execute();
}

/**
 * PostgreSQL: `addDocuments` as a query not yet run (a random shard), for the caller to make
 * part of the statement that inserts the documents.
 */
export function pgAddDocumentsQuery(qc: QueryCreator<Database>, teamId: string, n: number) {
  const shard = Math.floor(Math.random() * COUNTER_SHARDS);
  return qc
    .insertInto('team_document_counts')
    .values({ team_id: teamId, shard, documents: n })
    .onConflict((oc) => oc.columns(['team_id', 'shard']).doUpdateSet({ documents: sql<number>`team_document_counts.documents + ${n}` }));
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
