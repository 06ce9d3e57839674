import type { Kysely } from 'kysely';

/**
 * A webhook delivery continues the trace of the write that caused its event: `events` and
 * `webhook_deliveries` carry the W3C traceparent of that write (null when tracing is off, which
 * costs the insert nothing more than a null column).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('traceparent', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('traceparent', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
