/**
 * AuthService: an API key is looked up once per second per node, and the requests that find
 * its cached second over while a lookup is under way wait for that one lookup (single flight)
 * instead of each reading the key; the answers are those of a lone lookup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthService } from '../../../src/modules/teams/index.js';
import { applyBootstrap, parseBootstrap } from '../../../src/modules/teams/bootstrap.js';
import { systemClock } from '../../../src/shared/clock.js';
import { createTestDb, type TestDatabase } from '../../helpers/db.js';
import { ACME_KEY, BETA_KEY, bootstrapFixture } from '../../helpers/fixtures.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDb();
  await applyBootstrap(db.db, parseBootstrap(JSON.stringify(bootstrapFixture())), systemClock);
});
afterAll(async () => db?.drop());

const creds = (secret: string) => ({ source: 'x-api-key' as const, secret, tenantId: null, isRead: true });

describe('API key lookups', () => {
  it('concurrent requests with the same key share one lookup', async () => {
    const auth = new AuthService(db.db, 'demo-token');
    const results = await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(creds(ACME_KEY))));
    expect(auth.keyLookups()).toBe(1);
    for (const r of results) expect(r).toMatchObject({ mode: 'live', keyId: 101, teamId: 'acme' });
    // Within the second: from the cache, no lookup.
    await auth.authenticate(creds(ACME_KEY));
    expect(auth.keyLookups()).toBe(1);
  });

  it('different keys are looked up each, and an unknown key is refused for every waiter', async () => {
    const auth = new AuthService(db.db, 'demo-token');
    const settled = await Promise.allSettled([
      ...Array.from({ length: 5 }, () => auth.authenticate(creds(ACME_KEY))),
      ...Array.from({ length: 5 }, () => auth.authenticate(creds(BETA_KEY))),
      ...Array.from({ length: 5 }, () => auth.authenticate(creds('ak_unknown_0000'))),
    ]);
    expect(auth.keyLookups()).toBe(3);
    expect(settled.slice(0, 5).every((s) => s.status === 'fulfilled' && s.value.teamId === 'acme')).toBe(true);
    expect(settled.slice(5, 10).every((s) => s.status === 'fulfilled' && s.value.teamId === 'beta')).toBe(true);
    for (const s of settled.slice(10)) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toMatchObject({ body: { error: 'unauthorized', code: 'api_key_invalid' } });
    }
  });

  it('after the second, the key is read again (a deactivation shows)', async () => {
    const auth = new AuthService(db.db, 'demo-token');
    await auth.authenticate(creds(BETA_KEY));
    await db.db.updateTable('api_keys').set({ active: 0 }).where('id', '=', 201).execute();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      await expect(auth.authenticate(creds(BETA_KEY))).rejects.toMatchObject({ body: { error: 'unauthorized', code: 'api_key_inactive' } });
      expect(auth.keyLookups()).toBe(2);
    } finally {
      await db.db.updateTable('api_keys').set({ active: 1 }).where('id', '=', 201).execute();
    }
  });
});
