/**
 * EDO synchronization: the operator port, its sandbox and HTTP adapters, sync jobs and the
 * change-feed reader. See docs/edo.md and docs/edo-operator-protocol.md.
 */
import type { EdoConfig } from '../../config/config.js';
import type { DatabaseHandle } from '../../db/database.js';
import type { WorkLogger } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import type { EdoOperator } from './edo-operator.js';
import type { EdoPolicy } from './edo-policy.js';
import type { EdoDocumentPort } from './edo-jobs.js';
import { EdoService, type EdoFileProvider, type EdoStores } from './edo.service.js';
import { HttpEdoOperator } from './http-operator.js';
import { SandboxEdoOperator } from './sandbox-operator.js';
import { EdoWorker } from './worker.js';

export * from './edo-operator.js';
export { DEFAULT_EDO_POLICY, type EdoPolicy } from './edo-policy.js';
export type { EdoDocumentPort } from './edo-jobs.js';
export { EdoLink, EdoSync, EDO_STATUSES } from './edo.schemas.js';
export { EdoRetryError, retryFailedSync, type RetriedSync } from './edo-retry.js';
export { edoJobsExistSql } from './edo.repository.js';
export { EdoService, type EdoFileProvider, type EdoStores, type FirstSync, type NewSend, type PlannedSync, type SendIds } from './edo.service.js';
export type { EdoSyncRequest, RecordedSend, RecordedSendRef } from './edo-request.js';
export { HttpEdoOperator } from './http-operator.js';
export { SandboxEdoOperator } from './sandbox-operator.js';
export { EdoWorker, type EdoBatchResult } from './worker.js';

export interface EdoDeps {
  database: Pick<DatabaseHandle, 'db'>;
  /** Claiming due sends with the database's outbox claim (src/stores.ts). */
  stores: EdoStores;
  clock: Clock;
  config: { edo: EdoConfig };
  /** buyer_status → `sent` on delivery, `changed_at` on any news: the invoices module's `documentStatusPort`. */
  documents: EdoDocumentPort;
  policy?: Partial<EdoPolicy>;
  files?: EdoFileProvider;
  logger?: WorkLogger;
  /** Replaces the operator built from the config (tests). */
  operator?: EdoOperator;
}

export interface EdoRuntime {
  service: EdoService;
  worker: EdoWorker;
  /** Stops the worker (waiting for the work under way) and closes the operator. */
  close(): Promise<void>;
}

/** The operator named by INVOICING_EDO_OPERATOR. */
export function createEdoOperator(deps: Pick<EdoDeps, 'database' | 'clock' | 'config'>): EdoOperator {
  const edo = deps.config.edo;
  if (edo.operator === 'http') {
    if (!edo.url || !edo.token) throw new Error('the http EDO operator needs INVOICING_EDO_URL and INVOICING_EDO_TOKEN');
    return new HttpEdoOperator({ baseUrl: edo.url, token: edo.token, timeoutMs: edo.timeoutMs });
  }
  return new SandboxEdoOperator({
    db: deps.database.db,
    clock: deps.clock,
    deliveryDelayMs: edo.sandboxDeliveryMs,
    decisionDelayMs: edo.sandboxDecisionMs,
  });
}

/** The service, a worker (not started) and the operator, wired from the configuration. */
export function createEdo(deps: EdoDeps): EdoRuntime {
  const operator = deps.operator ?? createEdoOperator(deps);
  const edo = deps.config.edo;
  // One attempt covers preparing the PDF and the operator call; the lease outlives it.
  const attemptTimeoutMs = edo.timeoutMs + 10_000;
  const service = new EdoService({
    database: deps.database,
    stores: deps.stores,
    clock: deps.clock,
    operator,
    documents: deps.documents,
    policy: {
      attemptTimeoutMs,
      leaseMs: Math.max(2 * 60_000, 2 * attemptTimeoutMs),
      // Renewed after every page, so it only has to outlive one read: a killed reader holds the feed up briefly.
      feedLeaseMs: 2 * attemptTimeoutMs,
      maxAttempts: edo.maxAttempts,
      feedIntervalMs: edo.pollIntervalMs,
      ...deps.policy,
    },
    files: deps.files,
    logger: deps.logger,
  });
  const worker = new EdoWorker(service, { logger: deps.logger });
  return {
    service,
    worker,
    async close() {
      await worker.stop();
      await operator.close?.();
    },
  };
}
