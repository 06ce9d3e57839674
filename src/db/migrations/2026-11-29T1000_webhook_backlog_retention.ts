import { sql, type Kysely } from 'kysely';

/**
 * Webhook bounds and retention (docs/webhooks.md, "Bounds"; docs/operations.md, "Retention"):
 *
 * - `webhook_deliveries_undelivered_idx`: an endpoint's deliveries still to make (pending or
 *   being attempted), counted before `test`, `replay` and the fan-out add more (at most 1,000 per
 *   endpoint). Partial, so the count reads only those, not the endpoint's delivered history.
 * - `webhook_deliveries_created_idx`, `webhook_attempts_at_idx`: the retention passes find what
 *   is older than INVOICING_DELIVERY_RETENTION_DAYS by age, across teams.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_undelivered_idx')
    .on('webhook_deliveries')
    .columns(['team_id', 'endpoint_id'])
    .where(sql.ref('state'), 'in', ['pending', 'sending'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').columns(['created_at']).execute();
  await db.schema.createIndex('webhook_attempts_at_idx').on('webhook_attempts').columns(['at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
