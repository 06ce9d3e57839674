import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/types.js';
import {
  applyBootstrap,
  BootstrapError,
  parseBootstrap,
  seedDemoTeamIfEmpty,
  type BootstrapFile,
} from '../../../src/modules/teams/bootstrap.js';
import { DEFAULT_TARIFF, tariffFromRow } from '../../../src/modules/teams/tariffs.js';
import type { Clock } from '../../../src/shared/clock.js';
import { hashSecret } from '../../../src/shared/tokens.js';
import { createTestDb, type TestDatabase } from '../../helpers/db.js';

/** The operating contract's example, verbatim. */
const EXAMPLE = `{
  "tariffs": {
    "basic": {
      "max_organizations": 1, "max_api_keys": 2,
      "key_rate":  { "per_sec": 5,  "per_min": 100, "per_day": 10000 },
      "team_rate": { "per_sec": 10, "per_min": 200, "per_day": 20000 },
      "emails_per_day": 50, "external_share": true
    }
  },
  "teams": [{
    "id": "acme", "name": "ACME", "tariff": "basic", "locale": "ru",
    "api_keys": [ { "id": 101, "name": "erp", "secret": "ak_acme_erp_0001", "active": true } ],
    "organizations": [ { "id": "org-1", "name": "ООО «Ромашка»", "inn": "7707083893", "kpp": "773601001",
                         "email": "billing@romashka.example", "address": "Москва", "edo_id": "2BM-7707083893-2012052808301120", "active": true } ],
    "bank_accounts": [ { "id": "ba-1", "organization_id": "org-1", "bank_name": "ПАО Сбербанк", "bik": "044525225",
                         "account": "40702810938000000001", "corr_account": "30101810400000000225", "is_default": true } ],
    "managers": [ { "id": "m-1", "name": "Иван Петров", "email": "ivan@romashka.example", "phone": "+7 900 000-00-00" } ],
    "signers":  [ { "id": "s-1", "organization_id": "org-1", "name": "Анна Смирнова", "position": "Генеральный директор", "role": "director" } ]
  }],
  "service_keys": [ { "id": 900, "name": "legacy-integration", "secret": "sk_legacy_0001", "active": true } ]
}`;

const example = (): BootstrapFile => parseBootstrap(EXAMPLE);
const TABLES = ['tariffs', 'teams', 'api_keys', 'organizations', 'bank_accounts', 'managers', 'signers'] as const satisfies readonly (keyof Database)[];

function clockAt(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  return { now: () => now, set: (next) => (now = new Date(next)) };
}

let testDb: TestDatabase;
let clock: ReturnType<typeof clockAt>;

beforeEach(async () => {
  testDb = await createTestDb();
  clock = clockAt('2026-12-01T10:00:00.000Z');
});
afterEach(async () => {
  await testDb.drop();
});

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs seedDemoTeamIfEmpty in its own Node process once the clock reaches `startAt`; returns its result. */
async function seedInChildProcess(database: TestDatabase, startAt: number): Promise<unknown> {
  const script = `
    import { openDatabase } from './src/db/database.ts';
    import { seedDemoTeamIfEmpty } from './src/modules/teams/bootstrap.ts';
    import { systemClock } from './src/shared/clock.ts';
    const handle = openDatabase(JSON.parse(process.env.SEED_TARGET));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(process.env.SEED_AT) - Date.now())));
    try {
      process.stdout.write(JSON.stringify(await seedDemoTeamIfEmpty(handle.db, systemClock)));
    } finally {
      await handle.close();
    }`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, SEED_TARGET: JSON.stringify(database.target), SEED_AT: String(startAt) },
  });
  return JSON.parse(stdout) as unknown;
}

/** Every row of every bootstrap table, in a stable order. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = (await testDb.db.selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
    out[table] = rows.sort((a, b) => JSON.stringify([a.team_id, a.id]).localeCompare(JSON.stringify([b.team_id, b.id])));
  }
  return out;
}

/** The BootstrapError `run` throws (sync or async). */
async function rejection(run: () => unknown): Promise<BootstrapError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(BootstrapError);
    return err as BootstrapError;
  }
  throw new Error('expected a BootstrapError');
}

