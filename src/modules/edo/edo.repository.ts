/**
 * SQL of EDO synchronization: jobs, incoming links and the feed cursor. Statements about a
 * document take the team; the change feed enters by job id or operator document id (globally
 * unique, see the migration) and continues with the team of the job it found.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { EdoJobRow, EdoJobStatus, EdoJobsTable, EdoLinkRow, EdoLinksTable, OutboxRow } from '../../db/types.js';

const JOB_COLUMNS = [
  'team_id', 'job_id', 'public_id', 'revision', 'operator', 'seller_edo_id', 'buyer_edo_id', 'content_hash', 'status',
  'operator_document_id', 'rejection_reason', 'queued_at', 'sent_at', 'delivered_at', 'accepted_at', 'rejected_at',
  'failed_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof EdoJobsTable>;

// Compiled once (src/db/prepared-query.ts): every document write with buyer_edo_id runs it.
const insertJobRow = preparedQuery<(typeof JOB_COLUMNS)[number], never>((db, p) =>
  db.insertInto('edo_jobs').values(Object.fromEntries(JOB_COLUMNS.map((c) => [c, p(c)])) as unknown as EdoJobsTable),
);

export async function insertJob(db: Executor, row: EdoJobsTable): Promise<void> {
  await insertJobRow(db, row);
}

/** The document's jobs, newest revision first. */
export async function listDocumentJobs(db: Executor, teamId: string, publicId: string): Promise<EdoJobRow[]> {
  return db
    .selectFrom('edo_jobs')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .orderBy('revision', 'desc')
    .orderBy('queued_at', 'desc')
    .execute();
}

/**
 * Every update reads it (`metadata.edo` of the answer), so it is compiled once, and its LIMIT is
 * a literal: SQLite (3.53) re-prepares a statement whose `LIMIT ?` is bound anew on every run
 * (measured 43 µs against 3 µs with `limit 1`).
 */
const currentJobOf = preparedQuery<'teamId' | 'publicId', EdoJobRow>((db, p) =>
  db
    .selectFrom('edo_jobs')
    .selectAll()
    .where('team_id', '=', p('teamId'))
    .where('public_id', '=', p('publicId'))
    .where('status', '!=', 'superseded')
    .orderBy('revision', 'desc')
    .orderBy('queued_at', 'desc')
    .limit(sql.lit(1)),
);
const outboxOfJob = preparedQuery<'teamId' | 'jobId', OutboxRow>((db, p) =>
  db.selectFrom('outbox').selectAll().where('team_id', '=', p('teamId')).where('id', '=', p('jobId')),
);

/** The newest job that was not superseded, with its outbox row (attempts, retry time, error). */
/**
 * SQL: whether the document (`team`, `publicId`: expressions of the caller's statement) has any
 * EDO job, i.e. whether `stateOf` could answer anything but null, for a caller that reads it
 * inside its own statement (the invoices module's read before an update, PostgreSQL).
 */
