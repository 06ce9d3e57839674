/**
 * The one migrator, used by `npm start`, `invoicing migrate` and every test database.
 * Migrations are imported statically so the compiled build needs no file-system scan.
 */
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import { DEFAULT_PG_BOUNDS, type DatabaseTarget } from '../config/config.js';
import { openDatabase, type Db, type DatabaseHandle } from './database.js';
import * as spine from './migrations/2026-11-25T2200_spine.js';
import * as invoices from './migrations/2026-11-25T2300_invoices.js';
import * as outbox from './migrations/2026-11-25T2355_outbox.js';
import * as invoiceSearch from './migrations/2026-11-25T2350_invoice_search.js';
import * as edo from './migrations/2026-11-26T0100_edo.js';
import * as linkEpoch from './migrations/2026-11-26T1000_link_epoch.js';
import * as eventsWebhooks from './migrations/2026-11-26T1200_events_webhooks.js';
import * as teamDocumentCounts from './migrations/2026-11-26T1300_team_document_counts.js';
import * as listVersions from './migrations/2026-11-26T1400_list_versions.js';
import * as catalogVersion from './migrations/2026-11-26T1410_catalog_version.js';
import * as idempotencySweep from './migrations/2026-11-26T1420_idempotency_sweep.js';
import * as searchIndexBatched from './migrations/2026-11-26T1510_search_index_batched.js';
import * as listInsertStatementTriggers from './migrations/2026-11-26T1530_list_insert_statement_triggers.js';
import * as shareLinkVersions from './migrations/2026-11-26T1540_share_link_versions.js';
import * as listIndexSearchText from './migrations/2026-11-26T1550_list_index_search_text.js';
import * as emailQuotaShards from './migrations/2026-11-27T0900_email_quota_shards.js';
import * as edoPendingJob from './migrations/2026-11-28T1000_edo_pending_job.js';
import * as emailPending from './migrations/2026-11-28T1100_email_pending.js';
import * as teamStorage from './migrations/2026-11-29T0900_team_storage.js';
import * as webhookBacklogRetention from './migrations/2026-11-29T1000_webhook_backlog_retention.js';
import * as eventsTxDefault from './migrations/2026-11-30T1000_events_tx_default.js';
import * as traceContext from './migrations/2026-12-01T0900_trace_context.js';
import * as eventTraceContext from './migrations/2026-12-01T1000_event_trace_context.js';

const migrations: Record<string, Migration> = {
  '2026-11-25T2200_spine': spine,
  '2026-11-25T2300_invoices': invoices,
  '2026-11-25T2355_outbox': outbox,
  '2026-11-25T2350_invoice_search': invoiceSearch,
  '2026-11-26T0100_edo': edo,
  '2026-11-26T1000_link_epoch': linkEpoch,
  '2026-11-26T1200_events_webhooks': eventsWebhooks,
  '2026-11-26T1300_team_document_counts': teamDocumentCounts,
  '2026-11-26T1400_list_versions': listVersions,
  '2026-11-26T1410_catalog_version': catalogVersion,
  '2026-11-26T1420_idempotency_sweep': idempotencySweep,
  '2026-11-26T1510_search_index_batched': searchIndexBatched,
  '2026-11-26T1530_list_insert_statement_triggers': listInsertStatementTriggers,
  '2026-11-26T1540_share_link_versions': shareLinkVersions,
  '2026-11-26T1550_list_index_search_text': listIndexSearchText,
  '2026-11-27T0900_email_quota_shards': emailQuotaShards,
  '2026-11-28T1000_edo_pending_job': edoPendingJob,
  '2026-11-28T1100_email_pending': emailPending,
  '2026-11-29T0900_team_storage': teamStorage,
  '2026-11-29T1000_webhook_backlog_retention': webhookBacklogRetention,
  '2026-11-30T1000_events_tx_default': eventsTxDefault,
  '2026-12-01T0900_trace_context': traceContext,
  '2026-12-01T1000_event_trace_context': eventTraceContext,
};

/** Kysely's bookkeeping table: one row per applied migration, by name. */
export const MIGRATION_TABLE = 'kysely_migration';

/** The names of this release's migrations, oldest first: the newest is the schema version. */
export function knownMigrationNames(): string[] {
  return Object.keys(migrations).sort();
}

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/**
 * Applies this release's pending migrations, under the migrator's lock; returns their names.
 *
 * When every migration of this release is already applied there is nothing to do, and the
 * database is left alone even if it holds migrations this release does not know: a newer
 * release migrated it during a rolling restart (migrations are forward-only and additive, so
 * the previous release keeps working on the new schema; docs/deployment.md). Kysely would
 * refuse to start with "corrupted migrations" there. A renamed or missing migration of this
 * release still fails below.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticProvider() });
  const known = await migrator.getMigrations();
  if (known.every((m) => m.executedAt !== undefined)) return [];
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * The service's migrations at start-up (`serve`, `worker`, `invoicing migrate`). On PostgreSQL they
 * run on a connection of their own without the statement bound (INVOICING_PG_STATEMENT_TIMEOUT_MS):
 * building an index or filling a column on a large table may take longer than any request should,
 * and a process waiting for another's migration lock waits as long as that migration. Getting the
 * connection and a server that stops answering stay bounded (src/db/pg-pool.ts).
 */
export async function migrateService(target: DatabaseTarget, database: DatabaseHandle): Promise<string[]> {
  if (target.kind !== 'postgres') return migrateToLatest(database.db);
  const bounds = { ...(target.bounds ?? DEFAULT_PG_BOUNDS), statementTimeoutMs: 0 };
  const own = openDatabase({ ...target, poolSize: 1, namedStatements: false, bounds });
  try {
    return await migrateToLatest(own.db);
  } finally {
    await own.close();
  }
}
