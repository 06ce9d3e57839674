import type { Kysely } from 'kysely';

/**
 * The W3C `traceparent` of the write that queued background work (docs/operations.md,
 * "Tracing"): on an outbox row (an e-mail, an EDO send), and on the document's row for the sends
 * its create records there (`email_pending`, `edo_pending_job`: the worker writes their outbox
 * rows later, from that row). A delivery's span continues that trace, so one trace shows a
 * create and its deliveries. Null when tracing is off (OTEL_EXPORTER_OTLP_ENDPOINT unset).
 *
 * Additive: nodes of the previous release ignore the columns (docs/deployment.md, "Rolling restart").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('traceparent', 'varchar(55)').execute();
  await db.schema.alterTable('invoices').addColumn('traceparent', 'varchar(55)').execute();
}

export async function down(): Promise<void> {
  // Forward-only.
}
