import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * The events feed and webhooks (issue 15):
 *
 * - `events`: one row per change an integrator cares about, written in the change's own
 *   transaction. The feed position is (`tx_id`, `seq`): on PostgreSQL `tx_id` is the writing
 *   transaction's id (`pg_current_xact_id()`), and the feed only shows events of transactions
 *   older than every transaction still running, so an event committed later can never sort
 *   before one already read (docs/webhooks.md, "Ordering"). SQLite has one writer at a time:
 *   `tx_id` is 0 and `seq` alone is the commit order.
 * - `invoices.changed_at`: moved by any change of the document (every event about it).
 * - `tariffs.max_webhook_endpoints`.
 * - `webhook_endpoints`, `webhook_deliveries` (one per endpoint and event, leased like the
 *   outbox) and `webhook_attempts` (one per HTTP attempt, for the deliveries list).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = dialectOf(db) === 'postgres';
  let events = db.schema.createTable('events');
  events = postgres
    ? events.addColumn('seq', 'bigserial', (c) => c.primaryKey())
    : events.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
  await events
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('tx_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('type', 'varchar(40)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)')
    .addColumn('revision', 'integer')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_team_position_idx').on('events').columns(['team_id', 'tx_id', 'seq']).execute();
  // Retention deletes by age across teams.
  await db.schema.createIndex('events_created_idx').on('events').columns(['created_at']).execute();

  await db.schema.alterTable('invoices').addColumn('changed_at', 'varchar(40)').execute();
  await sql`update invoices set changed_at = last_modified_at`.execute(db);
  await db.schema.createIndex('invoices_team_changed_idx').on('invoices').columns(['team_id', 'changed_at']).execute();

  await db.schema
    .alterTable('tariffs')
    .addColumn('max_webhook_endpoints', 'integer', (c) => c.notNull().defaultTo(5))
    .execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('id', 'varchar(40)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'varchar(500)', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'varchar(200)')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'varchar(40)')
    .addColumn('cursor_tx', 'bigint', (c) => c.notNull())
    .addColumn('cursor_seq', 'bigint', (c) => c.notNull())
    .addColumn('failing_since', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_endpoints_pk', ['team_id', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('id', 'varchar(32)', (c) => c.notNull())
    .addColumn('endpoint_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(80)', (c) => c.notNull())
    .addColumn('event_type', 'varchar(40)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('locked_by', 'varchar(64)')
    .addColumn('locked_until', 'varchar(40)')
    .addColumn('last_error', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('sent_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['team_id', 'id'])
    .addUniqueConstraint('webhook_deliveries_event_unique', ['team_id', 'endpoint_id', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('id', 'varchar(32)', (c) => c.notNull())
    .addColumn('endpoint_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('delivery_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(80)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'varchar(500)')
    .addColumn('at', 'varchar(40)', (c) => c.notNull())
    .addColumn('next_attempt_at', 'varchar(40)')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['team_id', 'id'])
    .execute();
  await db.schema.createIndex('webhook_attempts_endpoint_idx').on('webhook_attempts').columns(['team_id', 'endpoint_id', 'at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
