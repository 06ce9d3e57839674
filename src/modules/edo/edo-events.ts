/** `edo.status_changed`, recorded in the transaction that moves a job's status. */
import type { Executor } from '../../db/database.js';
import type { EdoJobRow } from '../../db/types.js';
import type { RecordedSend, RecordedSendRef } from './edo-request.js';
import { recordEvent } from '../events/index.js';

/**
 * The invoices module's reactions, inside the job's transaction: a delivery moves buyer_status
 * `not_sent` → `sent` (`onDelivered`), any status news moves the document's `changed_at`
 * (`onChanged`). A port: edo never imports invoices or notifications; app.ts wires it.
 */
export interface EdoDocumentPort {
  onDelivered(db: Executor, teamId: string, publicId: string): Promise<void>;
  onChanged(db: Executor, teamId: string, publicId: string, now: string): Promise<void>;
  /** Locks the document's row first, so EDO transactions lock in a document update's order. */
  lock(db: Executor, teamId: string, publicId: string): Promise<void>;
  /**
   * Up to `limit` documents whose create recorded a send in its own row that is not written yet
   * (a read: idle polling takes no write lock), in (team, document) order.
   */
  recordedSends(db: Executor, limit: number): Promise<RecordedSendRef[]>;
  /**
   * Inside the transaction that writes it: clears the document's record of `ref` and returns the
   * send as its create asked for it; null when it is no longer recorded (written meanwhile) or
   * stale (the document was updated by a node that does not know the record).
   */
  takeRecordedSend(db: Executor, ref: RecordedSendRef): Promise<RecordedSend | null>;
}


export async function recordEdoStatusChange(
  trx: Executor,
  documents: Pick<EdoDocumentPort, 'onChanged'>,
  job: EdoJobRow,
  to: string,
  values: Partial<EdoJobRow>,
  now: string,
): Promise<void> {
  if (job.status === to) return;
  await documents.onChanged(trx, job.team_id, job.public_id, now);
  await recordEvent(trx, {
    teamId: job.team_id,
    type: 'edo.status_changed',
    now,
    data: {
      public_id: job.public_id,
      revision: job.revision,
      job_id: job.job_id,
      from: job.status,
      to,
      operator: values.operator ?? job.operator,
      operator_document_id: values.operator_document_id ?? job.operator_document_id,
      seller_edo_id: job.seller_edo_id,
      buyer_edo_id: job.buyer_edo_id,
      rejection_reason: values.rejection_reason ?? job.rejection_reason,
    },
  });
}
