import { sql, type Kysely } from 'kysely';

/**
 * The e-mails a create asked for, recorded in the document's own row (`email_pending`: what
 * their outbox rows are rebuilt from besides the stored document and its share links) instead of
 * as outbox rows written in the request, on a node whose e-mails the workers send
 * (INVOICING_IN_PROCESS_WORKER=false). The notifications worker (or the document's next update,
 * whichever comes first) writes the rows and clears the column (docs/notifications.md,
 * "Recorded e-mails"; docs/performance.md, "Session 14").
 *
 * The partial index holds only the documents whose e-mails are still recorded. Additive: nodes of
 * the previous release ignore the column (docs/deployment.md, "Rolling restart").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('invoices').addColumn('email_pending', 'text').execute();
  await sql`CREATE INDEX invoices_email_pending_idx ON invoices (team_id, public_id) WHERE email_pending IS NOT NULL`.execute(db);
}

export async function down(): Promise<void> {
  // Forward-only.
}
