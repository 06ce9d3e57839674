/** `edo.status_changed`, recorded in the transaction that moves a job's status (issue 15). */
import type { Executor } from '../../db/database.js';
import type { EdoJobRow } from '../../db/types.js';
import { recordEvent } from '../events/index.js';

export async function recordEdoStatusChange(
  trx: Executor,
  job: EdoJobRow,
  to: string,
  values: Partial<EdoJobRow>,
  now: string,
): Promise<void> {
  if (job.status === to) return;
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