describe('applyBootstrap', () => {
  it('applies the contract example and stores only hashes of secrets', async () => {
    const summary = await applyBootstrap(testDb.db, example(), clock);
    expect(summary.teams).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(summary.api_keys.created).toBe(2);

    const db = testDb.db;
    const tariff = await db.selectFrom('tariffs').selectAll().where('id', '=', 'basic').executeTakeFirstOrThrow();
    expect(tariffFromRow(tariff)).toEqual({
      id: 'basic',
      max_organizations: 1,
      max_api_keys: 2,
      key_rate: { per_sec: 5, per_min: 100, per_day: 10000 },
      team_rate: { per_sec: 10, per_min: 200, per_day: 20000 },
      emails_per_day: 50,
      external_share: true,
      max_webhook_endpoints: 5,
      max_storage_mb: 1024,
    });
    expect(await db.selectFrom('teams').select(['id', 'name', 'tariff_id', 'locale']).execute()).toEqual([
      { id: 'acme', name: 'ACME', tariff_id: 'basic', locale: 'ru' },
    ]);
    const keys = await db.selectFrom('api_keys').select(['id', 'team_id', 'kind', 'name', 'secret_hash', 'active']).orderBy('id').execute();
    expect(keys).toEqual([
      { id: 101, team_id: 'acme', kind: 'team', name: 'erp', secret_hash: hashSecret('ak_acme_erp_0001'), active: 1 },
      { id: 900, team_id: null, kind: 'service', name: 'legacy-integration', secret_hash: hashSecret('sk_legacy_0001'), active: 1 },
    ]);
    const org = await db.selectFrom('organizations').selectAll().executeTakeFirstOrThrow();
    expect(org).toMatchObject({ team_id: 'acme', id: 'org-1', sort_order: 0, inn: '7707083893', kpp: '773601001', active: 1 });
    expect(org.edo_id).toBe('2BM-7707083893-2012052808301120');
    expect(await db.selectFrom('bank_accounts').selectAll().executeTakeFirstOrThrow()).toMatchObject({
      organization_id: 'org-1',
      bik: '044525225',
      account: '40702810938000000001',
      corr_account: '30101810400000000225',
      is_default: 1,
    });
    expect(await db.selectFrom('managers').select(['id', 'name', 'phone']).execute()).toEqual([
      { id: 'm-1', name: 'Иван Петров', phone: '+7 900 000-00-00' },
    ]);
    expect(await db.selectFrom('signers').select(['id', 'organization_id', 'role']).execute()).toEqual([
      { id: 's-1', organization_id: 'org-1', role: 'director' },
    ]);

    const everything = JSON.stringify(await snapshot());
    expect(everything).not.toContain('ak_acme_erp_0001');
    expect(everything).not.toContain('sk_legacy_0001');
  });

  it('is idempotent: a second apply changes nothing, not even updated_at', async () => {
    await applyBootstrap(testDb.db, example(), clock);
    const before = await snapshot();
    clock.set('2026-12-02T10:00:00.000Z');
    const summary = await applyBootstrap(testDb.db, example(), clock);
    expect(await snapshot()).toEqual(before);
    for (const counts of Object.values(summary)) expect(counts.created + counts.updated).toBe(0);
    expect(summary.organizations.unchanged).toBe(1);
  });

  it('updates what a changed file names and deletes nothing', async () => {
    await applyBootstrap(testDb.db, example(), clock);
    const changed = example();
    const team = changed.teams?.[0];
    if (!team) throw new Error('example has a team');
    team.name = 'ACME Corp';
    delete team.tariff; // back to the built-in default
    team.api_keys = [{ id: 101, name: 'erp', secret: 'ak_acme_erp_0002', active: false }];
    team.organizations = [{ id: 'org-2', name: 'ООО «Лютик»', inn: '500100732259' }];
    team.bank_accounts = [{ id: 'ba-2', organization_id: 'org-1', bank_name: 'Другой банк', is_default: true }];
    team.managers = [];
    delete team.signers;
    delete changed.service_keys;
    clock.set('2026-12-02T10:00:00.000Z');
    await applyBootstrap(testDb.db, changed, clock);

    const db = testDb.db;
    expect(await db.selectFrom('teams').select(['name', 'tariff_id']).executeTakeFirst()).toEqual({ name: 'ACME Corp', tariff_id: null });
    expect(await db.selectFrom('tariffs').select('id').execute()).toEqual([{ id: 'basic' }]);
    const key = await db.selectFrom('api_keys').selectAll().where('id', '=', 101).executeTakeFirstOrThrow();
    expect(key).toMatchObject({ active: 0, secret_hash: hashSecret('ak_acme_erp_0002'), created_at: '2026-12-01T10:00:00.000Z' });
    expect(key.updated_at).toBe('2026-12-02T10:00:00.000Z');
    expect(await db.selectFrom('api_keys').select('id').where('id', '=', 900).executeTakeFirst()).toEqual({ id: 900 });
    const orgs = await db.selectFrom('organizations').select(['id', 'sort_order', 'active']).orderBy('id').execute();
    expect(orgs).toEqual([
      { id: 'org-1', sort_order: 0, active: 1 },
      { id: 'org-2', sort_order: 0, active: 1 },
    ]);
    // ba-2 became org-1's default, so the default an earlier file stored was demoted.
    const accounts = await db.selectFrom('bank_accounts').select(['id', 'is_default']).orderBy('id').execute();
    expect(accounts).toEqual([
      { id: 'ba-1', is_default: 0 },
      { id: 'ba-2', is_default: 1 },
    ]);
    expect(await db.selectFrom('managers').select('id').execute()).toEqual([{ id: 'm-1' }]);
    expect(await db.selectFrom('signers').select('id').execute()).toEqual([{ id: 's-1' }]);
  });

  it('fills absent optional fields with defaults; the first account of an organization is its default when none is marked', async () => {
    const file = parseBootstrap(
      JSON.stringify({
        tariffs: { 'small.v2': { max_api_keys: 1, key_rate: { per_sec: 2 } } },
        teams: [
          {
            id: 'min',
            name: 'Minimal',
            tariff: 'small.v2',
            organizations: [{ id: 'o', name: 'No INN yet' }],
            bank_accounts: [
              { id: 'a', organization_id: 'o' },
              { id: 'b', organization_id: 'o' },
            ],
          },
        ],
      }),
    );
    await applyBootstrap(testDb.db, file, clock);
    const db = testDb.db;
    expect(await db.selectFrom('teams').select(['locale', 'tariff_id']).executeTakeFirst()).toEqual({ locale: 'ru', tariff_id: 'small.v2' });
    const tariff = tariffFromRow(await db.selectFrom('tariffs').selectAll().executeTakeFirst());
    expect(tariff).toEqual({ ...DEFAULT_TARIFF, id: 'small.v2', max_api_keys: 1, key_rate: { ...DEFAULT_TARIFF.key_rate, per_sec: 2 } });
    expect(await db.selectFrom('organizations').select(['inn', 'kpp', 'active']).executeTakeFirst()).toEqual({ inn: '', kpp: null, active: 1 });
    expect(await db.selectFrom('bank_accounts').select(['id', 'is_default', 'sort_order']).orderBy('id').execute()).toEqual([
      { id: 'a', is_default: 1, sort_order: 0 },
      { id: 'b', is_default: 0, sort_order: 1 },
    ]);
  });

  it('lets a team name a tariff an earlier file stored', async () => {
    await applyBootstrap(testDb.db, example(), clock);
    const later = parseBootstrap(JSON.stringify({ teams: [{ id: 'beta', name: 'Beta', tariff: 'basic' }] }));
    await applyBootstrap(testDb.db, later, clock);
    expect(await testDb.db.selectFrom('teams').select('tariff_id').where('id', '=', 'beta').executeTakeFirst()).toEqual({ tariff_id: 'basic' });
  });
});

