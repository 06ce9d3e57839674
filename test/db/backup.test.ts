/**
 * `invoicing backup FILE` / `invoicing restore FILE` (operating contract, section 8) with real
 * processes: a backup taken while creates keep arriving, restored into a new database, served.
 * SQLite on the SQLite pass (`VACUUM INTO`), pg_dump/pg_restore on the PostgreSQL pass.
 *
 * The load window is BACKUP_TEST_LOAD_MS (default 10 s; the 30 s is the same test run
 * longer). 10 s is not weaker where it matters: the backup starts in the middle of the window,
 * takes well under a second on this data, and writes are committed before, during and after it;
 * a longer window only adds documents. CI runs the suite twice within its budget.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createEmptyDatabase, usingPostgres } from '../helpers/db.js';
import { processFixture, runCli, type ServiceProcess } from '../helpers/process.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 90_000 });

const LOAD_MS = Number(process.env.BACKUP_TEST_LOAD_MS ?? 10_000);
const KEY = 'ak_backup_main_0001';
const PUBLIC_URL = 'https://invoices.example.test';

const fixture = processFixture('invoicing-backup-');
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop().catch(() => undefined);
});

async function emptyDatabase() {
  const db = await createEmptyDatabase();
  drops.push(db.drop);
  return db;
}

function bootstrapFile(): string {
  const huge = { per_sec: 1_000_000, per_min: 1_000_000, per_day: 1_000_000 };
  const file = path.join(fixture.dir, 'bootstrap.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      tariffs: { open: { key_rate: huge, team_rate: huge } },
      teams: [
        {
          id: 'backup-team',
          name: 'Backup',
          tariff: 'open',
          api_keys: [{ id: 4242, name: 'main', secret: KEY, active: true }],
          organizations: [{ id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893', kpp: '773601001', active: true }],
        },
      ],
    }),
  );
  return file;
}

function serviceEnv(databaseUrl: string): Record<string, string> {
  return { DATABASE_URL: databaseUrl, INVOICING_BOOTSTRAP_FILE: bootstrapFile(), INVOICING_PUBLIC_URL: PUBLIC_URL, INVOICING_IP_RATE_PER_SEC: '1000000' };
}

async function create(service: ServiceProcess, n: number): Promise<string | null> {
  const res = await fetch(`${service.baseUrl}/api/v1/invoices`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      invoice: {
        number: `B-${n}`,
        date: '2026-03-02',
        currency: 'RUB',
        seller: { inn: '7707083893' },
        buyer: { name: 'ООО «Покупатель»' },
        items: [{ name: `Работа ${n}`, qty: 1 + (n % 7), unit: 'ч', price: 1000 + n, vat_pct: 22 }],
      },
    }),
  });
  const body = (await res.json()) as { ok: boolean; public_id?: string };
  return res.status === 200 && body.ok && body.public_id ? body.public_id : null;
}

/** The document as the API answers it; the same request id and port each time, since the answer echoes them. */
async function documentText(service: ServiceProcess, publicId: string): Promise<string> {
  const res = await fetch(`${service.baseUrl}/api/v1/invoices/${publicId}`, { headers: { 'x-api-key': KEY, 'x-request-id': `check-${publicId}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** `items` through `work`, `width` at a time. */
async function eachLimited<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++] as T);
  }));
}

describe('a backup taken under write load restores into a new database that serves it', () => {
  it('keeps every document acknowledged before the backup began, byte for byte', async () => {
    const source = await emptyDatabase();
    const original = await fixture.serve(serviceEnv(source.url));
    await original.waitUntilHealthy();

    const acknowledged: Array<{ publicId: string; at: number }> = [];
    let n = 0;
    // The window is LOAD_MS, and writes go on for at least a second after the backup command ended.
    let deadline = Date.now() + LOAD_MS;
    let backupDone = false;
    const writers = Array.from({ length: 8 }, async () => {
      while (!backupDone || Date.now() < deadline) {
        const publicId = await create(original, n++);
        if (publicId) acknowledged.push({ publicId, at: Date.now() });
      }
    });
    await new Promise((r) => setTimeout(r, LOAD_MS / 2));
    const file = path.join(fixture.dir, usingPostgres() ? 'backup.dump' : 'backup.sqlite');
    const backupStarted = Date.now();
    const backup = await runCli(['backup', file], { DATABASE_URL: source.url });
    const backupEnded = Date.now();
    deadline = Math.max(deadline, backupEnded + 1_000);
    backupDone = true;
    await Promise.all(writers);

    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    const line = backup.stdout.trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(new RegExp(`^Backup written: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ bytes, schema version \\d{4}-\\d\\d-\\d\\dT\\d{4}_\\w+\\)$`));
    expect(fs.statSync(file).size).toBeGreaterThan(0);

    const before = acknowledged.filter((a) => a.at < backupStarted);
    // Writes went on around the backup: it was taken under load, not in a quiet moment.
    expect(before.length).toBeGreaterThan(20);
    expect(acknowledged.filter((a) => a.at > backupEnded).length).toBeGreaterThan(5);
    const expected = new Map<string, string>();
    await eachLimited(before, 8, async ({ publicId }) => void expected.set(publicId, await documentText(original, publicId)));
    expect(await original.stop()).toEqual({ code: 0, signal: null });

    const target = await emptyDatabase();
    const restore = await runCli(['restore', file], { DATABASE_URL: target.url });
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    expect(restore.stdout.trim()).toMatch(/^Restored .+ \(\d+ bytes, schema version \d{4}-\d\d-\d\dT\d{4}_\w+\); start the service on it$/);

    // The restored database passes its own checks and holds exactly one snapshot.
    const handle = openDatabase(target.target);
    try {
      if (target.target.kind === 'sqlite') {
        const raw = new SqliteDatabase(target.target.file, { readonly: true });
        expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(raw.pragma('foreign_key_check')).toEqual([]);
        raw.close();
      }
      const { rows } = await sql<{ n: number }>`select count(*) as n from invoices`.execute(handle.db);
      const stored = Number(rows[0]?.n);
      expect(stored).toBeGreaterThanOrEqual(before.length);
      expect(stored).toBeLessThanOrEqual(acknowledged.length);
    } finally {
      await handle.close();
    }
    const migrate = await runCli(['migrate'], { DATABASE_URL: target.url });
    expect(migrate.stdout).toContain('The database is up to date.');

    const restored = await fixture.serve(serviceEnv(target.url), original.port);
    await restored.waitUntilHealthy();
    expect((await fetch(`${restored.baseUrl}/readyz`)).status).toBe(200);
    const differing: string[] = [];
    await eachLimited([...expected.keys()], 8, async (publicId) => {
      if ((await documentText(restored, publicId)) !== expected.get(publicId)) differing.push(publicId);
    });
    expect(differing).toEqual([]);
    expect(await create(restored, 1_000_000)).toMatch(/\S/);
    expect(await restored.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('what restore refuses', () => {
  it('refuses a file that is not a backup, a backup newer than the code, and a database that is not empty (unless --force)', async () => {
    const source = await emptyDatabase();
    expect((await runCli(['import', bootstrapFile()], { DATABASE_URL: source.url })).code).toBe(0);

    const junk = path.join(fixture.dir, 'junk.bin');
    fs.writeFileSync(junk, 'not a database at all, just some bytes\n'.repeat(200));
    const fresh = await emptyDatabase();
    const notBackup = await runCli(['restore', junk], { DATABASE_URL: fresh.url });
    expect(notBackup.code).toBe(2);
    expect(notBackup.stderr.trim()).toMatch(/^invoicing: .*junk\.bin is not a backup of this service/);
    expect(notBackup.stderr.trim().split('\n')).toHaveLength(1);

    const file = path.join(fixture.dir, 'good.backup');
    expect((await runCli(['backup', file], { DATABASE_URL: source.url })).code).toBe(0);

    // The source is not empty: refused, then replaced with --force.
    const intoFull = await runCli(['restore', file], { DATABASE_URL: source.url });
    expect(intoFull.code).toBe(2);
    expect(intoFull.stderr).toMatch(/is not empty.*--force/);
    const forced = await runCli(['restore', file, '--force'], { DATABASE_URL: source.url });
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);

    // A release newer than this one migrated the database: its backup is taken, not restored here.
    const handle = openDatabase(source.target);
    await sql`insert into kysely_migration ("name", "timestamp") values ('2999-01-01T0000_future', '2999-01-01T00:00:00.000Z')`.execute(handle.db);
    await handle.close();
    const newer = path.join(fixture.dir, 'newer.backup');
    const newerBackup = await runCli(['backup', newer], { DATABASE_URL: source.url });
    expect(newerBackup.code).toBe(0);
    expect(newerBackup.stdout).toContain('schema version 2999-01-01T0000_future');
    const refused = await runCli(['restore', newer], { DATABASE_URL: fresh.url });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/newer than this release \(schema version 2999-01-01T0000_future/);

    // Nothing was written by the refusals: the fresh target is still empty and takes the good backup.
    const ok = await runCli(['restore', file], { DATABASE_URL: fresh.url });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
  });

  it.runIf(usingPostgres())('PostgreSQL without pg_dump on PATH: one clear line, exit 1, no file', async () => {
    const source = await emptyDatabase();
    const file = path.join(fixture.dir, 'no-tools.dump');
    const result = await runCli(['backup', file], { DATABASE_URL: source.url, PATH: fixture.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "invoicing: pg_dump was not found on PATH: install the PostgreSQL client tools of the server's major version or newer (Debian: apt-get install postgresql-client)\n",
    );
    expect(fs.existsSync(file)).toBe(false);
  });
});
