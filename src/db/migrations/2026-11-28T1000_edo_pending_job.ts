import { sql, type Kysely } from 'kysely';

/**
 * The EDO send a create asked for, recorded in the document's own row (`edo_pending_job`: the
 * job's id, given in the create's answer) instead of as an `edo_jobs` row and an outbox row
 * written in the request. The worker (or the document's next update, whichever comes first)
 * writes the job and its outbox row from the row and clears the column (docs/edo.md,
 * "Recorded sends"; docs/performance.md, "Session 14").
 *
 * The partial index holds only the documents whose send is still recorded: the worker finds
 * them without reading the others, and a document without one costs no index entry.
 *
 * Additive: nodes of the previous release ignore the column (docs/deployment.md, "Rolling
 * restart").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('invoices').addColumn('edo_pending_job', 'varchar(32)').execute();
  await sql`CREATE INDEX invoices_edo_pending_idx ON invoices (team_id, public_id) WHERE edo_pending_job IS NOT NULL`.execute(db);
}

export async function down(): Promise<void> {
  // Forward-only.
}
