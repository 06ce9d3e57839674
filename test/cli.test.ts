/**
 * The `invoicing` command through real processes (operating contract, section 1), on a
 * fresh database: SQLite, or PostgreSQL when DATABASE_URL names it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseTarget } from '../src/config/config.js';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { AuthService } from '../src/modules/teams/index.js';
import { createStores } from '../src/stores.js';
import { ApiError } from '../src/shared/errors.js';
import { hashSecret } from '../src/shared/tokens.js';
import { createEmptyDatabase } from './helpers/db.js';
import { runCli } from './helpers/process.js';

// Every case starts real Node processes: generous limits for a loaded CI machine.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

let tmp: string;
let target: DatabaseTarget;
let env: Record<string, string>;
let database: DatabaseHandle | undefined;
const drops: Array<() => Promise<void>> = [];

const BOOTSTRAP = {
  tariffs: { small: { max_api_keys: 2 } },
  teams: [
    {
      id: 'acme',
      name: 'ACME',
      tariff: 'small',
      api_keys: [{ id: 101, name: 'erp', secret: 'ak_cli_test_erp_0001' }],
      organizations: [{ id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893' }],
    },
  ],
};

function writeFile(name: string, content: unknown): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** Opened after `migrate` so the command, not the test, creates the schema. */
function db(): DatabaseHandle {
  database ??= openDatabase(target);
  return database;
}

async function authenticate(secret: string) {
  // A new service each time: no cache between the calls of one test.
  return new AuthService(db().db, createStores(db()).teams, 'demo-token').authenticate({ source: 'x-api-key', secret, tenantId: null, isRead: true });
}

function secretFrom(stdout: string): string {
  const secret = stdout.match(/^(ak_[A-Za-z0-9_-]{20,})$/m)?.[1];
  if (!secret) throw new Error(`no secret in:\n${stdout}`);
  return secret;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-cli-'));
  const empty = await createEmptyDatabase();
  drops.push(empty.drop);
  target = empty.target;
  env = { DATABASE_URL: empty.url };
});

