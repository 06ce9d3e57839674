/**
 * SQL of the built-in sandbox operator: its mailbox (`edo_sandbox_documents`, one row per job
 * id) and its change feed (`edo_sandbox_events`). These tables belong to the pretend operator,
 * not to a team, so unlike tenant repositories nothing here takes a team id.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { EdoSandboxDocumentsTable, EdoSandboxEventsTable } from '../../db/types.js';

export type SandboxDocumentRow = Selectable<EdoSandboxDocumentsTable>;
export type SandboxEventRow = Selectable<EdoSandboxEventsTable>;
export type NewSandboxEvent = Insertable<EdoSandboxEventsTable>;

/** A position in the feed: events strictly after (at, id) come next. */
export interface SandboxFeedPosition {
  at: string;
  id: string;
}

/**
 * Counts one send call of a job: creates its row (attempt 1, not accepted) or adds 1 to the
 * attempts of the existing one, and returns the row as stored. One statement on both
 * databases; on PostgreSQL the row stays locked until commit, so concurrent sends of one job
 * run one after the other. The stored sender and recipient are never overwritten.
 */
export async function recordSendAttempt(
  db: Executor,
  doc: { jobId: string; documentId: string; sender: string; recipient: string; now: string },
): Promise<SandboxDocumentRow> {
  return db
    .insertInto('edo_sandbox_documents')
    .values({
      job_id: doc.jobId,
      document_id: doc.documentId,
      sender: doc.sender,
      recipient: doc.recipient,
      send_attempts: 1,
      accepted: 0,
      created_at: doc.now,
    })
    .onConflict((oc) =>
      oc.column('job_id').doUpdateSet({ send_attempts: sql<number>`edo_sandbox_documents.send_attempts + 1` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function markAccepted(db: Executor, jobId: string): Promise<void> {
  await db.updateTable('edo_sandbox_documents').set({ accepted: 1 }).where('job_id', '=', jobId).execute();
}

/** Schedules events; an id already present is left as it is, so a repeat never duplicates. */
export async function insertEvents(db: Executor, events: readonly NewSandboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('edo_sandbox_events')
    .values([...events])
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Events due by `dueBy` (ISO-8601 UTC) after `after`, in feed order (at, id), at most `limit`.
 * `at` is always `Date#toISOString()` output, whose fixed width makes text order time order.
 */
export async function listDueEvents(
  db: Executor,
  after: SandboxFeedPosition | null,
  dueBy: string,
  limit: number,
): Promise<SandboxEventRow[]> {
  let query = db.selectFrom('edo_sandbox_events').selectAll().where('at', '<=', dueBy);
  if (after !== null) {
    query = query.where((eb) =>
      eb.or([eb('at', '>', after.at), eb.and([eb('at', '=', after.at), eb('id', '>', after.id)])]),
    );
  }
  return query.orderBy('at').orderBy('id').limit(limit).execute();
}
