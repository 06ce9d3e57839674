import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, threeNodesOnOneDatabase, type TestApp, type ThreeNodes } from '../../helpers/app.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { BETA_ORG_INN, ORG1_INN, ORG2_INN, ORG3_INN, countRows, createOk, post, put, simpleDoc } from './write-helpers.js';

describe('the seller must be an active organization of the team within the tariff (spec 1.6, 7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const withSeller = (inn: string, number = 's') => simpleDoc(number, { seller: { name: 'Продавец', inn } });

  async function refusedCreate(body: unknown, headers: Record<string, string> = {}) {
    const before = await countRows(t, 'invoices');
    const res = await post(t, body, headers);
    expect(await countRows(t, 'invoices')).toBe(before);
    return res;
  }

  it.each([
    ['an INN of no organization of the team', '7701234560'],
    ['the inactive organization org-3', ORG3_INN],
    ["another team's organization", BETA_ORG_INN],
  ])('refuses %s with 403 seller_org_not_allowed', async (_name, inn) => {
    const res = await refusedCreate({ invoice: withSeller(inn) });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ ok: false, error: 'seller_org_not_allowed' });
    expect(res.json().details).toContain(inn);
  });

  it('refuses org-2, active but beyond the tariff limit of one organization, with 403 seller_org_over_tariff_limit', async () => {
    const res = await refusedCreate({ invoice: withSeller(ORG2_INN) });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ ok: false, error: 'seller_org_over_tariff_limit' });
    expect(res.json().details).toContain('org-2');
  });

  it("refuses the beta team's own organization with an acme key, and accepts it with beta's key", async () => {
    const res = await refusedCreate({ invoice: withSeller(BETA_ORG_INN, 'b1') });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('seller_org_not_allowed');
    const beta = await createOk(t, { invoice: withSeller(BETA_ORG_INN, 'b2') }, { 'x-api-key': BETA_KEY });
    expect(beta.invoice.seller).toMatchObject({ inn: BETA_ORG_INN, name: 'Продавец' });
    expect(beta.metadata).toMatchObject({ api_key_id: 201, api_key_name: 'main' });
    // Beta has no bank account: no requisites to fill and so no payment QR.
    expect(beta.qr).toMatchObject({ enabled: false, reason: 'missing_bank_requisites' });
  });

  it('refuses an acme seller with the beta key', async () => {
    const res = await refusedCreate({ invoice: withSeller(ORG1_INN, 'b3') }, { 'x-api-key': BETA_KEY });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('seller_org_not_allowed');
  });

  it('matches the INN after trimming, not by prefix or as a number', async () => {
    expect((await post(t, { invoice: withSeller(` ${ORG1_INN} `, 't1') })).statusCode).toBe(200);
    expect((await refusedCreate({ invoice: withSeller(ORG1_INN.slice(0, 9), 't2') })).statusCode).toBe(403);
    const numeric = await refusedCreate({ invoice: simpleDoc('t3', { seller: { inn: Number(ORG1_INN) } }) });
    expect(numeric.statusCode).toBe(400);
    expect(numeric.json().errors).toContainEqual(expect.objectContaining({ field: 'seller.inn', code: 'invalid_type' }));
  });

  it('applies the same rules on update, leaving the document unchanged', async () => {
    const created = await createOk(t, { invoice: withSeller(ORG1_INN, 'u1') });
    for (const [inn, error] of [
      [ORG2_INN, 'seller_org_over_tariff_limit'],
      [ORG3_INN, 'seller_org_not_allowed'],
      [BETA_ORG_INN, 'seller_org_not_allowed'],
    ] as const) {
      const res = await put(t, created.public_id, { invoice: withSeller(inn, 'u1') });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe(error);
    }
    expect(await countRows(t, 'invoice_revisions', created.public_id)).toBe(0);
  });

  it('checks the seller before anything is claimed or stored, so the refusal leaves no trace', async () => {
    const keys = await countRows(t, 'idempotency_keys');
    const res = await refusedCreate({ invoice: withSeller(ORG2_INN, 'i1') }, { 'idempotency-key': 'seller-refused-1' });
    expect(res.statusCode).toBe(403);
    expect(await countRows(t, 'idempotency_keys')).toBe(keys);
  });
});