afterAll(async () => {
  await database?.close();
  for (const drop of drops) await drop().catch(() => undefined);
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('invoicing migrate', () => {
  it('applies the migrations to a fresh database, then says it is up to date', async () => {
    const first = await runCli(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Applied: .*spine/m);
    const second = await runCli(['migrate'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('up to date');
  });

  it('leaves alone a database a newer release migrated (rolling restart), but still refuses one missing its own migrations', async () => {
    const future = { name: '2099-01-01T0000_from_a_newer_release', timestamp: '2099-01-01T00:00:00.000Z' };
    const table = 'kysely_migration' as never;
    await db().db.insertInto(table).values(future as never).execute();
    try {
      // Every migration of this release is applied: an old node restarting mid-roll starts.
      const older = await runCli(['migrate'], env);
      expect(older.code, older.stderr).toBe(0);
      expect(older.stdout).toContain('up to date');

      // One of this release's own migrations is not recorded: not a newer database, refused.
      const own = (await db().db.selectFrom(table).selectAll().where('name' as never, 'like', '%link_epoch' as never).executeTakeFirstOrThrow()) as { name: string };
      await db().db.deleteFrom(table).where('name' as never, '=', own.name as never).execute();
      try {
        const broken = await runCli(['migrate'], env);
        expect(broken.code).toBe(1);
        expect(broken.stderr).toContain(`previously executed migration ${future.name} is missing`);
      } finally {
        await db().db.insertInto(table).values(own as never).execute();
      }
    } finally {
      await db().db.deleteFrom(table).where('name' as never, '=', future.name as never).execute();
    }
  });
});

describe('invoicing import', () => {
  it('applies a valid file, and re-applying it changes nothing', async () => {
    const file = writeFile('good.json', BOOTSTRAP);
    const first = await runCli(['import', file], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('teams: 1 created');
    expect((await authenticate('ak_cli_test_erp_0001')).teamId).toBe('acme');
    // A legacy short secret is imported, with a warning naming its path but never the secret.
    expect(first.stderr).toContain('Warning: $.teams[0].api_keys[0].secret is shorter than 24 characters');
    expect(first.stderr).not.toContain('ak_cli_test_erp_0001');

    const second = await runCli(['import', file], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('teams: 0 created, 0 updated, 1 unchanged');
    expect(second.stdout).toContain('api_keys: 0 created, 0 updated, 1 unchanged');
  });

  it('refuses an invalid file with exit 2 and the path of the bad field, and refuses usage errors', async () => {
    const bad = writeFile('bad.json', { teams: [{ id: 'acme', name: 'ACME', organizations: [{ id: 'org-1', name: 42 }] }] });
    const [invalid, syntax, missing, noFile] = await Promise.all([
      runCli(['import', bad], env),
      runCli(['import', writeFile('syntax.json', '{"teams": [}')], env),
      runCli(['import', path.join(tmp, 'missing.json')], env),
      runCli(['import'], env),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('$.teams[0].organizations[0].name');
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/not valid JSON.*line 1/);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing.json');
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('Usage: invoicing');
  });
});

describe('invoicing keys', () => {
  let keyId: number;
  let secret: string;

  it('create prints a new secret once; it is stored only as its hash and authenticates', async () => {
    const result = await runCli(['keys', 'create', '--team', 'acme', '--name', 'x'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    secret = secretFrom(result.stdout);
    keyId = Number(result.stdout.match(/Created API key (\d+)/)?.[1]);
    expect(keyId).toBeGreaterThan(101);

    const row = await db().db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ team_id: 'acme', kind: 'team', name: 'x', active: 1, secret_hash: hashSecret(secret) });
    expect(JSON.stringify(row)).not.toContain(secret);

    expect(await authenticate(secret)).toMatchObject({ mode: 'live', teamId: 'acme', keyId, keyName: 'x' });
  });

  it('create warns when the team already has as many active keys as its tariff allows', async () => {
    const result = await runCli(['keys', 'create', '--team', 'acme', '--name', 'third'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('max_api_keys');
    await expect(authenticate(secretFrom(result.stdout))).rejects.toMatchObject({ body: { code: 'api_key_over_tariff_limit' } });
  });

  it('create for an unknown team, or with missing or unknown options, exits 2', async () => {
    const [unknownTeam, noName, unknownOption] = await Promise.all([
      runCli(['keys', 'create', '--team', 'nope', '--name', 'x'], env),
      runCli(['keys', 'create', '--team', 'acme'], env),
      runCli(['keys', 'create', '--team', 'acme', '--name', 'x', '--admin'], env),
    ]);
    expect(unknownTeam.code).toBe(2);
    expect(unknownTeam.stderr).toContain('there is no team "nope"');
    expect(unknownTeam.stdout).toBe('');
    for (const usage of [noName, unknownOption]) {
      expect(usage.code, usage.stderr).toBe(2);
      expect(usage.stderr).toContain('Usage: invoicing');
      expect(usage.stdout).toBe('');
    }
  });

  it('deactivate makes the key inactive; an unknown or malformed id exits 2', async () => {
    const result = await runCli(['keys', 'deactivate', String(keyId)], env);
    expect(result.code, result.stderr).toBe(0);
    const row = await db().db.selectFrom('api_keys').select('active').where('id', '=', keyId).executeTakeFirstOrThrow();
    expect(row.active).toBe(0);
    const refused = await authenticate(secret).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).body).toMatchObject({ error: 'unauthorized', code: 'api_key_inactive' });

    const [unknown, malformed] = await Promise.all([
      runCli(['keys', 'deactivate', '999999'], env),
      runCli(['keys', 'deactivate', 'abc'], env),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('999999');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('Usage: invoicing');
  });
});

describe('usage', () => {
  it('wrong usage exits 2 with the usage text on stderr; help exits 0 on stdout', async () => {
    const [none, unknown, keysAlone, help] = await Promise.all([
      runCli([], env),
      runCli(['frobnicate'], env),
      runCli(['keys'], env),
      runCli(['help'], env),
    ]);
    for (const wrong of [none, unknown, keysAlone]) {
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('Usage: invoicing');
      expect(wrong.stdout).toBe('');
    }
    expect(unknown.stderr).toContain('frobnicate');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('keys create --team ID --name NAME');
  });

  it('edo retry: usage errors and a document without a failed sync exit 2 with the reason', async () => {
    const [alone, noId, unknown] = await Promise.all([runCli(['edo'], env), runCli(['edo', 'retry'], env), runCli(['edo', 'retry', 'no-such-doc'], env)]);
    for (const wrong of [alone, noId]) {
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('Usage: invoicing');
    }
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe('invoicing: document no-such-doc has no EDO sync');
  });

  it('bad configuration exits 2 with one line naming the variable', async () => {
    const result = await runCli(['migrate'], { DATABASE_URL: 'mysql://x' });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('DATABASE_URL');
  });
});
