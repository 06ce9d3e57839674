/**
 * The composition root's store factory: the one place that looks at which database runs for
 * the modules' storage. Each module with per-database SQL has one storage interface and one
 * implementation per database behind its door (docs/architecture.md, "The storage seam");
 * `createStores` picks them once, and app.ts, runtime.ts, worker.ts and cli/ hand them to the
 * services. To change how a module's data is stored, open that module's `store/` folder.
 */
import type { DatabaseHandle } from './db/database.js';
import { claimDue } from './db/outbox.js';
import type { EdoStores } from './modules/edo/index.js';
import { createPostgresInvoiceStore, createSqliteInvoiceStore, type InvoiceStore } from './modules/invoices/index.js';
import { createPostgresQuotaStore, createSqliteQuotaStore, type NotificationStores } from './modules/notifications/index.js';

export interface Stores {
  invoices: InvoiceStore;
  notifications: NotificationStores;
  edo: EdoStores;
}

export function createStores(database: Pick<DatabaseHandle, 'db' | 'dialect' | 'readThreads'>): Stores {
  const { db, dialect } = database;
  // The outbox's claim of this database (src/db/outbox.ts), for the e-mail and EDO workers.
  const claimOutbox: NotificationStores['claimOutbox'] = (claim) => claimDue(db, dialect, claim);
  if (dialect === 'postgres') {
    return {
      invoices: createPostgresInvoiceStore(database),
      notifications: { quota: createPostgresQuotaStore, claimOutbox },
      edo: { claimOutbox },
    };
  }
  return {
    invoices: createSqliteInvoiceStore(database),
    notifications: { quota: createSqliteQuotaStore, claimOutbox },
    edo: { claimOutbox },
  };
}
