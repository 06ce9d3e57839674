/**
 * INVOICING_TRUST_PROXY takes a hop count or the proxies' addresses, never
 * "every hop": a client cannot pick its own address with X-Forwarded-For to escape the per-IP
 * limit, and X-Forwarded-Host reaches stored data only from a trusted proxy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME_KEY } from '../helpers/fixtures.js';
import { simpleDoc } from '../modules/invoices/write-helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Statuses of `n` catalog reads, each claiming another client address on the left of X-Forwarded-For. */
async function spoofedReads(app: TestApp, n: number, remoteAddress: string, realClient: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await app.app.inject({
      method: 'GET',
      url: '/api/v1/ref/catalog',
      remoteAddress,
      headers: { 'x-api-key': ACME_KEY, 'x-forwarded-for': `198.51.100.${i + 1}, ${realClient}` },
    });
    statuses.push(res.statusCode);
  }
  return statuses;
}

describe('INVOICING_TRUST_PROXY', () => {
  it('true is one hop: the client is the rightmost X-Forwarded-For address, whatever it puts on the left', async () => {
    t = await buildTestApp({ env: { INVOICING_TRUST_PROXY: 'true', INVOICING_IP_RATE_PER_SEC: '3' } });
    const statuses = await spoofedReads(t, 6, '127.0.0.1', '203.0.113.5');
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toContain(429);
  });

  it('a hop count N takes the N-th address from the right', async () => {
    t = await buildTestApp({ env: { INVOICING_TRUST_PROXY: '2', INVOICING_IP_RATE_PER_SEC: '3' } });
    // Two proxies: the client is the second address from the right; the leftmost is the client's own claim.
    const statuses = await spoofedReads(t, 6, '127.0.0.1', '203.0.113.5, 10.0.0.7');
    expect(statuses.slice(3)).toContain(429);
  });

  it('a list trusts only those proxies: from any other peer X-Forwarded-For and X-Forwarded-Host are ignored', async () => {
    t = await buildTestApp({ env: { INVOICING_TRUST_PROXY: '10.0.0.0/8', INVOICING_IP_RATE_PER_SEC: '3' } });
    // Through the trusted proxy: the client behind it is limited on its own address.
    expect((await spoofedReads(t, 6, '10.1.2.3', '203.0.113.5')).slice(3)).toContain(429);

    const direct = await t.app.inject({
      method: 'POST',
      url: '/api/v1/invoices',
      remoteAddress: '192.0.2.10',
      headers: { 'x-api-key': ACME_KEY, host: 'api.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-for': '198.51.100.1' },
      payload: simpleDoc('tp-1') as never,
    });
    expect(direct.statusCode).toBe(200);
    const body = direct.json();
    expect(JSON.stringify(body)).not.toContain('evil.example');
    expect(body.api.request_host).toBe('api.example');

    const proxied = await t.app.inject({
      method: 'POST',
      url: '/api/v1/invoices',
      remoteAddress: '10.0.0.2',
      headers: { 'x-api-key': ACME_KEY, host: 'internal:8080', 'x-forwarded-host': 'api.example', 'x-forwarded-for': '198.51.100.1' },
      payload: simpleDoc('tp-2') as never,
    });
    expect(proxied.json().api.request_host).toBe('api.example');
  });

  it('false ignores X-Forwarded-For and X-Forwarded-Host altogether', async () => {
    t = await buildTestApp({ env: { INVOICING_IP_RATE_PER_SEC: '3' } });
    expect((await spoofedReads(t, 6, '127.0.0.1', '203.0.113.5')).slice(3)).toContain(429);
  });
});
