import type { Kysely } from 'kysely';

/**
 * Documents, their items, share links, kept revisions and idempotency records. Every table
 * leads its key with team_id. `public_id` is also unique across teams: a client-supplied id
 * taken by any document is a conflict, and share pages find documents by it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invoices')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull().references('teams.id'))
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('package_public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('date', 'varchar(10)', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('direction', 'varchar(10)', (c) => c.notNull())
    .addColumn('seller_org_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('seller_inn', 'varchar(12)', (c) => c.notNull())
    .addColumn('seller_name', 'text', (c) => c.notNull())
    .addColumn('buyer_inn', 'varchar(64)')
    .addColumn('buyer_name', 'text', (c) => c.notNull())
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('seller_status', 'varchar(20)', (c) => c.notNull())
    .addColumn('buyer_status', 'varchar(20)', (c) => c.notNull())
    .addColumn('service_status', 'varchar(20)', (c) => c.notNull())
    .addColumn('service_status_reason', 'text', (c) => c.notNull())
    .addColumn('editor_mode', 'varchar(10)', (c) => c.notNull())
    .addColumn('source_type', 'varchar(10)', (c) => c.notNull())
    .addColumn('subtotal', 'varchar(32)', (c) => c.notNull())
    .addColumn('vat_total', 'varchar(32)', (c) => c.notNull())
    .addColumn('total', 'varchar(32)', (c) => c.notNull())
    .addColumn('public_share_enabled', 'integer', (c) => c.notNull())
    .addColumn('information_system', 'text')
    .addColumn('seller_edo_id', 'varchar(46)')
    .addColumn('buyer_edo_id', 'varchar(46)')
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('validation', 'text', (c) => c.notNull())
    .addColumn('notifications', 'text')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('last_modified_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('created_by_login', 'text')
    .addColumn('last_modified_by_login', 'text')
    .addColumn('api_key_id', 'bigint')
    .addColumn('api_key_name', 'text')
    .addColumn('api_request_host', 'text')
    .addColumn('api_created_at', 'varchar(40)')
    .addColumn('api_updated_at', 'varchar(40)')
    .addColumn('viewed_at', 'varchar(40)')
    .addColumn('payment_reported_at', 'varchar(40)')
    .addPrimaryKeyConstraint('invoices_pk', ['team_id', 'public_id'])
    .execute();
  // The list's order (date desc, then creation desc) read straight off one index per team.
  await db.schema
    .createIndex('invoices_team_list_idx')
    .on('invoices')
    .columns(['team_id', 'date', 'created_at', 'public_id'])
    .execute();
  // Integrators that sync ask for `updated_since`.
  await db.schema
    .createIndex('invoices_team_modified_idx')
    .on('invoices')
    .columns(['team_id', 'last_modified_at'])
    .execute();

  await db.schema
    .createTable('invoice_items')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('line_no', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('qty', 'varchar(40)', (c) => c.notNull())
    .addColumn('unit', 'varchar(32)', (c) => c.notNull())
    .addColumn('price', 'varchar(40)', (c) => c.notNull())
    .addColumn('vat_pct', 'varchar(10)')
    .addColumn('amount', 'varchar(32)', (c) => c.notNull())
    .addColumn('net', 'varchar(32)', (c) => c.notNull())
    .addColumn('vat', 'varchar(32)', (c) => c.notNull())
    .addColumn('gross', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('invoice_items_pk', ['team_id', 'public_id', 'line_no'])
    .addForeignKeyConstraint('invoice_items_invoice_fk', ['team_id', 'public_id'], 'invoices', ['team_id', 'public_id'])
    .execute();

  await db.schema
    .createTable('share_links')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('token', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('name', 'text')
    .addColumn('position', 'text')
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('last_opened_at', 'varchar(40)')
    .addPrimaryKeyConstraint('share_links_pk', ['team_id', 'public_id', 'token'])
    .addForeignKeyConstraint('share_links_invoice_fk', ['team_id', 'public_id'], 'invoices', ['team_id', 'public_id'])
    .execute();

  await db.schema
    .createTable('invoice_revisions')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('public_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('seller_status', 'varchar(20)', (c) => c.notNull())
    .addColumn('total', 'varchar(32)', (c) => c.notNull())
    .addColumn('editor_mode', 'varchar(10)', (c) => c.notNull())
    .addColumn('modified_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('modified_by_login', 'text')
    .addColumn('api_key_id', 'bigint')
    .addColumn('superseded_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('invoice_revisions_pk', ['team_id', 'public_id', 'revision'])
    .addForeignKeyConstraint('invoice_revisions_invoice_fk', ['team_id', 'public_id'], 'invoices', ['team_id', 'public_id'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('idem_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('request_hash', 'char(64)', (c) => c.notNull())
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['team_id', 'idem_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
