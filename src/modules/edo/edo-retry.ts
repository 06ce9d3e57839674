/**
 * `invoicing edo retry PUBLIC_ID`: queues a failed EDO sync again, for an operator who fixed
 * what made it fail (the gateway's token, an outage longer than the retries, the buyer's
 * participant id at the operator). The job keeps its id, so the operator still sees one
 * document; its attempts start from zero.
 */
import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import * as repo from './edo.repository.js';

export class EdoRetryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EdoRetryError';
  }
}

export interface RetriedSync {
  teamId: string;
  publicId: string;
  jobId: string;
  revision: number;
}

/** Throws EdoRetryError when there is nothing to retry, saying why. */
export async function retryFailedSync(db: Db, clock: Clock, publicId: string): Promise<RetriedSync> {
  // The operator's tool has no team: public ids are unique across teams.
  const teamId = await repo.findDocumentTeamOfJobs(db, publicId);
  if (teamId === null) throw new EdoRetryError(`document ${publicId} has no EDO sync`);
  const current = await repo.findCurrentJob(db, teamId, publicId);
  if (!current) throw new EdoRetryError(`document ${publicId} has no EDO sync`);
  const { job } = current;
  if (job.status !== 'failed') throw new EdoRetryError(`the EDO sync of document ${publicId} is ${job.status}; only a failed one is retried`);
  if (!job.seller_edo_id) {
    throw new EdoRetryError(
      `the seller organization of document ${publicId} has no edo_id: set it (bootstrap file), then save the document again`,
    );
  }
  const now = clock.now().toISOString();
  const requeued = await db.transaction().execute((trx) => repo.requeueFailedJob(trx, teamId, job.job_id, now));
  if (!requeued) throw new EdoRetryError(`the EDO sync of document ${publicId} changed meanwhile; look again`);
  return { teamId, publicId, jobId: job.job_id, revision: job.revision };
}
