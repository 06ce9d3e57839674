/**
 * EDO sends and e-mails recorded in the document's own row (`invoices.edo_pending_job`,
 * docs/edo.md "Recorded sends"; `invoices.email_pending`, docs/notifications.md "Recorded
 * e-mails"): a create that asks for them stores what they are built from in the row instead of
 * writing their jobs and outbox rows in the request. The workers (`EdoService.writeRecordedSends`,
 * `NotificationService.writeRecordedEmails`) or the document's next update write them from the
 * row, taking the record with a conditional update so that they are written once.
 */
import type { Executor } from '../../../db/database.js';
import type { InvoiceRow } from '../../../db/types.js';
import { firstRevision, linkAddresses, recordsIn, takeRecord } from '../store/portable-records.js';
import type { RecordedSend, RecordedSendRef } from '../../edo/index.js';
import { recordedOutcome, type RecordedEmails, type RecordedEmailsRef } from '../../notifications/index.js';
import type { NormalizedInvoice } from '../model/invoice.model.js';
import { edoSyncRequest } from '../model/document-row.js';

/**
 * The send `row`'s create recorded (as job `jobId`), as the create built it: the row is still
 * the first revision its create wrote (a record is taken by any update before it changes the
 * row), and the stored document is the validated invoice with its public_id and seller_status
 * (`storedDocument`), which `edoSyncRequest` reads and hashes as the create did.
 */
function recordedSendOf(row: InvoiceRow, jobId: string): RecordedSend {
  return {
    request: edoSyncRequest(row, JSON.parse(row.document) as NormalizedInvoice),
    jobId,
    queuedAt: row.created_at,
    traceparent: row.traceparent,
  };
}

/** Up to `limit` documents with a recorded send (`recordsIn`). */
export async function recordedSends(db: Executor, limit: number): Promise<RecordedSendRef[]> {
  return (await recordsIn(db, 'edo_pending_job', limit)).map(({ teamId, publicId, record }) => ({ teamId, publicId, jobId: record }));
}

/**
 * Inside the transaction that writes the send: clears the record of `ref` if it is still there
 * and returns the send; null when it was taken meanwhile, or when it is stale: a node of the
 * previous release (which does not know the column) updated the document, so its revision is
 * no longer the first and that update already planned the document's sync.
 */
export async function takeRecordedSend(db: Executor, ref: RecordedSendRef): Promise<RecordedSend | null> {
  const row = await takeRecord(db, 'edo_pending_job', ref, ref.jobId);
  if (!row || row.revision !== 1) return null;
  return recordedSendOf(row, ref.jobId);
}

/** Up to `limit` documents with recorded e-mails (`recordsIn`). */
export function recordedEmails(db: Executor, limit: number): Promise<RecordedEmailsRef[]> {
  return recordsIn(db, 'email_pending', limit);
}

/**
 * Inside the transaction that writes the e-mails: clears the record `ref` if it is still there
 * and returns the first revision's document, total and the document's share links to rebuild
 * them from; null when it was taken meanwhile. A record found on a later revision (a node of the
 * previous release updated the document without knowing the column) is rebuilt from the first
 * revision kept in `invoice_revisions` (the e-mails announced that revision, and the quota was
 * taken for them); null, and nothing sent, when that revision is no longer kept.
 */
export async function takeRecordedEmails(db: Executor, ref: RecordedEmailsRef): Promise<RecordedEmails | null> {
  const outcome = recordedOutcome(ref.publicId, ref.record);
  const row = await takeRecord(db, 'email_pending', ref, ref.record, outcome && JSON.stringify(outcome));
  if (!row) return null;
  const first = row.revision === 1 ? row : await firstRevision(db, ref.teamId, ref.publicId);
  if (!first) return null;
  const links = await linkAddresses(db, ref.teamId, ref.publicId);
  return { ...ref, document: JSON.parse(first.document) as NormalizedInvoice, total: first.total, links, traceparent: row.traceparent };
}
