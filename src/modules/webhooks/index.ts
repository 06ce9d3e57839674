/** Webhooks: endpoints API, signed deliveries by the outbox workers (Standard Webhooks 1.0). */
import type { WebhookConfig } from '../../config/config.js';
import type { DatabaseHandle } from '../../db/database.js';
import type { WorkLogger } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import { HostResolver, type LookupFunction } from './host-resolver.js';
import { SecretBox } from './secrets.js';
import { WebhookWorker, type WebhookPolicy } from './webhook-worker.js';
import { WebhooksService } from './webhooks.service.js';
import type { WebhookStores } from './store/index.js';

export { eventRoutes } from './events.routes.js';
export { webhookRoutes } from './webhooks.routes.js';
export { WebhooksService } from './webhooks.service.js';
export { WebhookWorker, RETRY_WINDOW_MS, type WebhookPolicy } from './webhook-worker.js';
export { MAX_UNDELIVERED } from './webhooks.service.js';
export { signPayload } from './secrets.js';
export type { WebhookStore, WebhookStores } from './store/index.js';
export { createSqliteWebhookStore } from './store/sqlite.js';
export { createPostgresWebhookStore } from './store/postgres.js';

export interface WebhooksDeps {
  database: Pick<DatabaseHandle, 'db'>;
  /** The webhooks' own store and the events store, chosen once with the database (src/stores.ts). */
  stores: WebhookStores;
  clock: Clock;
  config: { webhooks: WebhookConfig; deliveryRetentionDays: number };
  /** The service secret: the signing secrets are encrypted under a key derived from it. */
  secret: string;
  policy?: Partial<WebhookPolicy>;
  logger?: WorkLogger;
  /** The system resolver behind the bounded one; replaced only by tests (a name server that never answers). */
  lookup?: LookupFunction;
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
  // One per process: the URL checks of requests and the workers' attempts share its bound.
  const resolver = new HostResolver({ timeoutMs: cfg.dnsTimeoutMs, ...(deps.lookup ? { lookup: deps.lookup } : {}) });
  const policy: WebhookPolicy = {
    timeoutMs: cfg.timeoutMs,
    retryBaseMs: cfg.retryBaseMs,
    retryMaxMs: 12 * 3_600_000,
    // An attempt mostly waits on the network: 16 cost 16 sockets. With 2 per endpoint, 7 endpoints
    // that never answer still leave a slot of every worker to the others.
    concurrency: 16,
    endpointConcurrency: 2,
    claimScan: 500,
    endpointPage: 500,
    pollIntervalMs: 1_000,
    eventRetentionDays: cfg.eventRetentionDays,
    deliveryRetentionDays: deps.config.deliveryRetentionDays,
    ...deps.policy,
  };
  const worker = new WebhookWorker({ database: deps.database, stores: deps.stores, clock: deps.clock, box, urlPolicy, resolver, policy, ...(deps.logger ? { logger: deps.logger } : {}) });
  const service = new WebhooksService({ db: deps.database.db, stores: deps.stores, clock: deps.clock, policy: urlPolicy, resolver, box, onQueued: () => worker.wake() });
  return { service, worker, close: () => worker.stop() };
}