describe('invalid files', () => {
  const variant = (mutate: (file: any) => void): string => {
    const file = JSON.parse(EXAMPLE);
    mutate(file);
    return JSON.stringify(file);
  };

  it('bad JSON names the line and column without echoing the text', async () => {
    const err = await rejection(() => parseBootstrap('{\n  "teams": [\n    { "id": "a", "secret": "ak_top_secret" x }\n  ]\n}'));
    expect(err.path).toBe('$');
    expect(err.message).toBe('$: is not valid JSON: expected "," or "}" at line 3, column 44 (position 58)');
    expect((await rejection(() => parseBootstrap(''))).message).toBe('$: is not valid JSON: unexpected end of input at line 1, column 1 (position 0)');
    expect((await rejection(() => parseBootstrap('{"a": 1,}'))).message).toContain('expected a double-quoted property name at line 1, column 9');
  });

  it.each([
    ['missing secret', (f: any) => delete f.teams[0].api_keys[0].secret, '$.teams[0].api_keys[0].secret', 'is required'],
    ['short secret', (f: any) => (f.service_keys[0].secret = 'short'), '$.service_keys[0].secret', 'must be a string of at least 8 characters'],
    ['wrong type', (f: any) => (f.tariffs.basic.max_api_keys = '2'), '$.tariffs.basic.max_api_keys', 'must be an integer from 0'],
    ['unknown property', (f: any) => (f.tariffs.basic.max_organisations = 1), '$.tariffs.basic.max_organisations', 'is not a known property'],
    ['unknown nested property', (f: any) => (f.teams[0].organizations[0].innn = '1'), '$.teams[0].organizations[0].innn', 'is not a known property'],
    ['bad INN', (f: any) => (f.teams[0].organizations[0].inn = '12345'), '$.teams[0].organizations[0].inn', 'must be a string of 10 or 12 digits'],
    ['bad locale', (f: any) => (f.teams[0].locale = 'de'), '$.teams[0].locale', 'must be "ru" or "en"'],
    ['bad team id', (f: any) => (f.teams[0].id = 'a b'), '$.teams[0].id', 'must be a string of 1-100 characters'],
    ['bad tariff id', (f: any) => (f.tariffs['bad id'] = {}), '$.tariffs["bad id"]', 'is not a valid tariff id'],
    ['teams not an array', (f: any) => (f.teams = {}), '$.teams', 'must be an array'],
    ['duplicate key id', (f: any) => (f.service_keys[0].id = 101), '$.service_keys[0].id', 'duplicates key id 101 of $.teams[0].api_keys[0].id'],
    ['duplicate secret', (f: any) => (f.service_keys[0].secret = 'ak_acme_erp_0001'), '$.service_keys[0].secret', 'duplicates the secret'],
    ['duplicate team', (f: any) => f.teams.push({ id: 'acme', name: 'Again' }), '$.teams[1].id', 'duplicates team id "acme"'],
    ['duplicate org id', (f: any) => f.teams[0].organizations.push({ id: 'org-1', name: 'X' }), '$.teams[0].organizations[1].id', 'duplicates'],
    [
      'two default accounts',
      (f: any) => f.teams[0].bank_accounts.push({ id: 'ba-2', organization_id: 'org-1', is_default: true }),
      '$.teams[0].bank_accounts[1].is_default',
      'duplicates the default account of organization "org-1"',
    ],
  ])('%s', async (_name, mutate, path, message) => {
    const err = await rejection(() => parseBootstrap(variant(mutate)));
    expect(err.path).toBe(path);
    expect(err.message).toContain(`${path}: ${message}`);
  });

  it('lists every problem, the first in `path`', async () => {
    const err = await rejection(() =>
      parseBootstrap(
        variant((f) => {
          delete f.teams[0].api_keys[0].secret;
          f.teams[0].organizations[0].kpp = 'x';
        }),
      ),
    );
    expect(err.issues.map((i) => i.path)).toEqual(['$.teams[0].api_keys[0].secret', '$.teams[0].organizations[0].kpp']);
    expect(err.message).toContain('(and 1 more: $.teams[0].organizations[0].kpp)');
  });

  it.each([
    ['an unknown tariff', (f: any) => (f.teams[0].tariff = 'gold'), '$.teams[0].tariff', 'names tariff "gold"'],
    [
      'an account of an unknown organization',
      (f: any) => (f.teams[0].bank_accounts[0].organization_id = 'org-9'),
      '$.teams[0].bank_accounts[0].organization_id',
      'names organization "org-9"',
    ],
    ['a signer of an unknown organization', (f: any) => (f.teams[0].signers[0].organization_id = 'org-9'), '$.teams[0].signers[0].organization_id', 'org-9'],
  ])('refuses %s when applying, and writes nothing', async (_name, mutate, path, message) => {
    const file = parseBootstrap(variant(mutate));
    const err = await rejection(() => applyBootstrap(testDb.db, file, clock));
    expect(err.path).toBe(path);
    expect(err.message).toContain(message);
    for (const rows of Object.values(await snapshot())) expect(rows).toEqual([]);
  });

  it('refuses a key id owned by another team or kind, and a secret of another key, leaving the database as it was', async () => {
    await applyBootstrap(testDb.db, example(), clock);
    const before = await snapshot();
    const other = (keys: object[], serviceKeys: object[] = []) =>
      parseBootstrap(JSON.stringify({ teams: [{ id: 'other', name: 'Other', organizations: [{ id: 'o', name: 'O' }], api_keys: keys }], service_keys: serviceKeys }));

    let err = await rejection(() => applyBootstrap(testDb.db, other([{ id: 101, name: 'stolen', secret: 'ak_other_0001' }]), clock));
    expect(err.path).toBe('$.teams[0].api_keys[0].id');
    expect(err.message).toContain('already exists as a key of team "acme"');

    err = await rejection(() => applyBootstrap(testDb.db, other([], [{ id: 101, name: 'svc', secret: 'sk_other_0001' }]), clock));
    expect(err.path).toBe('$.service_keys[0].id');

    err = await rejection(() => applyBootstrap(testDb.db, other([{ id: 900, name: 'svc', secret: 'sk_other_0001' }]), clock));
    expect(err.message).toContain('$.teams[0].api_keys[0].id: key 900 already exists as a service key');

    err = await rejection(() => applyBootstrap(testDb.db, other([{ id: 5, name: 'copy', secret: 'ak_acme_erp_0001' }]), clock));
    expect(err.message).toBe('$.teams[0].api_keys[0].secret: is already the secret of key 101');

    expect(await snapshot()).toEqual(before);
  });
});

