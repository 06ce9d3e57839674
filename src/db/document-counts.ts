/**
 * The per-team counters (migrations 2026-11-26T1300_team_document_counts, 1400_list_versions,
 * 2026-11-29T0900_team_storage): a team's documents (the unfiltered list's exact total), its
 * list version (`changes`, moved by the documents' triggers) and the bytes of its stored
 * documents and revisions, each the sum of COUNTER_SHARDS rows (PostgreSQL: each transaction
 * adds to the shard `txid % COUNTER_SHARDS`, so one team's concurrent creates do not wait on
 * one row lock; SQLite, one writer at a time: shard 0). The invoices module writes and reads
 * them (its store); authentication reads them inside its own statement (`teamListStateColumns`),
 * so that a cached read costs one round trip.
 */
import { sql, type RawBuilder } from 'kysely';

export const COUNTER_SHARDS = 16;

/** A team's counters: documents, list version (the sum of `changes`) and stored bytes. */
export interface TeamListState {
  documents: number;
  version: number;
  storedBytes: number;
}

/**
 * The three sums as scalar subqueries on the team id `team` (an expression of the outer query),
 * for a caller that reads them inside another statement (authentication's).
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
