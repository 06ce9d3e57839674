/**
 * Backup and restore of the SQLite file.
 *
 * Backup: `VACUUM INTO` on a connection of our own to the live file. It reads one snapshot (one
 * read transaction), WAL included, so the copy holds every transaction committed when it began
 * and nothing torn; in WAL mode a reader never blocks the service's writer, nor is blocked by it.
 * (SQLite's page-by-page backup API restarts whenever another connection writes between its
 * steps, so under steady writes it might never finish.) The copy is written beside FILE,
 * checked (`PRAGMA integrity_check`, our migrations), fsynced, then renamed over FILE: FILE is
 * either the old content or a checked new backup, never half of one.
 *
 * Restore: the backup is checked first, then copied beside the target and renamed into place,
 * with the target's stale `-wal` and `-shm` removed (a WAL left from another database would be
 * replayed into this one). The service must be stopped: the target must be absent or empty
 * (no row outside the migrator's bookkeeping) unless `--force`.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { MIGRATION_TABLE } from '../migrator.js';
import { BackupFailedError, BackupRefusedError, BOOKKEEPING_TABLES, schemaVersionOf, type BackupReport, type DatabaseBackup } from './backup.js';

/** How long the backup's connection waits for a lock (a checkpoint truncating the WAL): the service's own bound. */
const BUSY_TIMEOUT_MS = 5_000;

function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A directory entry survives a power cut once the directory itself is fsynced. */
function fsyncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function removeIfPresent(file: string): void {
  fs.rmSync(file, { force: true });
}

/** Checks a database file (integrity, our migrations) and gives its schema version; `what` names it in refusals. */
function checkCopy(file: string, what: string, newer: 'refuse' | 'allow' = 'refuse'): string {
  let db: SqliteDatabase.Database;
  try {
    db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupRefusedError(`${what} cannot be opened: ${(err as Error).message}`);
  }
  try {
    let lines: string[];
    try {
      lines = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
    } catch (err) {
      throw new BackupRefusedError(`${what} is not a backup of this service (not a SQLite database: ${(err as Error).message})`);
    }
    if (lines.length !== 1 || lines[0] !== 'ok') {
      throw new BackupRefusedError(`${what} fails SQLite's integrity check: ${lines.slice(0, 3).join('; ')}`);
    }
    const hasTable = db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(MIGRATION_TABLE) !== undefined;
    const applied = hasTable ? (db.prepare(`select name from "${MIGRATION_TABLE}"`).pluck().all() as string[]) : null;
    return schemaVersionOf(applied, what, newer);
  } finally {
    db.close();
  }
}

/** Whether the file holds no row outside the migrator's bookkeeping (absent and zero-length count as empty). */
function isEmptyDatabase(file: string): boolean {
  if (!fs.existsSync(file) || fs.statSync(file).size === 0) return true;
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
      .pluck()
      .all() as string[];
    return tables
      .filter((name) => !BOOKKEEPING_TABLES.includes(name))
      .every((name) => db.prepare(`select 1 from "${name.replaceAll('"', '""')}" limit 1`).get() === undefined);
  } catch {
    // Not a database we can read: not empty either (something else lives there).
    return false;
  } finally {
    db.close();
  }
}

export class SqliteBackup implements DatabaseBackup {
  /** `file`: the live database (DATABASE_URL's path). */
  constructor(private readonly file: string) {}

  async backup(target: string): Promise<BackupReport> {
    if (!fs.existsSync(this.file)) throw new BackupFailedError(`there is no database at ${this.file} (DATABASE_URL) to back up`);
    const out = path.resolve(target);
    const partial = `${out}.partial-${process.pid}`;
    removeIfPresent(partial);
    const live = new SqliteDatabase(this.file, { fileMustExist: true });
    try {
      live.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      live.prepare('VACUUM INTO ?').run(partial);
    } catch (err) {
      removeIfPresent(partial);
      throw new BackupFailedError(`the copy of ${this.file} failed: ${(err as Error).message}`);
    } finally {
      live.close();
    }
    try {
      const schemaVersion = checkCopy(partial, 'the copy', 'allow');
      fsyncFile(partial);
      fs.renameSync(partial, out);
      fsyncDirectory(path.dirname(out));
      return { file: out, bytes: fs.statSync(out).size, schemaVersion };
    } catch (err) {
      removeIfPresent(partial);
      if (err instanceof BackupRefusedError) throw new BackupFailedError(`the copy failed its check: ${err.message}`);
      throw err;
    }
  }

  async restore(source: string, options: { force: boolean }): Promise<BackupReport> {
    const from = path.resolve(source);
    if (!fs.existsSync(from)) throw new BackupRefusedError(`${source} does not exist`);
    const schemaVersion = checkCopy(from, source);
    if (!options.force && !isEmptyDatabase(this.file)) {
      throw new BackupRefusedError(
        `the database at ${this.file} is not empty: stop the service and move it away, or pass --force to replace it`,
      );
    }
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const partial = `${this.file}.restoring-${process.pid}`;
    try {
      fs.copyFileSync(from, partial);
      fsyncFile(partial);
      for (const suffix of ['-wal', '-shm', '-journal']) removeIfPresent(`${this.file}${suffix}`);
      fs.renameSync(partial, this.file);
      fsyncDirectory(path.dirname(this.file));
    } catch (err) {
      removeIfPresent(partial);
      throw new BackupFailedError(`the restore into ${this.file} failed: ${(err as Error).message}`);
    }
    return { file: from, bytes: fs.statSync(this.file).size, schemaVersion };
  }
}
