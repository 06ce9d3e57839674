import type { Kysely } from 'kysely';

/**
 * The expired-key sweep of every keyed create (`DELETE … WHERE team_id = ? AND expires_at < ?`,
 * src/modules/invoices/idempotency.repository.ts) walked all of the team's keys: SQLite chose
 * the primary key (team_id, idem_key) for `team_id = ?` and read each key's `expires_at`, which
 * sits after the stored response (overflow pages). Each keyed create cost grew with the keys of
 * the last 24 hours (issue 13: 15 CPU ms a create at 3,000 keys). With (team_id, expires_at)
 * the sweep visits only the expired keys, on both databases. Additive: the older
 * `idempotency_keys_expires_idx` stays for a previous release during a rolling restart.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('idempotency_keys_team_expires_idx').on('idempotency_keys').columns(['team_id', 'expires_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
