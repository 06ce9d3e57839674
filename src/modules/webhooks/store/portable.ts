/**
 * SQL of webhook endpoints, deliveries and attempts, the same on both databases (the claim's row
 * locking aside: `claimDueDeliveriesLocking`, given its lock clause by store/sqlite.ts and
 * store/postgres.ts). Every statement is scoped by team, except the worker's (the claim, the
 * fan-out's page of endpoints, retention), which are across teams by nature.
 */
import { sql, type Insertable, type RawBuilder, type Updateable } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { anyDueRow, dueCondition } from '../../../db/outbox-claim.js';
import type {
  WebhookAttemptRow,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookDeliveryRow,
  WebhookEndpointRow,
  WebhookEndpointsTable,
} from '../../../db/types.js';

/** A claim of due deliveries: how many, for whom, the lease, and the fairness bounds. */
export interface DeliveryClaim {
  owner: string;
  limit: number;
  now: Date;
  leaseMs: number;
  /** Deliveries under way at once to one endpoint (across workers). */
  perEndpoint: number;
  /** Due deliveries the claim looks at, oldest first, to choose from. */
  scan: number;
}

export async function insertEndpoint(db: Executor, row: WebhookEndpointsTable): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function countEndpoints(db: Executor, teamId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listEndpoints(db: Executor, teamId: string): Promise<WebhookEndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
}

