import type { Kysely } from 'kysely';

/**
 * Per-document link epoch (docs/security.md): portal tokens carry the epoch of their document,
 * and `invoicing links rotate PUBLIC_ID` moves it on, which ends every portal link of that
 * document signed before. Existing documents start at 0, the epoch of tokens signed before
 * this migration (they stay valid).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('invoices')
    .addColumn('link_epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(): Promise<void> {
  // Forward-only.
}
