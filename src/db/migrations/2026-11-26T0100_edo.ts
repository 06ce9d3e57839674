import type { Kysely } from 'kysely';

/**
 * EDO synchronization (docs/edo.md): one job per document revision sent (its attempts live in
 * the outbox row of the same id, kind `edo_send`), the documents operators link to ours, the
 * change-feed cursor with its lease, and the built-in sandbox operator's mailbox.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('edo_jobs')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('job_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('operator', 'varchar(20)', (c) => c.notNull())
    .addColumn('seller_edo_id', 'varchar(46)')
    .addColumn('buyer_edo_id', 'varchar(46)', (c) => c.notNull())
    .addColumn('content_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('status', 'varchar(12)', (c) => c.notNull())
    .addColumn('operator_document_id', 'varchar(200)')
    .addColumn('rejection_reason', 'text')
    .addColumn('queued_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('sent_at', 'varchar(40)')
    .addColumn('delivered_at', 'varchar(40)')
    .addColumn('accepted_at', 'varchar(40)')
    .addColumn('rejected_at', 'varchar(40)')
    .addColumn('failed_at', 'varchar(40)')
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('edo_jobs_pk', ['team_id', 'job_id'])
    .addForeignKeyConstraint('edo_jobs_invoice_fk', ['team_id', 'public_id'], 'invoices', ['team_id', 'public_id'])
    .execute();
  await db.schema.createIndex('edo_jobs_document_idx').on('edo_jobs').columns(['team_id', 'public_id', 'revision']).execute();
  // The change feed names jobs, not teams: these two lookups are the feed's entry points
  // (job ids are random 128-bit tokens, unique across teams); everything after is team-scoped.
  await db.schema.createIndex('edo_jobs_job_idx').on('edo_jobs').column('job_id').unique().execute();
  await db.schema.createIndex('edo_jobs_operator_document_idx').on('edo_jobs').column('operator_document_id').execute();

  await db.schema
    .createTable('edo_links')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('link_document_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('job_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('kind', 'varchar(60)', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('number', 'varchar(200)')
    .addColumn('date', 'varchar(10)')
    .addColumn('linked_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('received_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('edo_links_pk', ['team_id', 'public_id', 'link_document_id'])
    .addForeignKeyConstraint('edo_links_invoice_fk', ['team_id', 'public_id'], 'invoices', ['team_id', 'public_id'])
    .execute();

  await db.schema
    .createTable('edo_feeds')
    .addColumn('feed', 'varchar(200)', (c) => c.primaryKey())
    .addColumn('cursor', 'text')
    .addColumn('locked_by', 'varchar(64)')
    .addColumn('locked_until', 'varchar(40)')
    .addColumn('events_applied', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'varchar(40)')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  // The sandbox operator's side (it plays the operator inside this database, so it survives
  // restarts and is shared by every node like a real operator would be).
  await db.schema
    .createTable('edo_sandbox_documents')
    .addColumn('job_id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('document_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('sender', 'varchar(46)', (c) => c.notNull())
    .addColumn('recipient', 'varchar(46)', (c) => c.notNull())
    .addColumn('send_attempts', 'integer', (c) => c.notNull())
    .addColumn('accepted', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('edo_sandbox_events')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('at', 'varchar(40)', (c) => c.notNull())
    .addColumn('job_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('document_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('edo_sandbox_events_at_idx').on('edo_sandbox_events').columns(['at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
