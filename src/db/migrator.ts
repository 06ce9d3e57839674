/**
 * The one migrator, used by `npm start`, `invoicing migrate` and every test database.
 * Migrations are imported statically so the compiled build needs no file-system scan.
 */
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.js';
import * as spine from './migrations/2026-11-25T2200_spine.js';
import * as invoices from './migrations/2026-11-25T2300_invoices.js';
import * as outbox from './migrations/2026-11-25T2355_outbox.js';
import * as invoiceSearch from './migrations/2026-11-25T2350_invoice_search.js';
import * as edo from './migrations/2026-11-26T0100_edo.js';
import * as linkEpoch from './migrations/2026-11-26T1000_link_epoch.js';
import * as teamDocumentCounts from './migrations/2026-11-26T1300_team_document_counts.js';

const migrations: Record<string, Migration> = {
  '2026-11-25T2200_spine': spine,
  '2026-11-25T2300_invoices': invoices,
  '2026-11-25T2355_outbox': outbox,
  '2026-11-25T2350_invoice_search': invoiceSearch,
  '2026-11-26T0100_edo': edo,
  '2026-11-26T1000_link_epoch': linkEpoch,
  '2026-11-26T1300_team_document_counts': teamDocumentCounts,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
