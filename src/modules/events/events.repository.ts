/**
 * SQL of the events table. The feed position of an event is (`tx_id`, `seq`):
 *
 * - PostgreSQL: `seq` comes from a sequence when the row is inserted, but transactions commit
 *   out of `seq` order, so `seq` alone would let a reader skip an event committed later with a
 *   lower `seq`. `tx_id` is the writing transaction's id; the feed shows only events whose
 *   transaction is below the horizon (`PG_FEED_HORIZON`), so everything that commits afterwards
 *   has a larger `tx_id` and sorts after whatever was read.
 * - SQLite: one writer at a time, so `seq` is the commit order and `tx_id` stays 0.
 *
 * Everything here is scoped by team except retention, which deletes by age.
 */
import { sql, type CompiledQuery, type QueryCreator } from 'kysely';
import { dialectOf, type Executor } from '../../db/database.js';
import { preparedStatement } from '../../db/prepared-query.js';
import type { Database, EventRow } from '../../db/types.js';

export interface FeedPosition {
  tx: number;
  seq: number;
}

export interface NewEvent {
  teamId: string;
  type: string;
  publicId: string | null;
  revision: number | null;
  data: string;
  createdAt: string;
}

// Written with every document change: compiled once per dialect (src/db/prepared-query.ts).
const eventInsert = preparedStatement<keyof NewEvent, never>((db, p) =>
  db.insertInto('events').values({
    team_id: p('teamId'),
    tx_id: dialectOf(db) === 'postgres' ? sql<number>`pg_current_xact_id()::text::bigint` : sql<number>`0`,
    type: p('type'),
    public_id: p('publicId'),
    revision: p('revision'),
    data: p('data'),
    created_at: p('createdAt'),
  }),
);

export async function insertEvent(db: Executor, event: NewEvent): Promise<void> {
  await eventInsert(db, event as unknown as Record<keyof NewEvent, unknown>);
}

/** `insertEvent` bound but not run, for a writer that runs its statements later (`executeCompiled`). */
export function insertEventQuery(db: Executor, event: NewEvent): CompiledQuery {
  return eventInsert.bind(db, event as unknown as Record<keyof NewEvent, unknown>);
}

/** PostgreSQL: the insert of `events` as a query for the caller to run or compose (not run here). */
export function pgEventsInsert(qc: QueryCreator<Database>, events: NewEvent[]) {
  return qc.insertInto('events').values(
    events.map((event) => ({
      team_id: event.teamId,
      tx_id: sql<number>`pg_current_xact_id()::text::bigint`,
      type: event.type,
      public_id: event.publicId,
      revision: event.revision,
      data: event.data,
      created_at: event.createdAt,
    })),
  );
}

/**
 * PostgreSQL: the insert of `events` as fixed SQL text taking the rows as arrays (`unnest`), for
 * a caller that writes one fixed statement whatever the number of events (a named prepared
 * statement, planned once per connection). `param(i)` gives the placeholder of the i-th array
 * (0-based, six of them); `values` are the arrays in that order. The same rows `pgEventsInsert`
 * writes, in the same order (so `seq` follows the list).
 */
export function pgEventsInsertUnnest(param: (i: number) => string, events: NewEvent[], condition?: string): { text: string; values: unknown[] } {
  const text =
    'insert into "events" ("team_id", "tx_id", "type", "public_id", "revision", "data", "created_at") ' +
    'select e.team_id, pg_current_xact_id()::text::bigint, e.type, e.public_id, e.revision, e.data, e.created_at ' +
    `from unnest(${param(0)}::text[], ${param(1)}::text[], ${param(2)}::text[], ${param(3)}::int[], ${param(4)}::text[], ${param(5)}::text[]) ` +
    `with ordinality as e(team_id, type, public_id, revision, data, created_at, n) ${condition ? `where ${condition} ` : ''}order by e.n`;
  return {
    text,
    values: [
      events.map((e) => e.teamId),
      events.map((e) => e.type),
      events.map((e) => e.publicId),
      events.map((e) => e.revision),
      events.map((e) => e.data),
      events.map((e) => e.createdAt),
    ],
  };
}

