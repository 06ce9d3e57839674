/**
 * The event log's statements, the same on both databases but for the feed horizon each store
 * gives (store/sqlite.ts, store/postgres.ts): an expression every shown event's `tx_id` is below,
 * or none.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { preparedStatement } from '../../../db/prepared-query.js';
import type { EventRow } from '../../../db/types.js';
import type { EventStore, FeedPosition, NewEvent } from './index.js';

// Written with every document change: compiled once (src/db/prepared-query.ts). `tx_id` and
// `seq` are the database's (the column default and the sequence).
const eventInsert = preparedStatement<keyof NewEvent, never>((db, p) =>
  db.insertInto('events').values({
    team_id: p('teamId'),
    type: p('type'),
    public_id: p('publicId'),
    revision: p('revision'),
    data: p('data'),
    created_at: p('createdAt'),
    traceparent: p('traceparent'),
  }),
);

const asValues = (event: NewEvent) => event as unknown as Record<keyof NewEvent, unknown>;

/** Appends `events` in order, one statement each (the one compiled-once insert). */
export async function appendEvents(trx: Executor, events: readonly NewEvent[]): Promise<void> {
  for (const event of events) await eventInsert(trx, asValues(event));
}

/** The insert of `event` bound but not run (`executeCompiled`). */
export function appendEventQuery(db: Executor, event: NewEvent) {
  return eventInsert.bind(db, asValues(event));
}

async function findBySeq(db: Executor, teamId: string, seqs: readonly number[]): Promise<EventRow[]> {
  if (seqs.length === 0) return [];
  return db.selectFrom('events').selectAll().where('team_id', '=', teamId).where('seq', 'in', [...seqs]).orderBy('tx_id').orderBy('seq').execute();
}

async function prune(db: Executor, before: string, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('events')
    .where('seq', 'in', (eb) => eb.selectFrom('events').select('seq').where('created_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The event store whose readers are shown only events with `tx_id` below `horizon` (none: every committed event). */
export function eventStoreWithHorizon(horizon: RawBuilder<number> | null): EventStore {
  return {
    append: appendEvents,
    appendQuery: appendEventQuery,
    findBySeq,
    prune,

    async list(db, teamId, options) {
      let q = db.selectFrom('events').selectAll().where('team_id', '=', teamId);
      if (horizon) q = q.where('tx_id', '<', horizon);
      const after = options.after;
      if (after) {
        q = q.where((eb) => eb.or([eb('tx_id', '>', after.tx), eb.and([eb('tx_id', '=', after.tx), eb('seq', '>', after.seq)])]));
      }
      if (options.types && options.types.length > 0) q = q.where('type', 'in', [...options.types]);
      return q.orderBy('tx_id').orderBy('seq').limit(options.limit).execute();
    },

    async latestPosition(db, teamId): Promise<FeedPosition> {
      let q = db.selectFrom('events').select(['tx_id', 'seq']).where('team_id', '=', teamId);
      if (horizon) q = q.where('tx_id', '<', horizon);
      const row = await q.orderBy('tx_id', 'desc').orderBy('seq', 'desc').limit(1).executeTakeFirst();
      return row ? { tx: Number(row.tx_id), seq: Number(row.seq) } : { tx: 0, seq: 0 };
    },

    async cursorsWithNewEvents(db, cursors) {
      if (cursors.length === 0) return [];
      const rows = sql.join(cursors.map((c, i) => sql`(cast(${i} as integer), ${c.teamId}, cast(${c.position.tx} as bigint), cast(${c.position.seq} as bigint))`));
      const shown = horizon ? sql`and v.tx_id < ${horizon}` : sql``;
      const result = await sql<{ n: number }>`
        with c (n, team_id, tx, seq) as (values ${rows})
        select c.n from c
         where exists (select 1 from events as v
                        where v.team_id = c.team_id and (v.tx_id, v.seq) > (c.tx, c.seq) ${shown})`.execute(db);
      return result.rows.map((r) => Number(r.n));
    },
  };
}
