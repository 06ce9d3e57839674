import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME_KEY, BETA_KEY } from '../../helpers/fixtures.js';

describe('GET /api/v1/ref/catalog (spec 2.5)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it("returns the caller's organizations with within_tariff_limit, accounts, managers, signers and enums", async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/ref/catalog', headers: { 'x-api-key': ACME_KEY } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.ok).toBe(true);
    // basic allows one organization: org-1 is within, org-2 (active, second) is not, org-3 is inactive.
    expect(body.organizations.map((o: { id: string; within_tariff_limit: boolean; active: boolean }) => [o.id, o.active, o.within_tariff_limit])).toEqual([
      ['org-1', true, true],
      ['org-2', true, false],
      ['org-3', false, false],
    ]);
    expect(body.bank_accounts).toEqual([
      {
        id: 'ba-1',
        organization_id: 'org-1',
        bank_name: 'ПАО Сбербанк',
        bik: '044525225',
        account: '40702810938000000001',
        corr_account: '30101810400000000225',
        is_default: true,
      },
    ]);
    expect(body.managers[0]).toMatchObject({ id: 'm-1', name: 'Иван Петров' });
    expect(body.signers[0]).toMatchObject({ id: 's-1', position: 'Генеральный директор', role: 'director' });
    expect(body.enums.currencies.map((c: { code: string }) => c.code)).toEqual(['RUB', 'USD', 'EUR', 'CNY', 'KZT', 'BYN']);
    expect(body.enums.seller_statuses).toContainEqual({ value: 'issued', label: 'Выставлен' });
    expect(body.enums.buyer_statuses).toContainEqual({ value: 'payment_reported', label: 'Сообщил об оплате' });
    expect(body.enums.service_statuses).toContainEqual({ value: 'restricted', label: 'Ограничен' });
    expect(body.enums.units).toContainEqual({ code: 'шт', okei: '796', name: 'Штука' });
    expect(body.enums.vat_rates).toContainEqual({ value: null, label: 'Без НДС' });
  });

  it("never shows another team's data", async () => {
    const acme = (await t.call({ method: 'GET', url: '/api/v1/ref/catalog', headers: { 'x-api-key': ACME_KEY } })).json();
    const beta = (await t.call({ method: 'GET', url: '/api/v1/ref/catalog', headers: { 'x-api-key': BETA_KEY } })).json();
    expect(beta.organizations.map((o: { id: string }) => o.id)).toEqual(['b-org']);
    expect(beta.bank_accounts).toEqual([]);
    expect(beta.managers.map((m: { id: string }) => m.id)).toEqual(['bm-1']);
    expect(beta.signers).toEqual([]);
    expect(JSON.stringify(beta)).not.toContain('Ромашка');
    expect(JSON.stringify(acme)).not.toContain('Бета');
  });
});
