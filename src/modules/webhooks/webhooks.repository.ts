/** SQL of webhook endpoints, deliveries and attempts; every statement is scoped by team (the worker's claim excepted). */
import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { anyDueRow, claimDueOutboxRows } from '../../db/outbox-claim.js';
import type {
  WebhookAttemptRow,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookDeliveryRow,
  WebhookEndpointRow,
  WebhookEndpointsTable,
} from '../../db/types.js';

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

/** Moves the fan-out cursor only if it is still `from` (one fan-out per position across workers). */
export async function advanceCursor(
  db: Executor,
  endpoint: Pick<WebhookEndpointRow, 'team_id' | 'id' | 'cursor_tx' | 'cursor_seq'>,
  to: { tx: number; seq: number },
): Promise<boolean> {
  const r = await db
    .updateTable('webhook_endpoints')
    .set({ cursor_tx: to.tx, cursor_seq: to.seq })
    .where('team_id', '=', endpoint.team_id)
    .where('id', '=', endpoint.id)
    .where('cursor_tx', '=', endpoint.cursor_tx)
    .where('cursor_seq', '=', endpoint.cursor_seq)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteEndpoint(db: Executor, teamId: string, id: string): Promise<boolean> {
  await db.deleteFrom('webhook_attempts').where('team_id', '=', teamId).where('endpoint_id', '=', id).execute();
  await db.deleteFrom('webhook_deliveries').where('team_id', '=', teamId).where('endpoint_id', '=', id).execute();
  const r = await db.deleteFrom('webhook_endpoints').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Enabled endpoints of every team, for the fan-out (bounded per pass). */
/** A page of enabled endpoints of every team, in (team_id, id) order after `after` (keyset). */
export async function listEnabledEndpoints(
  db: Executor,
  after: { team_id: string; id: string } | null,
  limit: number,
): Promise<WebhookEndpointRow[]> {
  let query = db.selectFrom('webhook_endpoints').selectAll().where('enabled', '=', 1);
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

export async function claimDueDeliveries(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  claim: { owner: string; limit: number; now: Date; leaseMs: number },
): Promise<WebhookDeliveryRow[]> {
  const now = claim.now.toISOString();
  if (!(await anyDueRow(db, 'webhook_deliveries', now))) return [];
  return claimDueOutboxRows<WebhookDeliveryRow>(db, dialect, {
    now,
    leaseUntil: new Date(claim.now.getTime() + claim.leaseMs).toISOString(),
    owner: claim.owner,
    limit: claim.limit,
    kinds: [],
    table: 'webhook_deliveries',
  });
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
