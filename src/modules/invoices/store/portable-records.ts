/**
 * The records a create leaves in its document's row (`invoices.edo_pending_job`,
 * `invoices.email_pending`; write/recorded-sends.ts holds their rules), as portable SQL.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';

/** The columns of `invoices` a create records in (`edo_pending_job`, `email_pending`). */
type RecordColumn = 'edo_pending_job' | 'email_pending';

/**
 * Up to `limit` documents with a record in `column`, in (team, document) order: several workers
 * taking records in one order never wait on each other in a cycle. The column's partial index
 * (`invoices_edo_pending_idx`, `invoices_email_pending_idx`) holds exactly these rows.
 */
export async function recordsIn(db: Executor, column: RecordColumn, limit: number): Promise<Array<{ teamId: string; publicId: string; record: string }>> {
  const rows = await db
    .selectFrom('invoices')
    .select(['team_id', 'public_id', `${column} as record`])
    .where(column, 'is not', null)
    .orderBy('team_id')
    .orderBy('public_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ teamId: r.team_id, publicId: r.public_id, record: r.record as string }));
}

/**
 * Clears the document's record in `column` if it is still `record`: the row as it was, or
 * undefined. `outcome`: the e-mail outcome the record answered, stored in the same statement
 * (unless one is stored), since the record that gave it goes.
 */
export function takeRecord(db: Executor, column: RecordColumn, ref: { teamId: string; publicId: string }, record: string, outcome: string | null = null) {
  return db
    .updateTable('invoices')
    .set(outcome === null ? { [column]: null } : { [column]: null, notifications: sql<string>`coalesce(notifications, ${outcome})` })
    .where('team_id', '=', ref.teamId)
    .where('public_id', '=', ref.publicId)
    .where(column, '=', record)
    .returningAll()
    .executeTakeFirst();
}

/** The first revision's document and total, as kept in `invoice_revisions` (a later revision is current). */
export async function firstRevision(db: Executor, teamId: string, publicId: string): Promise<{ document: string; total: string } | undefined> {
  return db
    .selectFrom('invoice_revisions')
    .select(['document', 'total'])
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('revision', '=', 1)
    .executeTakeFirst();
}

/** The document's share links' kinds, addresses and tokens, in display order. */
export async function linkAddresses(db: Executor, teamId: string, publicId: string) {
  return db
    .selectFrom('share_links')
    .select(['kind', 'email', 'token'])
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .orderBy('sort_order')
    .execute();
}