describe('seedDemoTeamIfEmpty', () => {
  it('creates the demo team once and returns a secret whose hash is stored', async () => {
    const demo = await seedDemoTeamIfEmpty(testDb.db, clock);
    expect(demo).toMatchObject({ keyId: 1 });
    if (!demo) return;
    // A real team with a random id, never the demo world's id: demo mode never reaches stored data.
    expect(demo.teamId).toMatch(/^team-[A-Za-z0-9_-]{16}$/);
    const db = testDb.db;
    expect(await db.selectFrom('teams').select(['id', 'name', 'tariff_id', 'locale']).execute()).toEqual([
      { id: demo.teamId, name: 'Demo team', tariff_id: null, locale: 'ru' },
    ]);
    const key = await db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow();
    expect(key).toMatchObject({ id: 1, team_id: demo.teamId, kind: 'team', active: 1, secret_hash: hashSecret(demo.secret) });
    expect(demo.secret).toMatch(/^ak_[A-Za-z0-9_-]{43}$/);
    expect(await db.selectFrom('organizations').select(['name', 'inn', 'kpp']).execute()).toEqual([
      { name: 'ООО «Ромашка»', inn: '7707083893', kpp: '773601001' },
    ]);
    expect(await db.selectFrom('bank_accounts').select(['bik', 'account', 'corr_account', 'is_default']).execute()).toEqual([
      { bik: '044525225', account: '40702810938000000001', corr_account: '30101810400000000225', is_default: 1 },
    ]);
    expect(await db.selectFrom('managers').select('name').execute()).toHaveLength(1);
    expect(await db.selectFrom('signers').select(['organization_id', 'role']).execute()).toEqual([{ organization_id: 'org-1', role: 'director' }]);

    expect(await seedDemoTeamIfEmpty(testDb.db, clock)).toBeNull();
    expect(await db.selectFrom('teams').select('id').execute()).toHaveLength(1);
  });

  it('does nothing when a bootstrap file already created a team', async () => {
    await applyBootstrap(testDb.db, example(), clock);
    expect(await seedDemoTeamIfEmpty(testDb.db, clock)).toBeNull();
    expect(await testDb.db.selectFrom('teams').select('id').execute()).toEqual([{ id: 'acme' }]);
  });

  it('takes the next free key id when service keys exist but no team', async () => {
    await applyBootstrap(testDb.db, parseBootstrap('{"service_keys":[{"id":1,"name":"svc","secret":"sk_service_01"}]}'), clock);
    expect(await seedDemoTeamIfEmpty(testDb.db, clock)).toMatchObject({ keyId: 2 });
  });

  it('creates one team when called concurrently', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => seedDemoTeamIfEmpty(testDb.db, clock)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await testDb.db.selectFrom('teams').select('id').execute()).toEqual([{ id: results.find((r) => r !== null)?.teamId }]);
  });

  it('creates one team when several processes start at once', async () => {
    // Real processes: better-sqlite3 is synchronous, so two handles in one process cannot wait for each other.
    const startAt = Date.now() + 2500;
    const results = await Promise.all([1, 2, 3].map(() => seedInChildProcess(testDb, startAt)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await testDb.db.selectFrom('teams').select('id').execute()).toEqual([{ id: (results.find((r) => r !== null) as { teamId: string }).teamId }]);
    expect(await testDb.db.selectFrom('api_keys').select('id').execute()).toEqual([{ id: 1 }]);
  });
});
