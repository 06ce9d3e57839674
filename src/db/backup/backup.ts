/**
 * `invoicing backup FILE` and `invoicing restore FILE` (operating contract, section 8): one
 * interface, one implementation per database (sqlite.ts, postgres.ts), chosen once by
 * `databaseBackupFor` (index.ts). What both share lives here: how a backup is recognised as
 * one of this service, and how its schema version compares with the code's.
 */
import { knownMigrationNames } from '../migrator.js';

/** What a finished backup or restore reports in its one line. */
export interface BackupReport {
  file: string;
  bytes: number;
  /** The newest migration applied in the copy: the schema version. */
  schemaVersion: string;
}

export interface DatabaseBackup {
  /** Writes a consistent copy of the live database to `file`, checks it, and reports it. */
  backup(file: string): Promise<BackupReport>;
  /**
   * Checks `file` (a backup of this service, its schema not newer than the code), then restores
   * it into the configured database, which must be empty or absent unless `force`.
   */
  restore(file: string, options: { force: boolean }): Promise<BackupReport>;
}

/**
 * The command was refused before anything was changed: the file is not a backup of this
 * service, is newer than the code, or the target is not empty. Exit status 2 (bad input).
 */
export class BackupRefusedError extends Error {}

/**
 * The work could not be done (a tool missing, the copy failed its check, the database did not
 * answer). Exit status 1.
 */
export class BackupFailedError extends Error {}

/**
 * The schema version of a copy whose applied migrations are `applied` (null: it has no migration
 * table), or the refusal: a copy without our table or without any of our migrations is not a
 * backup of this service; one naming a migration this release does not know was written by a
 * newer release, whose schema this code cannot vouch for: refused for a restore, taken for a
 * backup (`newer: 'allow'`: during a rolling upgrade an older node's cron still backs up).
 */
export function schemaVersionOf(applied: readonly string[] | null, what: string, newer: 'refuse' | 'allow' = 'refuse'): string {
  const known = new Set(knownMigrationNames());
  if (applied === null || applied.length === 0 || !applied.some((name) => known.has(name))) {
    throw new BackupRefusedError(`${what} is not a backup of this service (no invoicing migrations in it)`);
  }
  const unknown = applied.filter((name) => !known.has(name)).sort();
  if (unknown.length > 0 && newer === 'refuse') {
    throw new BackupRefusedError(
      `${what} is newer than this release (schema version ${unknown[unknown.length - 1] as string}; this code knows up to ${latestKnownMigration()}): restore it with the release that wrote it`,
    );
  }
  return [...applied].sort()[applied.length - 1] as string;
}

export function latestKnownMigration(): string {
  const names = knownMigrationNames();
  return names[names.length - 1] as string;
}

/** Tables whose rows do not make a database "not empty": the migrator's own bookkeeping. */
export const BOOKKEEPING_TABLES: readonly string[] = ['kysely_migration', 'kysely_migration_lock'];
