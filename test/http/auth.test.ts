import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/shared/tokens.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME_INACTIVE_KEY, ACME_KEY, ACME_KEY_2, ACME_KEY_3, BETA_KEY, SERVICE_KEY } from '../helpers/fixtures.js';

const CATALOG = '/api/v1/ref/catalog';

describe('authentication (spec 5, contract 4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const teamOf = async (headers: Record<string, string>, url = CATALOG) => {
    const res = await t.call({ method: 'GET', url, headers });
    return { res, body: res.json() };
  };

  it('accepts the key in x-api-key, Authorization: Bearer and the api_key query parameter', async () => {
    const ways: Array<Record<string, string>> = [{ 'x-api-key': ACME_KEY }, { authorization: `Bearer ${ACME_KEY}` }];
    for (const headers of ways) {
      const { res, body } = await teamOf(headers);
      expect(res.statusCode).toBe(200);
      expect(body.organizations[0].id).toBe('org-1');
    }
    const { res, body } = await teamOf({}, `${CATALOG}?api_key=${ACME_KEY}`);
    expect(res.statusCode).toBe(200);
    expect(body.organizations[0].id).toBe('org-1');
  });

  it('uses the first way present: x-api-key, then Bearer, then query', async () => {
    // x-api-key wins over a valid Bearer: an invalid x-api-key is refused.
    let r = await teamOf({ 'x-api-key': 'nope-nope', authorization: `Bearer ${ACME_KEY}` });
    expect(r.res.statusCode).toBe(401);
    expect(r.body.code).toBe('api_key_invalid');
    // x-api-key of beta wins over Bearer of acme.
    r = await teamOf({ 'x-api-key': BETA_KEY, authorization: `Bearer ${ACME_KEY}` });
    expect(r.body.organizations[0].id).toBe('b-org');
    // Bearer wins over the query.
    r = await teamOf({ authorization: `Bearer ${BETA_KEY}` }, `${CATALOG}?api_key=${ACME_KEY}`);
    expect(r.body.organizations[0].id).toBe('b-org');
    r = await teamOf({ authorization: 'Bearer wrong-key' }, `${CATALOG}?api_key=${ACME_KEY}`);
    expect(r.body.code).toBe('api_key_invalid');
  });

  it('answers 401 api_key_missing without a key, with the spec shape', async () => {
    const { res, body } = await teamOf({});
    expect(res.statusCode).toBe(401);
    expect(body).toMatchObject({ ok: false, error: 'unauthorized', code: 'api_key_missing' });
    expect(typeof body.details).toBe('string');
    // Another Authorization scheme is not an API key.
    const basic = await teamOf({ authorization: 'Basic dXNlcjpwYXNz' });
    expect(basic.body.code).toBe('api_key_missing');
  });

  it('refuses a key in the query for a write with api_key_missing and says why', async () => {
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/invoices?api_key=${ACME_KEY}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'unauthorized', code: 'api_key_missing' });
    expect(res.json().details).toMatch(/GET/);
  });

  it('distinguishes invalid, inactive and over-tariff keys', async () => {
    expect((await teamOf({ 'x-api-key': 'ak_unknown' })).body.code).toBe('api_key_invalid');
    expect((await teamOf({ 'x-api-key': ACME_INACTIVE_KEY })).body.code).toBe('api_key_inactive');
    // basic allows 2 active keys: 101 and 102 pass, 103 is beyond the limit.
    expect((await teamOf({ 'x-api-key': ACME_KEY_2 })).res.statusCode).toBe(200);
    const over = await teamOf({ 'x-api-key': ACME_KEY_3 });
    expect(over.res.statusCode).toBe(401);
    expect(over.body).toMatchObject({ error: 'unauthorized', code: 'api_key_over_tariff_limit' });
  });

  it('binds a team key to its team: x-tenant-id of another team is 403', async () => {
    expect((await teamOf({ 'x-api-key': ACME_KEY, 'x-tenant-id': 'acme' })).res.statusCode).toBe(200);
    const other = await teamOf({ 'x-api-key': ACME_KEY, 'x-tenant-id': 'beta' });
    expect(other.res.statusCode).toBe(403);
    expect(other.body).toMatchObject({ ok: false, error: 'tenant_scope_not_resolved' });
  });

  it('scopes a service key by x-tenant-id, and refuses it without one or with an unknown team', async () => {
    const beta = await teamOf({ 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'beta' });
    expect(beta.res.statusCode).toBe(200);
    expect(beta.body.organizations.map((o: { id: string }) => o.id)).toEqual(['b-org']);
    const none = await teamOf({ 'x-api-key': SERVICE_KEY });
    expect(none.res.statusCode).toBe(403);
    expect(none.body.error).toBe('tenant_scope_not_resolved');
    const unknown = await teamOf({ 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'nobody' });
    expect(unknown.res.statusCode).toBe(403);
    expect(unknown.body.error).toBe('tenant_scope_not_resolved');
  });

  it('recognises the demo token and serves the sample catalog', async () => {
    const { res, body } = await teamOf({ 'x-api-key': 'demo-token' });
    expect(res.statusCode).toBe(200);
    expect(body.demo_mode).toBe(true);
    expect(body.organizations[0].inn).toBe('7707083893');
  });

  it('stores only hashes of secrets', async () => {
    const rows = await t.db.db.selectFrom('api_keys').selectAll().execute();
    const acme = rows.find((r) => r.id === 101);
    expect(acme?.secret_hash).toBe(hashSecret(ACME_KEY));
    expect(JSON.stringify(rows)).not.toContain(ACME_KEY);
  });

  it('refuses a deactivated key on the very next request, though it was just served', async () => {
    const { res } = await teamOf({ 'x-api-key': ACME_KEY_2 });
    expect(res.statusCode).toBe(200);
    await t.db.db.updateTable('api_keys').set({ active: 0 }).where('id', '=', 102).execute();
    const after = await teamOf({ 'x-api-key': ACME_KEY_2 });
    expect(after.body.code).toBe('api_key_inactive');
    await t.db.db.updateTable('api_keys').set({ active: 1 }).where('id', '=', 102).execute();
  });

  it('leaves the OpenAPI routes open', async () => {
    expect((await t.call({ method: 'GET', url: '/api/openapi.json' })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/openapi.yaml' })).statusCode).toBe(200);
  });
});
