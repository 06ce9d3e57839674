/**
 * A sync job's state: how the operator's news moves it (forward only, compare-and-set, so the
 * sender and the feed reader never overwrite each other's newer news) and its wire view,
 * `metadata.edo`.
 */
import type { Db, Executor } from '../../db/database.js';
import type { EdoJobRow, EdoJobStatus, OutboxRow } from '../../db/types.js';
import type { EdoSync } from './edo.schemas.js';
import * as repo from './edo.repository.js';
import { recordEdoStatusChange, type EdoDocumentPort } from './edo-events.js';

/** How far along a job is; news never moves it backwards. */
const RANK: Record<EdoJobStatus, number> = { superseded: -1, failed: 0, queued: 0, sent: 1, delivered: 2, accepted: 3, rejected: 3 };

export type { EdoDocumentPort };

/** Moves a job forward to `status` (never back); delivery moves buyer_status to `sent` (`onDelivered`). */
export async function applyStatus(
  db: Db,
  documents: EdoDocumentPort,
  news: {
    teamId: string;
    jobId: string;
    status: 'delivered' | 'accepted' | 'rejected';
    /** When it happened at the operator. */
    at: string;
    reason: string | null;
    operatorDocumentId: string;
    now: string;
  },
): Promise<void> {
  const { teamId, jobId, status, at, reason, now } = news;
  await db.transaction().execute(async (trx) => {
    const job = await repo.findJob(trx, teamId, jobId);
    if (!job) return;
    await documents.lock(trx, teamId, job.public_id);
    const values = {
      operator_document_id: job.operator_document_id ?? news.operatorDocumentId,
      sent_at: job.sent_at ?? at,
      delivered_at: job.delivered_at ?? at,
      ...(status === 'accepted' ? { accepted_at: job.accepted_at ?? at } : {}),
      ...(status === 'rejected' ? { rejected_at: job.rejected_at ?? at, rejection_reason: reason } : {}),
    };
    await advanceJob(trx, documents, teamId, jobId, status, now, values);
    // The operator has it: a send still waiting for a retry (its answer was lost) is done.
    await repo.settleOutboxRow(trx, teamId, jobId, now);
    await documents.onDelivered(trx, teamId, job.public_id);
  });
}

/** Sets `status` and `values` unless the job is already as far or further (compare-and-set). */
export async function advanceJob(
  db: Executor,
  documents: Pick<EdoDocumentPort, 'onChanged'>,
  teamId: string,
  jobId: string,
  status: EdoJobStatus,
  now: string,
  values: Partial<EdoJobRow>,
): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const job = await repo.findJob(db, teamId, jobId);
    if (!job) return;
    // A superseded or given-up job still takes the operator's news: it is what happened.
    const forward = RANK[status] > Math.max(RANK[job.status], 0);
    const next = forward ? { ...values, status, updated_at: now } : { ...fillOnly(job, values), updated_at: now };
    if (!forward && Object.keys(next).length === 1) return;
    if (await repo.updateJobIf(db, teamId, jobId, job.status, next)) {
      if (forward) await recordEdoStatusChange(db, documents, job, status, values, now);
      return;
    }
  }
}

/** The values that only fill columns still empty (news arriving after a later status). */
function fillOnly(job: EdoJobRow, values: Partial<EdoJobRow>): Partial<EdoJobRow> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (job[key as keyof EdoJobRow] === null && value !== null && value !== undefined) out[key] = value;
  }
  return out as Partial<EdoJobRow>;
}

export function toEdoSync(job: EdoJobRow, row: OutboxRow | null, links: Awaited<ReturnType<typeof repo.listLinks>>): EdoSync {
  const status = job.status === 'superseded' ? 'queued' : job.status;
  const waiting = row !== null && row.state === 'pending' && status === 'queued';
  const updated = row && row.updated_at > job.updated_at ? row.updated_at : job.updated_at;
  return {
    status,
    operator: job.operator,
    job_id: job.job_id,
    revision: job.revision,
    seller_edo_id: job.seller_edo_id,
    buyer_edo_id: job.buyer_edo_id,
    operator_document_id: job.operator_document_id,
    attempts: row?.attempts ?? 0,
    max_attempts: row?.max_attempts ?? 0,
    next_attempt_at: waiting ? row.next_attempt_at : null,
    last_error: row?.last_error ?? null,
    last_error_code: row?.last_error_code ?? null,
    rejection_reason: job.rejection_reason,
    queued_at: job.queued_at,
    sent_at: job.sent_at,
    delivered_at: job.delivered_at,
    accepted_at: job.accepted_at,
    rejected_at: job.rejected_at,
    failed_at: job.failed_at,
    updated_at: updated,
    links: links.map((l) => ({
      document_id: l.link_document_id,
      kind: l.kind,
      title: l.title,
      number: l.number,
      date: l.date,
      linked_at: l.linked_at,
      received_at: l.received_at,
    })),
  };
}
