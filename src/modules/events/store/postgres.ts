/**
 * PostgreSQL: transactions commit out of `seq` order, so a reader is shown only the events of
 * transactions below the feed horizon, and every event still to commit sorts after them.
 */
import { sql, type QueryCreator } from 'kysely';
import type { Database } from '../../../db/types.js';
import { newDocumentEvent, type DocumentEventInput } from '../event-rows.js';
import type { EventStore, NewEvent } from './index.js';
import { eventStoreWithHorizon } from './portable.js';

/**
 * The feed horizon, a bigint. Every event with `tx_id` below it has committed and is visible to
 * the statement's snapshot, and every event still to commit has a `tx_id` at or above it. It is
 * the least of:
 *
 * - the snapshot's `xmax`: a transaction that gets its id later gets a larger one;
 * - this session's own transaction id, when it has one;
 * - each transaction the snapshot sees running (`xip`) unless it is known to write no events:
 *   `pg_stat_activity` shows it in another database, or in this database under another
 *   `application_name` than this session's (every connection of the service carries the same one,
 *   src/db/database.ts; only the service writes events).
 *
 * So a transaction held open in another database or by another client (psql, a report, a
 * migration tool) holds nothing back, while one of the service's own always does: the horizon
 * stays below it until it ends. A running transaction that `pg_stat_activity` no longer (or
 * not yet) shows counts as an event writer, so a transaction that ends between the snapshot and
 * the read of `pg_stat_activity` is waited for, never skipped. `xip` holds 32-bit ids with their
 * epoch; `backend_xid` holds the 32 bits only, compared modulo 2^32 (the running ones span less
 * than 2^31). Cost: one read of the backend status array (one entry per connection) per statement;
 * the write path is untouched.
 */
const FEED_HORIZON = sql<number>`(select least(
    pg_snapshot_xmax(s)::text::bigint,
    pg_current_xact_id_if_assigned()::text::bigint,
    (select min(x::text::bigint) from pg_snapshot_xip(s) as x
      where (x::text::bigint % 4294967296) not in (
        select a.backend_xid::text::bigint from pg_stat_activity as a
         where a.backend_xid is not null
           and (a.datname <> current_database() or a.application_name <> current_setting('application_name')))))
  from pg_current_snapshot() as s)`;

/** PostgreSQL's event store, with the insert the invoices' one-statement writes compose. */
export interface PostgresEventStore extends EventStore {
  documentEventsInsert: DocumentEventsInsert;
}

/**
 * The insert of document events as fixed SQL text over arrays (see below), for a writer that
 * composes it into its own one-statement write. Handed over by the composition root
 * (src/stores.ts) from this store to the invoices' PostgreSQL store: it keeps a plain create and
 * a quiet update one round trip (docs/architecture.md, "Cross-module statements").
 */
export type DocumentEventsInsert = (param: (i: number) => string, input: DocumentEventInput[], condition?: string) => { text: string; values: unknown[] };

export function createPostgresEventStore(): PostgresEventStore {
  return { ...eventStoreWithHorizon(FEED_HORIZON), documentEventsInsert: pgDocumentEventsInsertUnnest };
}

/*
 * The two statement builders below are the invoices module's one-statement create and update
 * (its rows and their events in one round trip); they go when its own store writes the events
 * through `EventStore.append` instead.
 */

/**
 * The insert of `events` as fixed SQL text taking the rows as arrays (`unnest`), for a caller that
 * writes one fixed statement whatever the number of events (a named prepared statement, planned
 * once per connection). `param(i)` gives the placeholder of the i-th array (0-based, seven of them);
 * `values` are the arrays in that order. The rows are inserted in the list's order (so `seq`
 * follows it). `condition`: SQL the rows are inserted under (e.g. that the statement's update
 * found its row).
 */
function pgDocumentEventsInsertUnnest(param: (i: number) => string, input: DocumentEventInput[], condition?: string): { text: string; values: unknown[] } {
  const events: NewEvent[] = input.map(newDocumentEvent);
  const text =
    'insert into "events" ("team_id", "tx_id", "type", "public_id", "revision", "data", "created_at", "traceparent") ' +
    'select e.team_id, pg_current_xact_id()::text::bigint, e.type, e.public_id, e.revision, e.data, e.created_at, e.traceparent ' +
    `from unnest(${param(0)}::text[], ${param(1)}::text[], ${param(2)}::text[], ${param(3)}::int[], ${param(4)}::text[], ${param(5)}::text[], ${param(6)}::text[]) ` +
    `with ordinality as e(team_id, type, public_id, revision, data, created_at, traceparent, n) ${condition ? `where ${condition} ` : ''}order by e.n`;
  return {
    text,
    values: [
      events.map((e) => e.teamId),
      events.map((e) => e.type),
      events.map((e) => e.publicId),
      events.map((e) => e.revision),
      events.map((e) => e.data),
      events.map((e) => e.createdAt),
      events.map((e) => e.traceparent),
    ],
  };
}
