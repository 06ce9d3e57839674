/**
 * The composition root's store factory: the one place that looks at which database runs for
 * the modules' storage. Each module with per-database SQL has one storage interface and one
 * implementation per database behind its door (docs/architecture.md, "The storage seam");
 * `createStores` picks them once, and app.ts, runtime.ts, worker.ts and cli/ hand them to the
 * services. To change how a module's data is stored, open that module's `store/` folder.
 */
import type { DatabaseHandle } from './db/database.js';
import { createPostgresInvoiceStore, createSqliteInvoiceStore, type InvoiceStore } from './modules/invoices/index.js';

export interface Stores {
  invoices: InvoiceStore;
}

export function createStores(database: Pick<DatabaseHandle, 'db' | 'dialect' | 'readThreads'>): Stores {
  if (database.dialect === 'postgres') {
    return { invoices: createPostgresInvoiceStore(database) };
  }
  return { invoices: createSqliteInvoiceStore(database) };
}
