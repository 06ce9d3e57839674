import type { Kysely } from 'kysely';

/**
 * The outbox (side effects written in the business transaction, delivered by a worker) and
 * the per-team daily e-mail counter behind the tariff's `emails_per_day`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outbox')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('id', 'varchar(32)', (c) => c.notNull())
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('idem_key', 'varchar(400)', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('locked_by', 'varchar(64)')
    .addColumn('locked_until', 'varchar(40)')
    .addColumn('last_error', 'text')
    .addColumn('last_error_code', 'varchar(40)')
    .addColumn('sent_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('outbox_pk', ['team_id', 'id'])
    .addUniqueConstraint('outbox_idem_key_unique', ['team_id', 'idem_key'])
    .addForeignKeyConstraint('outbox_invoice_fk', ['team_id', 'public_id'], 'invoices', ['team_id', 'public_id'])
    .execute();
  // A document revision's e-mails, for its outcome (`metadata.notifications`).
  await db.schema
    .createIndex('outbox_team_document_idx')
    .on('outbox')
    .columns(['team_id', 'public_id', 'revision', 'position'])
    .execute();
  // The worker's scan is across teams by nature ("what is due now"), so this one index does
  // not lead with team_id; on a sharded database each shard keeps it locally for the fan-out.
  await db.schema.createIndex('outbox_due_idx').on('outbox').columns(['state', 'next_attempt_at']).execute();

  await db.schema
    .createTable('email_quota')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('reserved', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_quota_pk', ['team_id', 'day'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
