import { sql, type Kysely } from 'kysely';

/**
 * The per-team document counter behind the unfiltered list's `total` (issue 12,
 * docs/performance.md "The exact total"): `count(*)` over a team's documents cost ~100 ms at
 * 1M documents on every first page. A team's count is the sum of its rows here, kept in step
 * in the transaction that inserts documents (src/db/document-counts.ts, called by the invoices
 * repository). PostgreSQL spreads a team over several shard rows so concurrent creates do not
 * queue on one row lock; SQLite, one writer at a time, uses shard 0.
 *
 * Documents stored before this migration are counted here once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('team_document_counts')
    .addColumn('team_id', 'varchar(100)', (col) => col.notNull())
    .addColumn('shard', 'integer', (col) => col.notNull())
    .addColumn('documents', 'bigint', (col) => col.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('team_document_counts_pk', ['team_id', 'shard'])
    .execute();
  await sql`INSERT INTO team_document_counts (team_id, shard, documents)
            SELECT team_id, 0, count(*) FROM invoices GROUP BY team_id`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
