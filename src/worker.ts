/**
 * `invoicing worker`: only the background jobs (the e-mail outbox), for multi-node deployments
 * where API nodes should not send. Several workers may run at once: rows are claimed with leases.
 */
import pino from 'pino';
import type { Config } from './config/config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import { loggerOptions } from './http/logging.js';
import { InvoiceService } from './modules/invoices/index.js';
import { createNotifications } from './modules/notifications/index.js';
import { pdfAttachments, SharingService } from './modules/sharing/web.js';
import { AuthService } from './modules/teams/index.js';
import { resolveServiceSecret } from './runtime.js';
import { systemClock } from './shared/clock.js';

export async function runWorker(config: Config): Promise<void> {
  const logger = pino(loggerOptions(config.logLevel));
  const database = openDatabase(config.database);
  await migrateToLatest(database.db);
  const secret = await resolveServiceSecret(database, config);
  const notifier = createNotifications({
    database,
    clock: systemClock,
    bases: { publicUrl: config.publicUrl, shareUrl: config.shareUrl, portalUrl: config.portalUrl, secret },
    config,
    logger: logger.child({ component: 'notifications' }),
  });
  // Retried e-mails carry the PDF too: the same documents and pages services as an API node.
  const bases = { publicUrl: config.publicUrl, shareUrl: config.shareUrl, portalUrl: config.portalUrl, secret };
  const invoices = new InvoiceService({ db: database.db, clock: systemClock, bases, demoPublicId: config.demoPublicId, notifications: notifier.service });
  const auth = new AuthService(database.db, config.demoToken);
  const sharing = new SharingService({ db: database.db, clock: systemClock, bases, invoices, auth, demoPublicId: config.demoPublicId });
  notifier.service.useAttachments(pdfAttachments(sharing));
  notifier.worker.start();
  logger.info('worker started');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker stopping: finishing the current batch');
    notifier
      .close()
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