export async function findEndpoint(db: Executor, teamId: string, id: string): Promise<WebhookEndpointRow | null> {
  return (await db.selectFrom('webhook_endpoints').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function updateEndpoint(db: Executor, teamId: string, id: string, values: Updateable<WebhookEndpointsTable>): Promise<boolean> {
  const r = await db.updateTable('webhook_endpoints').set(values).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Locks the endpoint's row for the rest of the transaction and returns it (null when it is gone).
 * `test`, `replay` and the fan-out take it before counting the endpoint's undelivered deliveries
 * and adding to them, so together they never pass the bound. An update, so both databases lock
 * (PostgreSQL the row, SQLite the database, as every write transaction does).
 */
export async function lockEndpoint(db: Executor, teamId: string, id: string): Promise<WebhookEndpointRow | null> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({ id: eb.ref('id') }))
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** The endpoint's deliveries still to make (pending or under way), counted up to `cap`. */
export async function countUndelivered(db: Executor, teamId: string, endpointId: string, cap: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('team_id', '=', teamId)
        .where('endpoint_id', '=', endpointId)
        .where('state', 'in', ['pending', 'sending'])
        .limit(cap)
        .as('u'),
    )
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes the endpoint's row: it stops delivering at once (its history goes by `deleteEndpointHistory`). */
export async function deleteEndpoint(db: Executor, teamId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('webhook_endpoints').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Deletes up to `batch` attempts, then up to `batch` deliveries, of a deleted endpoint; how many went. */
export async function deleteEndpointHistory(db: Executor, teamId: string, endpointId: string, batch: number): Promise<number> {
  const attempts = await db
    .deleteFrom('webhook_attempts')
    .where('team_id', '=', teamId)
    .where('id', 'in', (eb) =>
      eb.selectFrom('webhook_attempts').select('id').where('team_id', '=', teamId).where('endpoint_id', '=', endpointId).limit(batch),
    )
    .executeTakeFirst();
  const deliveries = await db
    .deleteFrom('webhook_deliveries')
    .where('team_id', '=', teamId)
    .where('id', 'in', (eb) =>
      eb.selectFrom('webhook_deliveries').select('id').where('team_id', '=', teamId).where('endpoint_id', '=', endpointId).limit(batch),
    )
    .executeTakeFirst();
  return Number(attempts.numDeletedRows) + Number(deliveries.numDeletedRows);
}

/** Retention: deletes up to `batch` finished deliveries (sent or failed) queued before `before`. */
export async function pruneDeliveries(db: Executor, before: string, batch: number): Promise<number> {
  const r = await db
    .deleteFrom('webhook_deliveries')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('team_id', 'id'),
        'in',
        selectFrom('webhook_deliveries')
          .select(['team_id', 'id'])
          .where('created_at', '<', before)
          .where('state', 'in', ['sent', 'failed'])
          .limit(batch)
          .$asTuple('team_id', 'id'),
      ),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Retention: deletes up to `batch` attempts made before `before`. */
export async function pruneAttempts(db: Executor, before: string, batch: number): Promise<number> {
  const r = await db
    .deleteFrom('webhook_attempts')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(refTuple('team_id', 'id'), 'in', selectFrom('webhook_attempts').select(['team_id', 'id']).where('at', '<', before).limit(batch).$asTuple('team_id', 'id')),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** An enabled endpoint's place in the feed, for the fan-out. */
export type EndpointCursor = Pick<WebhookEndpointRow, 'team_id' | 'id' | 'cursor_tx' | 'cursor_seq'>;

/** A page of enabled endpoints' cursors of every team, in (team_id, id) order after `after` (keyset). */
export async function listEnabledCursors(db: Executor, after: { team_id: string; id: string } | null, limit: number): Promise<EndpointCursor[]> {
  let query = db.selectFrom('webhook_endpoints').select(['team_id', 'id', 'cursor_tx', 'cursor_seq']).where('enabled', '=', 1);
  if (after) {
    query = query.where((eb) => eb.or([eb('team_id', '>', after.team_id), eb.and([eb('team_id', '=', after.team_id), eb('id', '>', after.id)])]));
  }
  return query.orderBy('team_id').orderBy('id').limit(limit).execute();
}

/** Queues deliveries; one per (endpoint, event) ever, so a second fan-out of the same event is a no-op. */
export async function insertDeliveries(db: Executor, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['team_id', 'endpoint_id', 'event_id']).doNothing())
    .execute();
}

/** Replay: the delivery of `event_id` due again now, its retry window restarted (or a new one). */
export async function requeueDelivery(db: Executor, row: Insertable<WebhookDeliveriesTable>): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['team_id', 'endpoint_id', 'event_id']).doUpdateSet({
        state: 'pending',
        attempts: 0,
        next_attempt_at: row.next_attempt_at,
        locked_by: null,
        locked_until: null,
        created_at: row.created_at,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/**
 * The claim of up to `limit` due deliveries for `owner`, fairly across endpoints: an endpoint has at
 * most `perEndpoint` deliveries under way (leased, across all workers), and the claim takes every
 * endpoint's first due delivery before any endpoint's second. So an endpoint that never answers
 * holds at most `perEndpoint` attempt slots and the others' deliveries are claimed at once.
 *
 * One statement: `busy` counts the deliveries under way per endpoint (the leased rows: as many as
 * the workers' slots); `candidates` are the first `scan` due rows of endpoints below the bound,
 * read under `rowLock` (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so workers claiming at once take
 * disjoint rows; SQLite: none, its one writer sees every earlier claim); `ranked` numbers each
 * endpoint's candidates after its busy ones. Two workers claiming at the same moment may each give
 * an endpoint its `perEndpoint`, so the bound holds per claim, not exactly overall. A read first,
 * so idle polling takes no write lock.
 */
export function claimDueDeliveriesLocking(rowLock: RawBuilder<unknown>) {
  return async (db: Executor, claim: DeliveryClaim): Promise<WebhookDeliveryRow[]> => {
    const now = claim.now.toISOString();
    if (claim.limit <= 0 || !(await anyDueRow(db, 'webhook_deliveries', now))) return [];
    const leaseUntil = new Date(claim.now.getTime() + claim.leaseMs).toISOString();
    const due = dueCondition(now);
    const result = await sql<WebhookDeliveryRow>`
      with busy as (
        select team_id, endpoint_id, count(*) as n from webhook_deliveries
         where state = 'sending' and locked_until > ${now}
         group by team_id, endpoint_id
      ),
      candidates as (
        select d.team_id, d.id, d.endpoint_id, d.next_attempt_at from webhook_deliveries as d
         where ${due}
           and not exists (select 1 from busy as b where b.team_id = d.team_id and b.endpoint_id = d.endpoint_id and b.n >= ${claim.perEndpoint})
         order by d.next_attempt_at
         limit ${claim.scan}
         ${rowLock}
      ),
      ranked as (
        select c.team_id, c.id, c.next_attempt_at,
               row_number() over (partition by c.team_id, c.endpoint_id order by c.next_attempt_at, c.id) + coalesce(b.n, 0) as slot
          from candidates as c left join busy as b on b.team_id = c.team_id and b.endpoint_id = c.endpoint_id
      )
      update webhook_deliveries
         set state = 'sending', locked_by = ${claim.owner}, locked_until = ${leaseUntil},
             attempts = attempts + 1, updated_at = ${now}
       where (team_id, id) in (select team_id, id from ranked where slot <= ${claim.perEndpoint} order by slot, next_attempt_at limit ${claim.limit})
         and ${due}
      returning *`.execute(db);
    return result.rows;
  };
}

/** Records an attempt's result on the delivery while `owner` still holds its lease. */
export async function settleDelivery(
  db: Executor,
  fence: { teamId: string; id: string; owner: string },
  values: Updateable<WebhookDeliveriesTable>,
): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ ...values, locked_by: null, locked_until: null })
    .where('team_id', '=', fence.teamId)
    .where('id', '=', fence.id)
    .where('state', '=', 'sending')
    .where('locked_by', '=', fence.owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** An endpoint given up: its deliveries still waiting are failed. */
export async function failPendingDeliveries(db: Executor, teamId: string, endpointId: string, now: string, reason: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ state: 'failed', last_error: reason, updated_at: now })
    .where('team_id', '=', teamId)
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .execute();
}

export async function insertAttempt(db: Executor, row: WebhookAttemptsTable): Promise<void> {
  await db.insertInto('webhook_attempts').values(row).execute();
}

export async function listAttempts(db: Executor, teamId: string, endpointId: string, limit: number): Promise<WebhookAttemptRow[]> {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('endpoint_id', '=', endpointId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
