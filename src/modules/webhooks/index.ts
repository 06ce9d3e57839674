/** Webhooks: endpoints API, signed deliveries by the outbox workers (Standard Webhooks 1.0). */
import type { WebhookConfig } from '../../config/config.js';
import type { DatabaseHandle } from '../../db/database.js';
import type { WorkLogger } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import { SecretBox } from './secrets.js';
import { WebhookWorker, type WebhookPolicy } from './webhook-worker.js';
import { WebhooksService } from './webhooks.service.js';

export { eventRoutes } from './events.routes.js';
export { webhookRoutes } from './webhooks.routes.js';
export { WebhooksService } from './webhooks.service.js';
export { WebhookWorker, RETRY_WINDOW_MS, type WebhookPolicy } from './webhook-worker.js';
export { signPayload } from './secrets.js';

export interface WebhooksDeps {
  database: Pick<DatabaseHandle, 'db' | 'dialect'>;
  clock: Clock;
  config: { webhooks: WebhookConfig };
  /** The service secret: the signing secrets are encrypted under a key derived from it. */
  secret: string;
  policy?: Partial<WebhookPolicy>;
  logger?: WorkLogger;
}

export interface WebhooksRuntime {
  service: WebhooksService;
  worker: WebhookWorker;
  close(): Promise<void>;
}

export function createWebhooks(deps: WebhooksDeps): WebhooksRuntime {
  const cfg = deps.config.webhooks;
  const box = new SecretBox(deps.secret);
  const urlPolicy = { allowHttp: cfg.allowHttp, allowPrivate: cfg.allowPrivate };
  const policy: WebhookPolicy = {
    timeoutMs: cfg.timeoutMs,
    retryBaseMs: cfg.retryBaseMs,
    retryMaxMs: 12 * 3_600_000,
    concurrency: 4,
    batchSize: 20,
    endpointPage: 500,
    pollIntervalMs: 1_000,
    eventRetentionDays: cfg.eventRetentionDays,
    ...deps.policy,
  };
  const worker = new WebhookWorker({ database: deps.database, clock: deps.clock, box, urlPolicy, policy, ...(deps.logger ? { logger: deps.logger } : {}) });
  const service = new WebhooksService({ db: deps.database.db, clock: deps.clock, policy: urlPolicy, box, onQueued: () => worker.wake() });
  return { service, worker, close: () => worker.stop() };
}
