/**
 * The composition root's store factory: the one place that looks at which database runs for
 * the modules' storage (CONVENTIONS rule 10). Each module with per-database SQL has one storage
 * interface and one implementation per database behind its door (docs/architecture.md, "The
 * storage seam"); `createStores` picks them once per database handle, and app.ts, runtime.ts,
 * worker.ts and cli/ hand them to the services. To change how a module's data is stored, open
 * that module's `store/` folder.
 */
import type { DatabaseHandle } from './db/database.js';
import { createPostgresOutboxClaim, createSqliteOutboxClaim, type OutboxClaim } from './db/outbox-claim.js';
import type { EdoStores } from './modules/edo/index.js';
import { createPostgresEventStore, createSqliteEventStore, type EventStore } from './modules/events/index.js';
import { createPostgresInvoiceStore, createSqliteInvoiceStore, type InvoiceStore } from './modules/invoices/index.js';
import { createPostgresQuotaStore, createSqliteQuotaStore, type NotificationStores } from './modules/notifications/index.js';
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from './modules/teams/index.js';
import { createPostgresWebhookStore, createSqliteWebhookStore, type WebhookStore } from './modules/webhooks/index.js';

export interface Stores {
  /** Documents: rows, items, links, revisions, lists and searches, counters, idempotency keys. */
  invoices: InvoiceStore;
  /** The daily e-mail quota and the e-mail workers' claim. */
  notifications: NotificationStores;
  /** The EDO workers' claim. */
  edo: EdoStores;
  /** The event log: what a feed reader may be shown (the PostgreSQL horizon). */
  events: EventStore;
  /** Webhook endpoints, deliveries (their fair claim) and attempts. */
  webhooks: WebhookStore;
  /** Authentication's caller lookup. */
  teams: TeamStore;
  /** The outbox workers' claim of due rows. */
  outbox: OutboxClaim;
}

export function createStores(database: Pick<DatabaseHandle, 'db' | 'dialect' | 'readThreads'>): Stores {
  const postgres = database.dialect === 'postgres';
  const outbox = postgres ? createPostgresOutboxClaim() : createSqliteOutboxClaim();
  // The outbox's claim on this database, for the e-mail and EDO workers.
  const claimOutbox: NotificationStores['claimOutbox'] = (claim) => outbox.claimDue(database.db, claim);
  if (postgres) {
    const events = createPostgresEventStore();
    return {
      invoices: createPostgresInvoiceStore(database, events),
      notifications: { quota: createPostgresQuotaStore, claimOutbox },
      edo: { claimOutbox },
      events,
      webhooks: createPostgresWebhookStore(),
      teams: createPostgresTeamStore(),
      outbox,
    };
  }
  return {
    invoices: createSqliteInvoiceStore(database),
    notifications: { quota: createSqliteQuotaStore, claimOutbox },
    edo: { claimOutbox },
    events: createSqliteEventStore(),
    webhooks: createSqliteWebhookStore(),
    teams: createSqliteTeamStore(),
    outbox,
  };
}