/**
 * PostgreSQL: the feed horizon, a bigint. Every event with `tx_id` below it has committed and is
 * visible to the statement's snapshot, and every event still to commit has a `tx_id` at or above
 * it. It is the least of:
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
const PG_FEED_HORIZON = sql<number>`(select least(
    pg_snapshot_xmax(s)::text::bigint,
    pg_current_xact_id_if_assigned()::text::bigint,
    (select min(x::text::bigint) from pg_snapshot_xip(s) as x
      where (x::text::bigint % 4294967296) not in (
        select a.backend_xid::text::bigint from pg_stat_activity as a
         where a.backend_xid is not null
           and (a.datname <> current_database() or a.application_name <> current_setting('application_name')))))
  from pg_current_snapshot() as s)`;

/** The team's events after `after` (exclusive), in feed order, only those safe to show. */
export async function listEvents(
  db: Executor,
  teamId: string,
  options: { after: FeedPosition | null; limit: number; types?: readonly string[] | undefined },
): Promise<EventRow[]> {
  let q = db.selectFrom('events').selectAll().where('team_id', '=', teamId);
  if (dialectOf(db) === 'postgres') q = q.where('tx_id', '<', PG_FEED_HORIZON);
  const after = options.after;
  if (after) {
    q = q.where((eb) => eb.or([eb('tx_id', '>', after.tx), eb.and([eb('tx_id', '=', after.tx), eb('seq', '>', after.seq)])]));
  }
  if (options.types && options.types.length > 0) q = q.where('type', 'in', [...options.types]);
  return q.orderBy('tx_id').orderBy('seq').limit(options.limit).execute();
}

/** The position of the team's newest visible event (where a new subscriber starts), or the start. */
export async function latestPosition(db: Executor, teamId: string): Promise<FeedPosition> {
  let q = db.selectFrom('events').select(['tx_id', 'seq']).where('team_id', '=', teamId);
  if (dialectOf(db) === 'postgres') q = q.where('tx_id', '<', PG_FEED_HORIZON);
  const row = await q.orderBy('tx_id', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row ? { tx: Number(row.tx_id), seq: Number(row.seq) } : { tx: 0, seq: 0 };
}

export async function findEventsBySeq(db: Executor, teamId: string, seqs: readonly number[]): Promise<EventRow[]> {
  if (seqs.length === 0) return [];
  return db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('seq', 'in', [...seqs]).orderBy('tx_id').orderBy('seq').execute();
}

/**
 * Of `cursors` (a team and a feed position each), the indexes of those after which the team has
 * an event the feed would show now: one statement for all of them (the webhook fan-out asks this
 * for a page of endpoints per pass).
 */
export async function cursorsWithNewEvents(db: Executor, cursors: readonly { teamId: string; position: FeedPosition }[]): Promise<number[]> {
  if (cursors.length === 0) return [];
  const rows = sql.join(cursors.map((c, i) => sql`(cast(${i} as integer), ${c.teamId}, cast(${c.position.tx} as bigint), cast(${c.position.seq} as bigint))`));
  const horizon = dialectOf(db) === 'postgres' ? sql`and v.tx_id < ${PG_FEED_HORIZON}` : sql``;
  const result = await sql<{ n: number }>`
    with c (n, team_id, tx, seq) as (values ${rows})
    select c.n from c
     where exists (select 1 from events as v
                    where v.team_id = c.team_id and (v.tx_id, v.seq) > (c.tx, c.seq) ${horizon})`.execute(db);
  return result.rows.map((r) => Number(r.n));
}

/** Deletes up to `batch` events created before `before` (one statement); returns how many. */
export async function pruneEvents(db: Executor, before: string, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('events')
    .where('seq', 'in', (eb) => eb.selectFrom('events').select('seq').where('created_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
