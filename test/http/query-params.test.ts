/**
 * Query integers are decimal digits only and in range, and control
 * characters in query or path values are refused, on SQLite and on PostgreSQL alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME, createOk, simpleDoc } from '../modules/invoices/write-helpers.js';

describe('query and path parameters', () => {
  let t: TestApp;
  let publicId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    publicId = (await createOk(t, simpleDoc('q-1'))).public_id;
  });
  afterAll(async () => t.close());

  const list = (query: string) => t.call({ method: 'GET', url: `/api/v1/invoices?${query}`, headers: ACME });

  it.each([
    ['limit=0x10', 'limit'],
    ['limit=Infinity', 'limit'],
    ['limit=1e3', 'limit'],
    ['limit=%2B5', 'limit'],
    ['limit=%205', 'limit'],
    ['limit=5%20', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1.0', 'limit'],
    ['limit=', 'limit'],
    ['limit=99999999999999999999999', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['offset=0x1', 'offset'],
    ['offset=NaN', 'offset'],
  ])('%s is 400 invalid_query naming %s', async (query, name) => {
    const res = await list(query);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    expect(res.json().details).toContain(name);
  });

  it.each(['limit=0', 'limit=201', 'offset=10000001'])('%s (digits, out of range) is 400 invalid_query', async (query) => {
    const res = await list(query);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('invalid_query');
  });

  it('plain digits are accepted', async () => {
    const res = await list('limit=16&offset=0');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, limit: 16, offset: 0 });
  });

  it.each(['%00', 'a%00b', '%01', '%1F', '%7F', '%0A'])('a control character in q (%s) is 400 invalid_query', async (q) => {
    const res = await list(`q=${q}`);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid_query' });
    expect(res.json().details).toContain('"q"');
  });

  it.each(['GET', 'PUT'])('a control character in a path public_id (%s) is 400 invalid_request', async (method) => {
    for (const bad of [`${publicId}%00`, `abc%00def`, `x%0Ay`]) {
      const res = await t.call({
        method: method as 'GET',
        url: `/api/v1/invoices/${bad}`,
        headers: ACME,
        ...(method === 'PUT' ? { payload: { invoice: simpleDoc('q-1') } } : {}),
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_request' });
      expect(res.json().details).toContain('public_id');
    }
    const revisions = await t.call({ method: 'GET', url: `/api/v1/invoices/${publicId}%00/revisions`, headers: ACME });
    expect(revisions.statusCode).toBe(400);
  });
});
