/**
 * SQL of the events table. The feed position of an event is (`tx_id`, `seq`):
 *
 * - PostgreSQL: `seq` comes from a sequence when the row is inserted, but transactions commit
 *   out of `seq` order, so `seq` alone would let a reader skip an event committed later with a
 *   lower `seq`. `tx_id` is the writing transaction's id; the feed shows only events whose
 *   transaction is older than the oldest one still running (`pg_snapshot_xmin`), so everything
 *   that commits afterwards has a larger `tx_id` and sorts after whatever was read.
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

/** The team's events after `after` (exclusive), in feed order, only those safe to show. */
export async function listEvents(
  db: Executor,
  teamId: string,
  options: { after: FeedPosition | null; limit: number; types?: readonly string[] | undefined },
): Promise<EventRow[]> {
  let q = db.selectFrom('events').selectAll().where('team_id', '=', teamId);
  if (dialectOf(db) === 'postgres') q = q.where('tx_id', '<', sql<number>`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`);
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
  if (dialectOf(db) === 'postgres') q = q.where('tx_id', '<', sql<number>`pg_snapshot_xmin(pg_current_snapshot())::text::bigint`);
  const row = await q.orderBy('tx_id', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row ? { tx: Number(row.tx_id), seq: Number(row.seq) } : { tx: 0, seq: 0 };
}

export async function findEventsBySeq(db: Executor, teamId: string, seqs: readonly number[]): Promise<EventRow[]> {
  if (seqs.length === 0) return [];
  return db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('seq', 'in', [...seqs]).orderBy('tx_id').orderBy('seq').execute();
}

/** Deletes up to `batch` events created before `before`; returns how many. */
export async function pruneEvents(db: Executor, before: string, batch: number): Promise<number> {
  const old = await db.selectFrom('events').select('seq').where('created_at', '<', before).orderBy('seq').limit(batch).execute();
  if (old.length === 0) return 0;
  const result = await db
    .deleteFrom('events')
    .where(
      'seq',
      'in',
      old.map((r) => r.seq),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
