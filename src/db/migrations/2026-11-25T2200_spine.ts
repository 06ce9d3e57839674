import type { Kysely } from 'kysely';

/** Teams, tariffs, API keys, the reference data and the settings row. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('key', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tariffs')
    .addColumn('id', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('max_organizations', 'integer', (c) => c.notNull())
    .addColumn('max_api_keys', 'integer', (c) => c.notNull())
    .addColumn('key_per_sec', 'integer', (c) => c.notNull())
    .addColumn('key_per_min', 'integer', (c) => c.notNull())
    .addColumn('key_per_day', 'integer', (c) => c.notNull())
    .addColumn('team_per_sec', 'integer', (c) => c.notNull())
    .addColumn('team_per_min', 'integer', (c) => c.notNull())
    .addColumn('team_per_day', 'integer', (c) => c.notNull())
    .addColumn('emails_per_day', 'integer', (c) => c.notNull())
    .addColumn('external_share', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('teams')
    .addColumn('id', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('tariff_id', 'varchar(100)', (c) => c.references('tariffs.id'))
    .addColumn('locale', 'varchar(10)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('team_id', 'varchar(100)', (c) => c.references('teams.id'))
    .addColumn('kind', 'varchar(10)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'char(64)', (c) => c.notNull().unique())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_team_id_idx').on('api_keys').columns(['team_id', 'id']).execute();

  await db.schema
    .createTable('organizations')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull().references('teams.id'))
    .addColumn('id', 'varchar(100)', (c) => c.notNull())
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('inn', 'varchar(12)', (c) => c.notNull())
    .addColumn('kpp', 'varchar(9)')
    .addColumn('email', 'text')
    .addColumn('address', 'text')
    .addColumn('edo_id', 'varchar(46)')
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('organizations_pk', ['team_id', 'id'])
    .execute();
  await db.schema.createIndex('organizations_team_inn_idx').on('organizations').columns(['team_id', 'inn']).execute();

  await db.schema
    .createTable('bank_accounts')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull().references('teams.id'))
    .addColumn('id', 'varchar(100)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(100)', (c) => c.notNull())
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('bank_name', 'text')
    .addColumn('bik', 'varchar(9)')
    .addColumn('account', 'varchar(20)')
    .addColumn('corr_account', 'varchar(20)')
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('bank_accounts_pk', ['team_id', 'id'])
    .addForeignKeyConstraint('bank_accounts_org_fk', ['team_id', 'organization_id'], 'organizations', ['team_id', 'id'])
    .execute();

  await db.schema
    .createTable('managers')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull().references('teams.id'))
    .addColumn('id', 'varchar(100)', (c) => c.notNull())
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('phone', 'text')
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('managers_pk', ['team_id', 'id'])
    .execute();

  await db.schema
    .createTable('signers')
    .addColumn('team_id', 'varchar(100)', (c) => c.notNull().references('teams.id'))
    .addColumn('id', 'varchar(100)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(100)')
    .addColumn('sort_order', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('position', 'text')
    .addColumn('role', 'varchar(40)')
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('signers_pk', ['team_id', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
