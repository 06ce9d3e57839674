/**
 * `invoicing worker`: only the background jobs (the e-mail outbox and EDO sync), for multi-node
 * deployments where API nodes should not send. Several workers may run at once: rows are claimed
 * with leases, and the EDO change feed is read by one of them at a time.
 */
import pino from 'pino';
import type { Config } from './config/config.js';
import { openDatabase } from './db/database.js';
import { migrateService } from './db/migrator.js';
import { logDestination, loggerOptions } from './http/logging.js';
import { DocumentPrints, documentStatusPort } from './modules/invoices/index.js';
import { createEdo } from './modules/edo/index.js';
import { createNotifications } from './modules/notifications/index.js';
import { createPdfRenderer, pdfPoolOptions, RenderCache } from './modules/rendering/index.js';
import { AuthService } from './modules/teams/index.js';
import { createWebhooks } from './modules/webhooks/index.js';
import { createStores } from './stores.js';
import { startMetricsServer } from './http/metrics-server.js';
import { registerOperationsMetrics } from './http/operations-metrics.js';
import { resolveServiceSecret } from './runtime.js';
import { documentFiles } from './document-files.js';
import { systemClock } from './shared/clock.js';

export async function runWorker(config: Config): Promise<void> {
  const logger = pino(loggerOptions(config.logLevel), logDestination());
  const database = openDatabase(config.database);
  database.onConnectionError?.((err, what) => logger.warn({ err }, what));
  await migrateService(config.database, database);
  const secret = await resolveServiceSecret(database, config);
  const stores = createStores(database);
  const bases = { publicUrl: config.publicUrl, shareUrl: config.shareUrl, portalUrl: config.portalUrl, secret };
  // Retried e-mails and EDO sends carry the PDF too, rendered as on an API node (src/document-files.ts).
  const pdf = createPdfRenderer(pdfPoolOptions(config));
  const prints = new DocumentPrints({ store: stores.invoices, bases, clock: systemClock });
  // Callers share INVOICING_REFERENCE_CACHE_MB as on an API node (a third of it).
  const callerCache = { maxBytes: Math.floor(config.limits.referenceCacheBytes / 3), maxEntryBytes: config.limits.cacheEntryMaxBytes };
  const files = documentFiles({ auth: new AuthService(database.db, stores.teams, config.demoToken, callerCache), prints, pdf, cache: new RenderCache(config.limits.renderCacheBytes) });
  const notifier = createNotifications({
    database,
    stores: stores.notifications,
    clock: systemClock,
    bases,
    config,
    documents: documentStatusPort,
    attachments: files.attachments,
    logger: logger.child({ component: 'notifications' }),
  });
  const edo = createEdo({
    database,
    stores: stores.edo,
    clock: systemClock,
    config,
    documents: documentStatusPort,
    files: files.edoFiles,
    logger: logger.child({ component: 'edo' }),
  });
  const webhooks = createWebhooks({ database, stores, clock: systemClock, config, secret, logger: logger.child({ component: 'webhooks' }) });
  notifier.worker.start();
  edo.worker.start();
  webhooks.worker.start();
  const metrics =
    config.workerMetricsPort !== null
      ? await startMetricsServer({
          host: config.host,
          port: config.workerMetricsPort,
          token: config.metricsToken,
          register: (registry) =>
            registerOperationsMetrics(registry, { database, embeddedDatabaseFile: config.database.kind === 'sqlite' ? config.database.file : null, redis: null }),
        })
      : null;
  logger.info({ edo_operator: edo.service.operator.kind, metrics_port: metrics?.port ?? null }, 'worker started');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker stopping: finishing the current batch');
    Promise.all([notifier.close(), edo.close(), webhooks.close(), metrics?.close()])
      .then(() => pdf.close())
      .then(() => database.close())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'error while stopping the worker');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
