/**
 * AuthService: every authentication is ONE statement (the key by its hash, its rank, the team
 * it acts for, the team's tariff and, when asked, the team's list state), so a deactivated key
 * is refused on the very next request, with no second of grace. Nothing is cached per node but,
 * on PostgreSQL, the parse of a team and tariff content by its fingerprint (never stale: a changed
 * row has another fingerprint). On PostgreSQL the lookups of one turn of the event loop are one
 * statement together, each answered as its own statement would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.js';
import { AuthService } from '../../../src/modules/teams/index.js';
import { createStores, type Stores } from '../../../src/stores.js';
import { applyBootstrap, parseBootstrap } from '../../../src/modules/teams/bootstrap.js';
import { systemClock } from '../../../src/shared/clock.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../../helpers/db.js';
import { ACME_KEY, ACME_KEY_3, BETA_KEY, SERVICE_KEY, bootstrapFixture } from '../../helpers/fixtures.js';
import { statementsDuring } from '../../helpers/statements.js';

let db: TestDatabase;
let stores: Stores;

beforeAll(async () => {
  db = await createTestDb();
  stores = createStores(db);
  await applyBootstrap(db.db, parseBootstrap(JSON.stringify(bootstrapFixture())), systemClock);
  await db.db.insertInto('team_document_counts').values({ team_id: 'acme', shard: 0, documents: 7, changes: 11 }).execute();
});
afterAll(async () => db?.drop());

const creds = (secret: string, tenantId: string | null = null) => ({ source: 'x-api-key' as const, secret, tenantId, isRead: true });

describe('API key lookups', () => {
  it('reads the key, its team, the tariff and the list state in one statement', async () => {
    // PostgreSQL reads the team and tariff rows as their fingerprint and parses each content
    // once per process (a second statement the first time): warm that with another instance,
    // so that this one's own SQLite caller cache (per instance) starts empty.
    await new AuthService(db.db, stores.teams, 'demo-token').authenticate(creds(ACME_KEY), { listState: true });
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    let ctx: Awaited<ReturnType<AuthService['authenticate']>> | undefined;
    const texts = await statementsDuring(async () => {
      ctx = await auth.authenticate(creds(ACME_KEY), { listState: true });
    });
    // The SQLite data version's pragma aside (see below).
    expect(texts.filter((t) => t !== 'PRAGMA data_version')).toHaveLength(1);
    expect(ctx).toMatchObject({ mode: 'live', keyId: 101, keyName: 'erp', keyKind: 'team', teamId: 'acme', team: { id: 'acme' } });
    expect(ctx?.mode === 'live' && ctx.listState).toEqual(await createStores(db).invoices.listState('acme'));
    expect(ctx?.mode === 'live' && ctx.listState).toEqual({ documents: 7, version: 11, storedBytes: 0 });
    // Not asked for: not read.
    const plain = await auth.authenticate(creds(ACME_KEY));
    expect(plain.mode === 'live' && plain.listState).toBeUndefined();
  });

  it('shows a change of the team or of its tariff on the very next request, its parse cached (PostgreSQL: by fingerprint)', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    const before = await auth.authenticate(creds(ACME_KEY));
    const tariffId = before.mode === 'live' ? before.team.tariff_id : null;
    expect(tariffId).not.toBeNull();
    const tariff = await db.db.selectFrom('tariffs').selectAll().where('id', '=', tariffId as string).executeTakeFirstOrThrow();
    const team = await db.db.selectFrom('teams').selectAll().where('id', '=', 'acme').executeTakeFirstOrThrow();
    try {
      await db.db.updateTable('teams').set({ locale: 'en' }).where('id', '=', 'acme').execute();
      await expect(auth.authenticate(creds(ACME_KEY))).resolves.toMatchObject({ team: { id: 'acme', locale: 'en' } });
      await db.db.updateTable('tariffs').set({ max_organizations: tariff.max_organizations + 5 }).where('id', '=', tariffId as string).execute();
      await expect(auth.authenticate(creds(ACME_KEY))).resolves.toMatchObject({ tariff: { max_organizations: tariff.max_organizations + 5 } });
    } finally {
      await db.db.updateTable('teams').set({ locale: team.locale }).where('id', '=', 'acme').execute();
      await db.db.updateTable('tariffs').set({ max_organizations: tariff.max_organizations }).where('id', '=', tariffId as string).execute();
    }
    // Back to the first content: the same answer as at first (served from the parse kept for it).
    const again = await auth.authenticate(creds(ACME_KEY));
    expect(again).toEqual(before);
  });

  it('refuses a deactivated key on the very next request, and accepts it again at once', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    await expect(auth.authenticate(creds(BETA_KEY))).resolves.toMatchObject({ teamId: 'beta' });
    await db.db.updateTable('api_keys').set({ active: 0 }).where('id', '=', 201).execute();
    try {
      await expect(auth.authenticate(creds(BETA_KEY))).rejects.toMatchObject({ body: { error: 'unauthorized', code: 'api_key_inactive' } });
    } finally {
      await db.db.updateTable('api_keys').set({ active: 1 }).where('id', '=', 201).execute();
    }
    await expect(auth.authenticate(creds(BETA_KEY))).resolves.toMatchObject({ teamId: 'beta' });
    expect(auth.keyLookups()).toBe(3);
  });

  it('answers concurrent requests each with its own key; an unknown key is refused', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    const settled = await Promise.allSettled([
      ...Array.from({ length: 5 }, () => auth.authenticate(creds(ACME_KEY))),
      ...Array.from({ length: 5 }, () => auth.authenticate(creds(BETA_KEY))),
      ...Array.from({ length: 5 }, () => auth.authenticate(creds('ak_unknown_0000'))),
    ]);
    expect(settled.slice(0, 5).every((s) => s.status === 'fulfilled' && s.value.teamId === 'acme')).toBe(true);
    expect(settled.slice(5, 10).every((s) => s.status === 'fulfilled' && s.value.teamId === 'beta')).toBe(true);
    for (const s of settled.slice(10)) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toMatchObject({ body: { error: 'unauthorized', code: 'api_key_invalid' } });
    }
  });

  it('answers the lookups of one turn each as a statement of its own would (PostgreSQL: all of them in one statement)', async () => {
    const asked: Array<[string, string | null, boolean]> = [
      [ACME_KEY, null, true],
      [BETA_KEY, null, false],
      ['ak_unknown_0001', null, true],
      [SERVICE_KEY, 'beta', true],
      [SERVICE_KEY, 'nobody', false],
      [ACME_KEY, 'beta', false],
      [ACME_KEY_3, null, false],
      [ACME_KEY, null, false],
      [SERVICE_KEY, 'acme', false],
      // Whatever a header carries travels in the statement's arrays without disturbing the others.
      [SERVICE_KEY, 'a"b\\c{d},e ÿ NULL', true],
    ];
    const outcome = (s: PromiseSettledResult<unknown>) => (s.status === 'fulfilled' ? s.value : (s.reason as { body?: unknown }).body);
    // One at a time, each its own statement: the reference answers (and the teams' parses warmed).
    const one = new AuthService(db.db, stores.teams, 'demo-token');
    const alone: unknown[] = [];
    for (const [secret, tenant, listState] of asked) {
      alone.push(outcome((await Promise.allSettled([one.authenticate(creds(secret, tenant), { listState })]))[0]!));
    }
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    let together: unknown[] = [];
    const texts = await statementsDuring(async () => {
      together = (await Promise.allSettled(asked.map(([secret, tenant, listState]) => auth.authenticate(creds(secret, tenant), { listState })))).map(outcome);
    });
    expect(together).toEqual(alone);
    expect(alone.filter((a) => (a as { mode?: string }).mode === 'live')).toHaveLength(5);
    // PostgreSQL: one statement per variant (with and without the list state) for all ten.
    if (usingPostgres()) expect(texts).toHaveLength(2);
  });

  it.runIf(usingPostgres())('runs a lookup alone as the one-key statement, which PostgreSQL plans once per connection', async () => {
    // The batch statement (two arrays) is planned anew on every run: its arrays' contents make a
    // custom plan look cheaper than the generic one. A lookup alone goes through the one-key
    // statement, whose generic plan PostgreSQL keeps after five custom ones.
    const { sql } = await import('kysely');
    type Plans = { statement: string; generic_plans: string | number; custom_plans: string | number };
    await db.db.connection().execute(async (conn) => {
      const callerPlans = async () => {
        const { rows } = await sql<Plans>`select statement, generic_plans, custom_plans from pg_prepared_statements`.execute(conn);
        const callers = rows.filter((r) => r.statement.includes('team__fp') && r.statement.includes('"api_keys" as "k"'));
        const runs = (r: Plans) => Number(r.generic_plans) + Number(r.custom_plans);
        return {
          batch: callers.filter((r) => r.statement.includes('unnest(')).reduce((n, r) => n + runs(r), 0),
          single: callers.filter((r) => !r.statement.includes('unnest(')).map((r) => ({ runs: runs(r), custom: Number(r.custom_plans), generic: Number(r.generic_plans) })),
        };
      };
      const before = await callerPlans();
      const auth = new AuthService(conn as unknown as typeof db.db, stores.teams, 'demo-token');
      for (let i = 0; i < 16; i++) {
        await expect(auth.authenticate(creds(ACME_KEY), { listState: i % 2 === 0 })).resolves.toMatchObject({ keyId: 101, teamId: 'acme' });
      }
      const after = await callerPlans();
      // Every lookup ran alone: the batch statement did not run; the two one-key statements (with
      // and without the list state) ran eight times each or more, planned afresh at most five times.
      expect(after.batch).toBe(before.batch);
      expect(after.single).toHaveLength(2);
      for (const s of after.single) {
        expect(s.runs).toBeGreaterThanOrEqual(8);
        expect(s.custom).toBeLessThanOrEqual(5);
        expect(s.generic).toBeGreaterThanOrEqual(3);
      }
    });
  });

  it('a service key acts for the team x-tenant-id names, read in the same statement', async () => {
    // PostgreSQL reads the team and tariff rows as their fingerprint and parses each content
    // once per process (a second statement the first time): warm that with another instance,
    // so that this one's own SQLite caller cache (per instance) starts empty.
    await new AuthService(db.db, stores.teams, 'demo-token').authenticate(creds(ACME_KEY), { listState: true });
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    let ctx: Awaited<ReturnType<AuthService['authenticate']>> | undefined;
    const texts = await statementsDuring(async () => {
      ctx = await auth.authenticate(creds(SERVICE_KEY, 'acme'), { listState: true });
    });
    // The SQLite data version's pragma aside (see below).
    expect(texts.filter((t) => t !== 'PRAGMA data_version')).toHaveLength(1);
    expect(ctx).toMatchObject({ mode: 'live', keyId: 900, keyKind: 'service', teamId: 'acme', team: { id: 'acme' }, listState: { documents: 7, version: 11 } });
    await expect(auth.authenticate(creds(SERVICE_KEY, 'beta'))).resolves.toMatchObject({ teamId: 'beta', team: { id: 'beta' } });
    await expect(auth.authenticate(creds(SERVICE_KEY, 'nobody'))).rejects.toMatchObject({ body: { error: 'tenant_scope_not_resolved' } });
    await expect(auth.authenticate(creds(SERVICE_KEY))).rejects.toMatchObject({ body: { error: 'tenant_scope_not_resolved' } });
    // A team key naming another team is refused, whatever team the statement joined.
    await expect(auth.authenticate(creds(ACME_KEY, 'beta'))).rejects.toMatchObject({ body: { error: 'tenant_scope_not_resolved' } });
  });

  it('ranks a key among its team’s active keys on every request (max_api_keys)', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    await expect(auth.authenticate(creds(ACME_KEY_3))).rejects.toMatchObject({ body: { code: 'api_key_over_tariff_limit' } });
    // A key below it deactivated: the key is within the limit on the very next request.
    await db.db.updateTable('api_keys').set({ active: 0 }).where('id', '=', 102).execute();
    try {
      await expect(auth.authenticate(creds(ACME_KEY_3))).resolves.toMatchObject({ keyId: 103, teamId: 'acme' });
    } finally {
      await db.db.updateTable('api_keys').set({ active: 1 }).where('id', '=', 102).execute();
    }
    await expect(auth.authenticate(creds(ACME_KEY_3))).rejects.toMatchObject({ body: { code: 'api_key_over_tariff_limit' } });
  });
});

describe('the caller kept while the database is unchanged (SQLite data version)', () => {
  it.skipIf(usingPostgres())('answers a repeated request from what it read, with only the version pragma, until anything is committed', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    const first = await auth.authenticate(creds(ACME_KEY), { listState: true });
    const lookups = auth.keyLookups();
    let again: Awaited<ReturnType<AuthService['authenticate']>> | undefined;
    const texts = await statementsDuring(async () => {
      again = await auth.authenticate(creds(ACME_KEY), { listState: true });
    });
    expect(texts).toEqual(['PRAGMA data_version']);
    expect(auth.keyLookups()).toBe(lookups);
    expect(again).toEqual(first);
    // Without the list state, or with another key: read once, then kept as well.
    await auth.authenticate(creds(ACME_KEY));
    await auth.authenticate(creds(ACME_KEY));
    expect(auth.keyLookups()).toBe(lookups + 1);
    // A commit of anything, even a table authentication does not read, moves the version.
    await db.db.updateTable('team_document_counts').set({ documents: 8 }).where('team_id', '=', 'acme').execute();
    const moved = await auth.authenticate(creds(ACME_KEY), { listState: true });
    expect(auth.keyLookups()).toBe(lookups + 2);
    expect(moved.mode === 'live' && moved.listState).toEqual({ documents: 8, version: 11, storedBytes: 0 });
    await db.db.updateTable('team_document_counts').set({ documents: 7 }).where('team_id', '=', 'acme').execute();
  });

  it('refuses a key deactivated by another connection (another process) on the very next request', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    await expect(auth.authenticate(creds(BETA_KEY), { listState: true })).resolves.toMatchObject({ teamId: 'beta' });
    await expect(auth.authenticate(creds(BETA_KEY), { listState: true })).resolves.toMatchObject({ teamId: 'beta' });
    // Its own connections, as another process of the machine (or another node) has.
    const other = openDatabase(db.target);
    try {
      await other.db.updateTable('api_keys').set({ active: 0 }).where('id', '=', 201).execute();
      await expect(auth.authenticate(creds(BETA_KEY), { listState: true })).rejects.toMatchObject({ body: { code: 'api_key_inactive' } });
      await other.db.updateTable('api_keys').set({ active: 1 }).where('id', '=', 201).execute();
      await expect(auth.authenticate(creds(BETA_KEY), { listState: true })).resolves.toMatchObject({ teamId: 'beta' });
      // A tariff change by the other connection shows at once too.
      const before = await auth.authenticate(creds(BETA_KEY));
      const tariffId = before.mode === 'live' ? before.team.tariff_id : null;
      if (tariffId) {
        const row = await other.db.selectFrom('tariffs').select('max_organizations').where('id', '=', tariffId).executeTakeFirstOrThrow();
        await other.db.updateTable('tariffs').set({ max_organizations: row.max_organizations + 1 }).where('id', '=', tariffId).execute();
        const after = await auth.authenticate(creds(BETA_KEY));
        expect(after.tariff.max_organizations).toBe(row.max_organizations + 1);
        await other.db.updateTable('tariffs').set({ max_organizations: row.max_organizations }).where('id', '=', tariffId).execute();
      }
    } finally {
      await other.close();
    }
  });

  it('never lets a request change what later requests are given', async () => {
    const auth = new AuthService(db.db, stores.teams, 'demo-token');
    const ctx = await auth.authenticate(creds(ACME_KEY), { listState: true });
    expect(ctx.mode).toBe('live');
    if (ctx.mode !== 'live') return;
    expect(() => {
      (ctx.team as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect((await auth.authenticate(creds(ACME_KEY), { listState: true })).mode === 'live' && ctx.team.name).not.toBe('changed');
  });
});