describe('the seller is resolved against the reference data as it is now (PostgreSQL keeps it per catalog version)', () => {
  let nodes: ThreeNodes;
  beforeAll(async () => {
    nodes = await threeNodesOnOneDatabase();
  });
  afterAll(async () => nodes.close());

  const seller = (number: string) => ({ invoice: simpleDoc(number, { seller: { inn: ORG1_INN } }) });

  it('a bank account or organization changed, deactivated or restored applies to the very next create and PUT, on every node', async () => {
    const { a, b } = nodes;
    const db = a.db.db;
    // Both nodes have resolved org-1 once (and may keep its rows).
    const first = await createOk(b, seller('c1'));
    expect(first.invoice.seller).toMatchObject({ name: 'ООО «Ромашка»', bank_name: 'ПАО Сбербанк' });
    await createOk(a, seller('c2'));
    try {
      await db.updateTable('bank_accounts').set({ bank_name: 'Банк-2' }).where('team_id', '=', 'acme').where('id', '=', 'ba-1').execute();
      await db.updateTable('organizations').set({ name: 'ООО «Ромашка-2»' }).where('team_id', '=', 'acme').where('id', '=', 'org-1').execute();
      for (const [node, number] of [[b, 'c3'], [a, 'c4']] as const) {
        expect((await createOk(node, seller(number))).invoice.seller).toMatchObject({ name: 'ООО «Ромашка-2»', bank_name: 'Банк-2' });
      }
      const updated = await put(b, first.public_id, seller('c1'));
      expect(updated.statusCode).toBe(200);
      expect(updated.json().invoice.seller).toMatchObject({ name: 'ООО «Ромашка-2»', bank_name: 'Банк-2' });
      await db.updateTable('organizations').set({ active: 0 }).where('team_id', '=', 'acme').where('id', '=', 'org-1').execute();
      for (const node of [a, b]) {
        const res = await post(node, seller('c5'));
        expect(res.statusCode).toBe(403);
        expect(res.json().error).toBe('seller_org_not_allowed');
      }
    } finally {
      await db.updateTable('organizations').set({ active: 1, name: 'ООО «Ромашка»' }).where('team_id', '=', 'acme').where('id', '=', 'org-1').execute();
      await db.updateTable('bank_accounts').set({ bank_name: 'ПАО Сбербанк' }).where('team_id', '=', 'acme').where('id', '=', 'ba-1').execute();
    }
    for (const node of [b, a]) {
      expect((await createOk(node, seller('c6'))).invoice.seller).toMatchObject({ name: 'ООО «Ромашка»', bank_name: 'ПАО Сбербанк' });
    }
  });
});

describe("the seller's requisites come from the team's organizations as they are now (kept per catalog version)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it('shows a change of an organization or a bank account, made by hand in the database, on the very next write', async () => {
    const doc = (n: string) => ({ invoice: simpleDoc(n) });
    const first = await createOk(t, doc('c1'));
    expect(first.invoice.seller).toMatchObject({ kpp: '773601001', bank_name: 'ПАО Сбербанк', bik: '044525225' });
    // Not through the service: SQL by hand (any node, the bootstrap import, an operator).
    await t.db.db.updateTable('organizations').set({ kpp: '770101001', address: 'Казань' }).where('id', '=', 'org-1').execute();
    const second = await createOk(t, doc('c2'));
    expect(second.invoice.seller).toMatchObject({ kpp: '770101001', address: 'Казань', bank_name: 'ПАО Сбербанк' });
    await t.db.db.updateTable('bank_accounts').set({ bank_name: 'АО Банк', bik: '044525974' }).where('organization_id', '=', 'org-1').execute();
    const third = await createOk(t, doc('c3'));
    expect(third.invoice.seller).toMatchObject({ kpp: '770101001', bank_name: 'АО Банк', bik: '044525974' });
    // An update fills from the same current rows.
    const updated = await put(t, first.public_id, doc('c1'));
    expect(updated.statusCode).toBe(200);
    expect(updated.json().invoice.seller).toMatchObject({ kpp: '770101001', bank_name: 'АО Банк' });
    await t.db.db.updateTable('organizations').set({ active: 0 }).where('id', '=', 'org-1').execute();
    const refused = await post(t, doc('c4'));
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toBe('seller_org_not_allowed');
    await t.db.db.updateTable('organizations').set({ active: 1 }).where('id', '=', 'org-1').execute();
    expect((await post(t, doc('c5'))).statusCode).toBe(200);
  });
});
