/**
 * Backup and restore on PostgreSQL through the server's own tools: `pg_dump --format=custom`
 * (one consistent snapshot, taken without blocking the service's writes) and `pg_restore`.
 *
 * The password never appears on a command line (where `ps` shows it): it travels in
 * PGPASSWORD, the rest of DATABASE_URL as `--dbname`. The archive is checked before success is
 * reported: `pg_restore --list` reads its table of contents, and the migrator's table is read
 * out of it (`--data-only --table`), so the schema version is known without a database.
 * Restore refuses a target with rows unless `--force`; tables already there are replaced
 * (`--clean --if-exists`); it runs in one transaction: a failed restore leaves the target as it was.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { MIGRATION_TABLE } from '../migrator.js';
import { BackupFailedError, BackupRefusedError, BOOKKEEPING_TABLES, schemaVersionOf, type BackupReport, type DatabaseBackup } from './backup.js';

interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a tool says went wrong: its first `error:` line, else its last line. */
function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /\berror:/.test(l)) ?? lines[lines.length - 1] ?? 'no message';
}

/** DATABASE_URL without its password, and the password (for PGPASSWORD). */
function splitCredentials(url: string): { dbname: string; password: string | null } {
  const parsed = new URL(url);
  const password = parsed.password === '' ? null : decodeURIComponent(parsed.password);
  parsed.password = '';
  return { dbname: parsed.toString(), password };
}

export class PostgresBackup implements DatabaseBackup {
  constructor(
    private readonly url: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  private run(tool: 'pg_dump' | 'pg_restore', args: string[]): Promise<ToolResult> {
    const { password } = splitCredentials(this.url);
    const env = { ...this.env, ...(password === null ? {} : { PGPASSWORD: password }) };
    return new Promise((resolve, reject) => {
      const child = spawn(tool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') {
          reject(
            new BackupFailedError(
              `${tool} was not found on PATH: install the PostgreSQL client tools of the server's major version or newer (Debian: apt-get install postgresql-client)`,
            ),
          );
        } else reject(new BackupFailedError(`${tool} could not be started: ${err.message}`));
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** The archive's schema version; refuses what is not a custom-format archive of this service. */
  private async archiveSchemaVersion(file: string, what: string, newer: 'refuse' | 'allow' = 'refuse'): Promise<string> {
    const list = await this.run('pg_restore', ['--list', file]);
    if (list.code !== 0) throw new BackupRefusedError(`${what} is not a backup of this service (${lastLine(list.stderr)})`);
    const hasTable = list.stdout.split('\n').some((line) => new RegExp(`\\bTABLE DATA \\S+ ${MIGRATION_TABLE}\\b`).test(line));
    if (!hasTable) return schemaVersionOf(null, what);
    const data = await this.run('pg_restore', ['--data-only', `--table=${MIGRATION_TABLE}`, '--file=-', file]);
    if (data.code !== 0) throw new BackupRefusedError(`${what} could not be read: ${lastLine(data.stderr)}`);
    // The COPY block: `COPY public.kysely_migration (name, "timestamp") FROM stdin;`, rows, `\.`.
    const lines = data.stdout.split('\n');
    const start = lines.findIndex((l) => l.startsWith(`COPY `) && l.includes(MIGRATION_TABLE));
    const names: string[] = [];
    for (let i = start + 1; start >= 0 && i < lines.length && lines[i] !== '\\.'; i++) {
      const name = (lines[i] as string).split('\t')[0];
      if (name) names.push(name);
    }
    return schemaVersionOf(names, what, newer);
  }

  async backup(target: string): Promise<BackupReport> {
    const out = path.resolve(target);
    const partial = `${out}.partial-${process.pid}`;
    fs.rmSync(partial, { force: true });
    const { dbname } = splitCredentials(this.url);
    const dump = await this.run('pg_dump', ['--format=custom', `--file=${partial}`, `--dbname=${dbname}`]);
    try {
      if (dump.code !== 0) throw new BackupFailedError(`pg_dump failed: ${lastLine(dump.stderr)}`);
      let schemaVersion: string;
      try {
        schemaVersion = await this.archiveSchemaVersion(partial, 'the archive', 'allow');
      } catch (err) {
        if (err instanceof BackupRefusedError) throw new BackupFailedError(`the archive failed its check: ${err.message}`);
        throw err;
      }
      const fd = fs.openSync(partial, 'r+');
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fs.renameSync(partial, out);
      return { file: out, bytes: fs.statSync(out).size, schemaVersion };
    } finally {
      fs.rmSync(partial, { force: true });
    }
  }

  async restore(source: string, options: { force: boolean }): Promise<BackupReport> {
    const from = path.resolve(source);
    if (!fs.existsSync(from)) throw new BackupRefusedError(`${source} does not exist`);
    const schemaVersion = await this.archiveSchemaVersion(from, source);
    await this.createDatabaseIfAbsent();
    const content = await this.content();
    if (!options.force && content.rows) {
      throw new BackupRefusedError('the database named by DATABASE_URL is not empty: restore into a new database, or pass --force to replace its content');
    }
    const { dbname } = splitCredentials(this.url);
    const args = ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${dbname}`];
    // A migrated database no one wrote to yet counts as empty: its tables make way for the backup's.
    if (content.tables > 0) args.push('--clean', '--if-exists');
    const restored = await this.run('pg_restore', [...args, from]);
    if (restored.code !== 0) throw new BackupFailedError(`pg_restore failed (nothing was changed): ${lastLine(restored.stderr)}`);
    return { file: from, bytes: fs.statSync(from).size, schemaVersion };
  }

  private async withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** "Absent" is allowed: the database is created (from the server's `postgres` database). */
  private async createDatabaseIfAbsent(): Promise<void> {
    try {
      await this.withClient(this.url, async () => undefined);
    } catch (err) {
      if ((err as { code?: string }).code !== '3D000') throw new BackupFailedError(`PostgreSQL did not answer: ${(err as Error).message}`);
      const admin = new URL(this.url);
      const name = decodeURIComponent(admin.pathname.slice(1));
      admin.pathname = '/postgres';
      await this.withClient(admin.toString(), (client) => client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`));
    }
  }

  /** The tables of the user's schemas, and whether any outside the migrator's bookkeeping has a row. */
  private content(): Promise<{ tables: number; rows: boolean }> {
    return this.withClient(this.url, async (client) => {
      const tables = await client.query<{ schema: string; name: string }>(
        `select table_schema as schema, table_name as name from information_schema.tables
         where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
      );
      for (const { schema, name } of tables.rows) {
        if (BOOKKEEPING_TABLES.includes(name)) continue;
        const quoted = `"${schema.replaceAll('"', '""')}"."${name.replaceAll('"', '""')}"`;
        if ((await client.query(`select 1 from ${quoted} limit 1`)).rowCount !== 0) return { tables: tables.rows.length, rows: true };
      }
      return { tables: tables.rows.length, rows: false };
    });
  }
}
