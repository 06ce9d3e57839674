/**
 * The error shape of everything the framework itself refuses (unknown route, wrong method,
 * bad JSON, wrong content type, empty body, 500), request ids and security headers on every
 * response (contract section 4, spec section 7).
 */
import { Type } from '@sinclair/typebox';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorResponses } from '../../src/shared/schemas.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME_KEY } from '../helpers/fixtures.js';

const CATALOG = '/api/v1/ref/catalog';
const INVOICES = '/api/v1/invoices';
/** A detail that must reach the log of a 500 and never its body. */
const INTERNAL_DETAIL = 'connection string postgres://admin:hunter2@db.internal/prod refused';

function expectSecurityHeaders(res: LightMyRequestResponse): void {
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  const csp = String(res.headers['content-security-policy'] ?? '');
  expect(csp).toMatch(/default-src 'none'/);
  expect(csp).toMatch(/frame-ancestors 'none'/);
  expect(String(res.headers['x-frame-options'] ?? '').toUpperCase()).toMatch(/^(DENY|SAMEORIGIN)$/);
}

function expectRequestId(res: LightMyRequestResponse): string {
  const id = res.headers['x-request-id'];
  expect(typeof id).toBe('string');
  expect(String(id)).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  return String(id);
}

describe('framework errors in the spec shape', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({
      beforeReady(app) {
        // A test-only route that fails the way a bug would, to see what a 500 leaks.
        app.get(
          '/test/boom',
          {
            schema: {
              operationId: 'testBoom',
              summary: 'Test-only failing route',
              description: 'Throws an unexpected error.',
              response: { 200: Type.Object({}, { description: 'Never sent.' }), ...errorResponses(500) },
            },
          },
          async () => {
            throw new Error(INTERNAL_DETAIL);
          },
        );
      },
    });
  });
  afterAll(async () => t.close());

  const post = (payload: string | Buffer | undefined, headers: Record<string, string> = {}) =>
    t.call({ method: 'POST', url: INVOICES, headers: { 'x-api-key': ACME_KEY, ...headers }, payload });

  it('answers an unknown route with 404 not_found', async () => {
    for (const url of ['/nope', '/api/v1/nothing-here', '/api/v2/invoices?api_key=secret']) {
      const res = await t.call({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(body).toMatchObject({ ok: false, error: 'not_found' });
      expect(Object.keys(body).sort()).toEqual(['details', 'error', 'ok']);
      // The query (which may carry a key) is never echoed back.
      expect(body.details).not.toContain('secret');
    }
  });

  it('answers a URL that is not valid percent-encoding with 400 invalid_request, with the usual headers', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/invoices/%E0%A4%A', headers: { 'x-request-id': 'bad-url-1' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ ok: false, error: 'invalid_request', details: expect.any(String) });
    expect(res.headers['x-request-id']).toBe('bad-url-1');
    expectSecurityHeaders(res);
  });

  it('answers a known path asked with another method with 405 method_not_allowed and Allow', async () => {
    for (const method of ['DELETE', 'PATCH', 'PUT', 'POST'] as const) {
      const res = await t.call({ method, url: CATALOG, headers: { 'x-api-key': ACME_KEY } });
      expect(res.statusCode, method).toBe(405);
      expect(res.json()).toMatchObject({ ok: false, error: 'method_not_allowed' });
      const allow = String(res.headers.allow ?? '')
        .split(',')
        .map((m) => m.trim());
      expect(allow).toContain('GET');
      expect(allow).not.toContain(method);
    }
    const openapi = await t.call({ method: 'DELETE', url: '/api/openapi.json' });
    expect(openapi.statusCode).toBe(405);
    expect(String(openapi.headers.allow)).toMatch(/GET/);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    for (const payload of ['{"invoice": ', '{number: 1}', "{'a': 1}", 'not json', '{"a":1}}']) {
      const res = await post(payload, { 'content-type': 'application/json' });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_json' });
      expect(typeof res.json().details).toBe('string');
    }
  });

  it('answers an empty JSON body with 400 invalid_json', async () => {
    const res = await post('', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid_json' });
  });

  it('answers a body that is not application/json with 400 invalid_content_type', async () => {
    const bodies: Array<[string, string]> = [
      ['text/plain', '{"invoice":{}}'],
      ['text/plain; charset=utf-8', 'hello'],
      ['application/x-www-form-urlencoded', 'invoice=1'],
      ['multipart/form-data; boundary=x', '--x--'],
      ['application/xml', '<invoice/>'],
    ];
    for (const [contentType, payload] of bodies) {
      const res = await post(payload, { 'content-type': contentType });
      expect(res.statusCode, contentType).toBe(400);
      expect(res.json(), contentType).toMatchObject({ ok: false, error: 'invalid_content_type' });
    }
  });

  it('rejects JSON that tries to pollute prototypes instead of parsing it', async () => {
    const res = await post('{"__proto__": {"polluted": true}, "invoice": {}}', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json().ok).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('puts X-Request-Id on every response: 200, 401, 404, 405, 400, 413, 429, 500', async () => {
    const limited = await buildTestApp({ env: { INVOICING_IP_RATE_PER_SEC: '1' } });
    try {
      const responses = [
        await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }),
        await t.call({ method: 'GET', url: CATALOG }),
        await t.call({ method: 'GET', url: '/nope' }),
        await t.call({ method: 'DELETE', url: CATALOG }),
        await post('{', { 'content-type': 'application/json' }),
        await post('{}', { 'content-type': 'application/json', 'content-length': '6000000' }),
        await t.call({ method: 'GET', url: '/test/boom' }),
        await t.call({ method: 'GET', url: '/api/v1/invoices/%E0%A4%A' }),
      ];
      // Two quick requests against a limit of 1 per second: the second (or, across a
      // second boundary, the third) is refused.
      let refused: LightMyRequestResponse | undefined;
      for (let i = 0; i < 3 && !refused; i++) {
        const res = await limited.call({ method: 'GET', url: '/healthz' });
        if (res.statusCode === 429) refused = res;
        else responses.push(res);
      }
      expect(refused?.statusCode).toBe(429);
      responses.push(refused as LightMyRequestResponse);
      expect(responses.map((r) => r.statusCode)).toEqual(expect.arrayContaining([200, 401, 404, 405, 400, 413, 429, 500]));
      const ids = responses.map(expectRequestId);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await limited.close();
    }
  });

  it('echoes a sane incoming X-Request-Id and replaces an insane one', async () => {
    const sane = 'req-2026.11.25:abc_DEF-123';
    const echoed = await t.call({ method: 'GET', url: '/healthz', headers: { 'x-request-id': sane } });
    expect(echoed.headers['x-request-id']).toBe(sane);
    const onError = await t.call({ method: 'GET', url: '/nope', headers: { 'x-request-id': sane } });
    expect(onError.headers['x-request-id']).toBe(sane);

    for (const insane of ['a'.repeat(300), 'has spaces in it', 'x"><script>', 'ключ', '']) {
      const res = await t.call({ method: 'GET', url: '/healthz', headers: { 'x-request-id': insane } });
      const id = expectRequestId(res);
      expect(id).not.toBe(insane);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('sends the security headers on JSON, error and documentation responses', async () => {
    expectSecurityHeaders(await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY } }));
    expectSecurityHeaders(await t.call({ method: 'GET', url: CATALOG }));
    expectSecurityHeaders(await t.call({ method: 'GET', url: '/nope' }));
    expectSecurityHeaders(await t.call({ method: 'GET', url: '/healthz' }));
    expectSecurityHeaders(await t.call({ method: 'GET', url: '/test/boom' }));
    const docs = await t.call({ method: 'GET', url: '/api/docs' });
    expect(docs.headers['x-content-type-options']).toBe('nosniff');
    expect(String(docs.headers['content-security-policy'] ?? '')).not.toBe('');
  });

  it('answers an unexpected failure with only internal_error and the request id; the detail goes to the log', async () => {
    const res = await t.call({ method: 'GET', url: '/test/boom', headers: { 'x-request-id': 'boom-1' } });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ ok: false, error: 'internal_error', request_id: 'boom-1' });
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('Error');
    const line = t.logs.find((l) => l.includes('boom-1') && l.includes('hunter2'));
    expect(line, 'the log line of the 500 with its detail').toBeDefined();
    const entry = JSON.parse(line as string);
    expect(entry.level).toBeGreaterThanOrEqual(50);
    expect(entry.request_id).toBe('boom-1');
    expect(entry.err.stack).toContain(INTERNAL_DETAIL);
  });
});
