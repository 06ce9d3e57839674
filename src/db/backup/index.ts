/** Backup and restore: the implementation for the configured database, chosen here once. */
import type { DatabaseTarget } from '../../config/config.js';
import type { DatabaseBackup } from './backup.js';
import { PostgresBackup } from './postgres.js';
import { SqliteBackup } from './sqlite.js';

export { BackupFailedError, BackupRefusedError, type BackupReport, type DatabaseBackup } from './backup.js';

export function databaseBackupFor(target: DatabaseTarget): DatabaseBackup {
  return target.kind === 'sqlite' ? new SqliteBackup(target.file) : new PostgresBackup(target.url);
}
