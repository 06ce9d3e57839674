/**
 * The catalog's cache: served again it is what a fresh build answers, and a change of the
 * team's reference data or tariff shows on the next request, on the node that cached it and on
 * another node sharing the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threeNodesOnOneDatabase, type TestApp, type ThreeNodes } from '../../helpers/app.js';
import { statementsDuring } from '../../helpers/statements.js';
import { ACME } from './write-helpers.js';

let a: TestApp; // caches the catalog
let b: TestApp; // a second node on the same database, cache on
let rebuild: TestApp; // a third node with the caches off: every answer built afresh

let nodes: ThreeNodes;

beforeAll(async () => {
  nodes = await threeNodesOnOneDatabase();
  ({ a, b, rebuild } = nodes);
});

afterAll(async () => {
  await nodes?.close();
});

describe('the catalog', () => {
  const catalog = async (t: TestApp) => {
    const res = await t.call({ method: 'GET', url: '/api/v1/ref/catalog', headers: ACME });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return res.body;
  };

  it('served again is what a fresh build answers, and a change shows on the next request on every node', async () => {
    const first = await catalog(a);
    expect(await catalog(a)).toBe(first); // from a's cache
    expect(await catalog(rebuild)).toBe(first); // built by another node
    await a.db.db.updateTable('organizations').set({ name: 'ООО «Ромашка-2»' }).where('team_id', '=', 'acme').where('id', '=', 'org-1').execute();
    try {
      for (const t of [a, b]) expect(JSON.parse(await catalog(t)).organizations[0].name).toBe('ООО «Ромашка-2»');
      await a.db.db.updateTable('tariffs').set({ max_organizations: 3 }).where('id', '=', 'basic').execute();
      for (const t of [a, b]) {
        const orgs = JSON.parse(await catalog(t)).organizations as Array<{ id: string; within_tariff_limit: boolean }>;
        expect(orgs.find((o) => o.id === 'org-2')?.within_tariff_limit).toBe(true);
      }
    } finally {
      await a.db.db.updateTable('organizations').set({ name: 'ООО «Ромашка»' }).where('team_id', '=', 'acme').where('id', '=', 'org-1').execute();
      await a.db.db.updateTable('tariffs').set({ max_organizations: 1 }).where('id', '=', 'basic').execute();
    }
    expect(await catalog(a)).toBe(first);
  });

  const stats = (t: TestApp) => t.app.catalog.cacheStats();

  it('is served from the cache with no query while the catalog version holds', async () => {
    const first = await catalog(a);
    const before = stats(a);
    // One statement: authentication's (the key, the team with its catalog version, the tariff).
    const texts = await statementsDuring(async () => expect(await catalog(a)).toBe(first));
    expect(texts).toHaveLength(1);
    expect(stats(a)).toMatchObject({ hits: before.hits + 1, misses: before.misses });
  });

  it('shows every kind of reference change (insert, update, delete, each list) on the next request on every node', async () => {
    const db = a.db.db;
    const now = new Date().toISOString();
    const names = async (t: TestApp) => {
      const body = JSON.parse(await catalog(t));
      return {
        banks: body.bank_accounts.map((x: { bank_name: string }) => x.bank_name),
        managers: body.managers.map((x: { id: string; phone: string | null }) => `${x.id}:${x.phone}`),
        signers: body.signers.map((x: { position: string | null }) => x.position),
        orgs: body.organizations.map((x: { id: string }) => x.id),
      };
    };
    for (const t of [a, b]) await catalog(t); // both nodes hold the catalog
    const steps: Array<[string, () => Promise<unknown>, (n: Awaited<ReturnType<typeof names>>) => void]> = [
      ['bank account updated', () => db.updateTable('bank_accounts').set({ bank_name: 'Банк-2' }).where('team_id', '=', 'acme').where('id', '=', 'ba-1').execute(), (n) => expect(n.banks).toEqual(['Банк-2'])],
      ['manager updated', () => db.updateTable('managers').set({ phone: '+7 1' }).where('team_id', '=', 'acme').where('id', '=', 'm-1').execute(), (n) => expect(n.managers).toEqual(['m-1:+7 1'])],
      ['signer updated', () => db.updateTable('signers').set({ position: 'Директор' }).where('team_id', '=', 'acme').where('id', '=', 's-1').execute(), (n) => expect(n.signers).toEqual(['Директор'])],
      ['manager inserted', () => db.insertInto('managers').values({ team_id: 'acme', id: 'm-9', sort_order: 9, name: 'Новый', email: null, phone: null, updated_at: now }).execute(), (n) => expect(n.managers).toEqual(['m-1:+7 1', 'm-9:null'])],
      ['manager deleted', () => db.deleteFrom('managers').where('team_id', '=', 'acme').where('id', '=', 'm-9').execute(), (n) => expect(n.managers).toEqual(['m-1:+7 1'])],
      ['organization inserted', () => db.insertInto('organizations').values({ team_id: 'acme', id: 'org-9', sort_order: 9, name: 'ООО «Девять»', inn: '7707083893', kpp: null, email: null, address: null, edo_id: null, active: 1, updated_at: now }).execute(), (n) => expect(n.orgs).toContain('org-9')],
      ['organization deleted', () => db.deleteFrom('organizations').where('team_id', '=', 'acme').where('id', '=', 'org-9').execute(), (n) => expect(n.orgs).not.toContain('org-9')],
    ];
    try {
      for (const [step, write, check] of steps) {
        await write();
        for (const t of [a, b]) {
          const n = await names(t);
          try {
            check(n);
          } catch (err) {
            throw new Error(`${step}: ${(err as Error).message}`);
          }
        }
      }
    } finally {
      await db.updateTable('bank_accounts').set({ bank_name: 'ПАО Сбербанк' }).where('team_id', '=', 'acme').where('id', '=', 'ba-1').execute();
      await db.updateTable('managers').set({ phone: '+7 900 000-00-00' }).where('team_id', '=', 'acme').where('id', '=', 'm-1').execute();
      await db.updateTable('signers').set({ position: 'Генеральный директор' }).where('team_id', '=', 'acme').where('id', '=', 's-1').execute();
    }
    // Another team's writes do not touch acme's version: still a hit.
    const first = await catalog(a);
    const before = stats(a);
    await db.updateTable('managers').set({ phone: '+7 2' }).where('team_id', '=', 'beta').execute();
    expect(await catalog(a)).toBe(first);
    expect(stats(a).hits).toBe(before.hits + 1);
    expect(await catalog(rebuild)).toBe(first);
  });

  it('follows the team onto another tariff at once (the team and its tariff are one read)', async () => {
    const db = a.db.db;
    const now = new Date().toISOString();
    const within = async (t: TestApp) =>
      (JSON.parse(await catalog(t)).organizations as Array<{ id: string; within_tariff_limit: boolean }>).filter((o) => o.within_tariff_limit).map((o) => o.id);
    for (const t of [a, b]) expect(await within(t)).toEqual(['org-1']);
    await db
      .insertInto('tariffs')
      .values({ id: 'wide', max_organizations: 5, max_api_keys: 5, key_per_sec: 1000, key_per_min: 100000, key_per_day: 10000000, team_per_sec: 1000, team_per_min: 100000, team_per_day: 10000000, emails_per_day: 50, external_share: 1, max_webhook_endpoints: 5, updated_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    await db.updateTable('teams').set({ tariff_id: 'wide' }).where('id', '=', 'acme').execute();
    try {
      for (const t of [a, b]) expect(await within(t)).toEqual(['org-1', 'org-2']);
      await db.updateTable('teams').set({ tariff_id: null }).where('id', '=', 'acme').execute();
      // The default tariff allows a key 50 requests a second, which this file's earlier requests
      // can have used up within the current second: start a new per-second window first.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // No tariff: the built-in default (1,000 organizations).
      for (const t of [a, b]) expect(await within(t)).toEqual(['org-1', 'org-2']);
    } finally {
      await db.updateTable('teams').set({ tariff_id: 'basic' }).where('id', '=', 'acme').execute();
    }
    for (const t of [a, b]) expect(await within(t)).toEqual(['org-1']);
  });
});