export function edoJobsExistSql(team: RawBuilder<unknown>, publicId: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from edo_jobs j where j.team_id = ${team} and j.public_id = ${publicId})`;
}

export async function findCurrentJob(
  db: Executor,
  teamId: string,
  publicId: string,
): Promise<{ job: EdoJobRow; outbox: OutboxRow | null } | null> {
  const job = (await currentJobOf(db, { teamId, publicId }))[0];
  if (!job) return null;
  const outbox = (await outboxOfJob(db, { teamId, jobId: job.job_id }))[0];
  return { job, outbox: outbox ?? null };
}

export async function listLinks(db: Executor, teamId: string, publicId: string, limit: number): Promise<EdoLinkRow[]> {
  return db
    .selectFrom('edo_links')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .orderBy('linked_at')
    .orderBy('received_at')
    .orderBy('link_document_id')
    .limit(limit)
    .execute();
}

/** Jobs still waiting in the outbox (not claimed): superseded by a newer revision or a change that stops sync. */
/**
 * The document's EDO sends with their state. Every update of a document runs it (planSync), most
 * finding nothing: compiled once. `state` is compared here, not in SQL: with `state = 'pending'`
 * in the WHERE, SQLite (no statistics) planned it on `outbox_due_idx (state, …)` and visited every
 * pending row of every team (the e-mails and sends waiting for the worker) to find the
 * document's: 431 µs per update with 1,400 waiting, growing with the backlog. Without it, the
 * plan is the document's index `outbox_team_document_idx (team_id, public_id, …)`: 3 µs.
 */
const sendsOf = preparedQuery<'teamId' | 'publicId', { id: string; state: string }>((db, p) =>
  db
    .selectFrom('outbox')
    .select(['id', 'state'])
    .where('team_id', '=', p('teamId'))
    .where('public_id', '=', p('publicId'))
    .where('kind', '=', 'edo_send'),
);

export async function supersedeWaitingJobs(db: Executor, teamId: string, publicId: string, now: string): Promise<number> {
  const waiting = (await sendsOf(db, { teamId, publicId })).filter((s) => s.state === 'pending');
  if (waiting.length === 0) return 0;
  const ids = waiting.map((w) => w.id);
  const result = await db
    .updateTable('outbox')
    .set({ state: 'superseded', updated_at: now })
    .where('team_id', '=', teamId)
    .where('id', 'in', ids)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  await db
    .updateTable('edo_jobs')
    .set({ status: 'superseded', updated_at: now })
    .where('team_id', '=', teamId)
    .where('job_id', 'in', ids)
    .where('status', '=', 'queued')
    .execute();
  return Number(result.numUpdatedRows);
}

/** Finds the job an operator event is about: by our job id first, else by the operator's document id. */
export async function findJobForEvent(db: Executor, jobId: string | null, operatorDocumentId: string): Promise<EdoJobRow | null> {
  if (jobId) {
    const byJob = await db.selectFrom('edo_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    if (byJob) return byJob;
  }
  const byDocument = await db
    .selectFrom('edo_jobs')
    .selectAll()
    .where('operator_document_id', '=', operatorDocumentId)
    .orderBy('revision', 'desc')
    .limit(1)
    .executeTakeFirst();
  return byDocument ?? null;
}

/**
 * Compare-and-set of a job's operator-reported columns: applied only while the status is still
 * `expected`, so the worker and the feed reader never overwrite each other's newer news.
 */
export async function updateJobIf(
  db: Executor,
  teamId: string,
  jobId: string,
  expected: EdoJobStatus,
  values: Partial<Omit<EdoJobsTable, 'team_id' | 'job_id'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('edo_jobs')
    .set(values)
    .where('team_id', '=', teamId)
    .where('job_id', '=', jobId)
    .where('status', '=', expected)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findJob(db: Executor, teamId: string, jobId: string): Promise<EdoJobRow | null> {
  const row = await db.selectFrom('edo_jobs').selectAll().where('team_id', '=', teamId).where('job_id', '=', jobId).executeTakeFirst();
  return row ?? null;
}

/** Attaches a linked document once (the operator's id of it is the key). True when new. */
export async function insertLink(db: Executor, row: EdoLinksTable): Promise<boolean> {
  const result = await db
    .insertInto('edo_links')
    .values(row)
    .onConflict((oc) => oc.columns(['team_id', 'public_id', 'link_document_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** The operator reported the document delivered: a send still waiting for a retry is done. */
export async function settleOutboxRow(db: Executor, teamId: string, jobId: string, now: string): Promise<void> {
  await db
    .updateTable('outbox')
    .set({ state: 'sent', sent_at: now, updated_at: now, next_attempt_at: now })
    .where('team_id', '=', teamId)
    .where('id', '=', jobId)
    .where('state', 'in', ['pending', 'failed'])
    .execute();
}

// --- the change-feed cursor ----------------------------------------------------------------

export interface FeedLease {
  feed: string;
  cursor: string | null;
}

/** Takes the feed's lease for `owner` (creating the feed row on first use); null when another holds it. */
export async function claimFeed(db: Executor, feed: string, owner: string, now: string, leaseUntil: string): Promise<FeedLease | null> {
  await db
    .insertInto('edo_feeds')
    .values({ feed, cursor: null, locked_by: null, locked_until: null, events_applied: 0, last_polled_at: null, last_error: null, updated_at: now })
    .onConflict((oc) => oc.column('feed').doNothing())
    .execute();
  const result = await db
    .updateTable('edo_feeds')
    .set({ locked_by: owner, locked_until: leaseUntil, updated_at: now })
    .where('feed', '=', feed)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return null;
  const row = await db.selectFrom('edo_feeds').select(['feed', 'cursor']).where('feed', '=', feed).where('locked_by', '=', owner).executeTakeFirst();
  return row ?? null;
}

/** Stores the cursor after a page was applied; false when the lease was lost. */
export async function advanceFeed(
  db: Executor,
  feed: string,
  owner: string,
  values: { cursor: string | null; applied: number; now: string; leaseUntil: string },
): Promise<boolean> {
  const result = await db
    .updateTable('edo_feeds')
    .set((eb) => ({
      cursor: values.cursor,
      events_applied: eb('events_applied', '+', values.applied),
      last_polled_at: values.now,
      last_error: null,
      locked_until: values.leaseUntil,
      updated_at: values.now,
    }))
    .where('feed', '=', feed)
    .where('locked_by', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseFeed(db: Executor, feed: string, owner: string, now: string, error: string | null): Promise<void> {
  await db
    .updateTable('edo_feeds')
    .set({ locked_by: null, locked_until: null, last_polled_at: now, last_error: error, updated_at: now })
    .where('feed', '=', feed)
    .where('locked_by', '=', owner)
    .execute();
}

// --- operator tools -------------------------------------------------------------------------

/** The team of a document that has EDO jobs (public ids are unique across teams); null when none. */
export async function findDocumentTeamOfJobs(db: Executor, publicId: string): Promise<string | null> {
  const row = await db.selectFrom('edo_jobs').select('team_id').where('public_id', '=', publicId).limit(1).executeTakeFirst();
  return row?.team_id ?? null;
}

/** A failed job back to `queued`, its outbox row due now with no attempts counted; false when it was not failed. */
export async function requeueFailedJob(db: Executor, teamId: string, jobId: string, now: string): Promise<boolean> {
  const row = await db
    .updateTable('outbox')
    .set({ state: 'pending', attempts: 0, next_attempt_at: now, locked_by: null, locked_until: null, updated_at: now })
    .where('team_id', '=', teamId)
    .where('id', '=', jobId)
    .where('state', '=', 'failed')
    .executeTakeFirst();
  if (Number(row.numUpdatedRows) !== 1) return false;
  const job = await db
    .updateTable('edo_jobs')
    .set({ status: 'queued', failed_at: null, updated_at: now })
    .where('team_id', '=', teamId)
    .where('job_id', '=', jobId)
    .where('status', '=', 'failed')
    .executeTakeFirst();
  if (Number(job.numUpdatedRows) !== 1) throw new Error('the job and its outbox row disagree');
  return true;
}
