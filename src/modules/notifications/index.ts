/**
 * E-mail notifications: outbox, worker, SMTP / .eml transport, templates, daily quota.
 * See docs/notifications.md.
 */
import type { DatabaseHandle } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import type { LinkBases } from '../links/index.js';
import type { DeliveryPolicy } from './delivery-policy.js';
import { createMailTransport, type MailTransport, type SmtpTimeouts } from './mail-transport.js';
import type { AttachmentProvider, DocumentStatusPort, NotificationLogger } from './notification-model.js';
import { NotificationService } from './notification.service.js';
import type { NotificationStores } from './store/index.js';
import { OutboxWorker } from './worker.js';

export { DEFAULT_DELIVERY_POLICY, retryDelayMs, type DeliveryPolicy } from './delivery-policy.js';
export { buildInvoiceEmail, emailLocale, messageIdFor, type EmailAttachment, type InvoiceEmail, type InvoiceEmailView } from './email-message.js';
export { createMailTransport, MailSendError, type MailTransport, type SmtpTimeouts, type TransportKind } from './mail-transport.js';
export { MailRuntime, NotificationFailure, Notifications } from './notification.schemas.js';
export { NotificationService } from './notification.service.js';
export {
  statusOf,
  type AttachmentProvider,
  type DeliveryReport,
  type DocumentStatusPort,
  type NotificationLogger,
  type PendingNotifications,
  type PlannedNotifications,
  type PreparedNotifications,
  type RecordedTake,
  type RecordedEmails,
  type RecordedEmailsRef,
} from './notification-model.js';
export { recordedOutcome } from './email-records.js';
export { createPostgresQuotaStore } from './store/postgres.js';
export { createSqliteQuotaStore } from './store/sqlite.js';
export type { HeldTake, NotificationStores, OutboxClaimer, QuotaStore, QuotaStoreFactory } from './store/index.js';
export { emptyOutcome } from './outcome.js';
export type { NotifiableDocument, NotificationRequest } from './plan.js';
export { isValidEmailAddress, resolveRecipients } from './recipients.js';
export { OutboxWorker, type BatchResult } from './worker.js';

export interface NotificationsDeps {
  database: Pick<DatabaseHandle, 'db'>;
  /** The quota and the outbox claim of the database in use (src/stores.ts). */
  stores: NotificationStores;
  clock: Clock;
  bases: LinkBases;
  /** The invoices module's writes of delivery news (`documentStatusPort`). */
  documents: DocumentStatusPort;
  /** From Config: SMTP_URL, INVOICING_MAIL_FROM, the data directory (for `.eml` files). */
  config: { smtpUrl: string | null; mailFrom: string; dataDir: string; inProcessWorker?: boolean; deliveryRetentionDays?: number };
  policy?: Partial<DeliveryPolicy>;
  smtpTimeouts?: Partial<SmtpTimeouts>;
  attachments?: AttachmentProvider;
  logger?: NotificationLogger;
  /**
   * Whether creates/updates attempt their e-mails in the request; by default what
   * INVOICING_IN_PROCESS_WORKER says: a node without the in-process worker leaves them to
   * `invoicing worker` (NotificationServiceDeps.deliverInRequest).
   */
  deliverInRequest?: boolean;
  /** Replaces the transport built from the config (tests). */
  transport?: MailTransport;
}

export interface Notifier {
  service: NotificationService;
  worker: OutboxWorker;
  /** Stops the worker (waiting for its batch), gives back the held quota and closes the transport. */
  close(): Promise<void>;
}

/** The service, a worker (not started) and the transport, wired from the configuration. */
export function createNotifications(deps: NotificationsDeps): Notifier {
  const transport =
    deps.transport ?? createMailTransport({ smtpUrl: deps.config.smtpUrl, dataDir: deps.config.dataDir, timeouts: deps.smtpTimeouts });
  const service = new NotificationService({
    db: deps.database.db,
    stores: deps.stores,
    clock: deps.clock,
    transport,
    documents: deps.documents,
    bases: deps.bases,
    mailFrom: deps.config.mailFrom,
    policy: deps.policy,
    attachments: deps.attachments,
    logger: deps.logger,
    deliverInRequest: deps.deliverInRequest ?? deps.config.inProcessWorker ?? true,
  });
  const worker = new OutboxWorker(service, {
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.config.deliveryRetentionDays !== undefined ? { emailRetentionDays: deps.config.deliveryRetentionDays } : {}),
  });
  return {
    service,
    worker,
    async close() {
      await worker.stop();
      await service.close();
      transport.close();
    },
  };
}
