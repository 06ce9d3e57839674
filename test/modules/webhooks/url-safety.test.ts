/**
 * Contract 7, webhook URLs: a refusal names the rule, never the address a host resolved to (no
 * DNS oracle), `::/96` and IPv4-mapped forms are judged by what they reach, name resolution is
 * bounded in time (INVOICING_WEBHOOK_DNS_TIMEOUT_MS) and in concurrent look-ups, and the demo
 * token never reaches DNS. The system resolver is replaced by a table (and by a name server that
 * never answers) through the module's `lookup` dependency; connections are real sockets.
 */
import type dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { HostResolver, type LookupFunction } from '../../../src/modules/webhooks/host-resolver.js';
import { postWebhook } from '../../../src/modules/webhooks/http-post.js';
import { checkWebhookUrl, refusedAddress } from '../../../src/modules/webhooks/url-safety.js';
import { ACME } from '../invoices/write-helpers.js';
import { closedPort } from './receiver.js';

const NAMES: Record<string, string> = {
  'intranet.example': '10.20.30.40',
  'metadata.example': '169.254.169.254',
  'compat.example': '::a14:1e28',
  'mapped.example': '::ffff:10.20.30.40',
  'loop.example': '127.0.0.1',
};
/** Names that never resolve: a name server that does not answer. */
const HANGING = new Set(['slow.example', 'slow2.example', 'slow3.example', 'slow4.example']);
const asked: string[] = [];

/** A system resolver answering from NAMES, never answering HANGING names in time; counts look-ups under way. */
function tableLookup() {
  const stats = { inFlight: 0, maxInFlight: 0 };
  const fn: LookupFunction = (hostname, _options, callback) => {
    asked.push(hostname);
    if (HANGING.has(hostname)) {
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      // Answers long after every timeout of this file, as a dead name server eventually does.
      setTimeout(() => {
        stats.inFlight--;
        callback(Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' }), []);
      }, 3_000).unref();
      return;
    }
    const address = NAMES[hostname];
    if (!address) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, [{ address, family: address.includes(':') ? 6 : 4 } as dns.LookupAddress]);
  };
  return { fn, stats };
}
const lookup = tableLookup().fn;

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: { INVOICING_WEBHOOK_ALLOW_HTTP: 'true', INVOICING_WEBHOOK_DNS_TIMEOUT_MS: '300' }, webhooks: { lookup, policy: { pollIntervalMs: 60_000 } } });
});
afterAll(async () => {
  await t.close();
});

const create = (url: string, headers: Record<string, string> = ACME) =>
  t.call({ method: 'POST', url: '/api/v1/webhook_endpoints', headers, payload: { url } });

describe('webhook URL refusals', () => {
  it('names the rule, never the address a host resolves to', async () => {
    const cases: Array<[string, RegExp, string]> = [
      ['https://intranet.example/hook', /^the host resolves to a private address/, '10.20.30.40'],
      ['https://metadata.example/hook', /^the host resolves to a link-local address/, '169.254.169.254'],
      ['https://compat.example/hook', /^the host resolves to an IPv4-compatible IPv6 address \(::\/96\)/, 'a14'],
      ['https://mapped.example/hook', /^the host resolves to a private address/, '10.20.30.40'],
      ['http://loop.example:8080/hook', /^the host resolves to a loopback address/, '127.0.0.1'],
    ];
    for (const [url, rule, address] of cases) {
      const res = await create(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toBe('invalid_webhook_url');
      expect(res.json().details, url).toMatch(rule);
      expect(res.body, url).not.toContain(address);
    }
  });

  it('refuses ::/96 and judges IPv4-mapped and NAT64 forms by the IPv4 address they carry', () => {
    const none = { allowPrivate: [] as string[] };
    expect(refusedAddress('::7f00:1', none)).toBe('an IPv4-compatible IPv6 address (::/96)');
    expect(refusedAddress('::808:808', none)).toBe('an IPv4-compatible IPv6 address (::/96)');
    expect(refusedAddress('::ffff:127.0.0.1', none)).toBe('a loopback address');
    expect(refusedAddress('::ffff:a9fe:a9fe', none)).toBe('a link-local address');
    expect(refusedAddress('64:ff9b::a9fe:a9fe', none)).toBe('an IPv6 address that embeds an IPv4 address');
    expect(refusedAddress('8.8.8.8', none)).toBeNull();
    expect(refusedAddress('::ffff:8.8.8.8', none)).toBeNull();
    expect(refusedAddress('2a00:1450:4010:c05::64', none)).toBeNull();
    // The operator's allow list wins, in either form.
    expect(refusedAddress('::ffff:10.20.30.40', { allowPrivate: ['10.0.0.0/8'] })).toBeNull();
  });

  it('a refusal at delivery time and a failed connection name no address either', async () => {
    const resolver = new HostResolver({ timeoutMs: 300, lookup });
    const refused = await postWebhook('http://intranet.example/hook', {}, '{}', { timeoutMs: 2_000, policy: { allowHttp: true, allowPrivate: [] }, resolver });
    expect(refused.error).toBe('refused: the host resolves to a private address (not allowed for webhooks)');
    const port = await closedPort();
    const closed = await postWebhook(`http://loop.example:${port}/hook`, {}, '{}', { timeoutMs: 2_000, policy: { allowHttp: true, allowPrivate: ['127.0.0.1'] }, resolver });
    expect(closed.error).toBe('ECONNREFUSED: the connection was refused');
  });
});

describe('bounded name resolution', () => {
  it('answers within the timeout when the name server does not (accepted: checked again at every delivery)', async () => {
    const started = Date.now();
    const res = await create('https://slow.example/hook');
    const took = Date.now() - started;
    expect(res.statusCode, res.body).toBe(201);
    expect(took).toBeLessThan(1_500);
    await t.call({ method: 'DELETE', url: `/api/v1/webhook_endpoints/${res.json().endpoint.id}`, headers: ACME });
  });

  it('runs at most 2 look-ups at once; others wait within the same timeout, and a full queue is refused at once', async () => {
    const counted = tableLookup();
    const resolver = new HostResolver({ timeoutMs: 300, lookup: counted.fn, maxWaiting: 1 });
    const started = Date.now();
    const results = await Promise.allSettled(['slow.example', 'slow2.example', 'slow3.example', 'slow4.example'].map((h) => resolver.resolve(h)));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(counted.stats.maxInFlight).toBe(2);
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok'));
    expect(codes.sort()).toEqual(['EBUSY', 'ETIMEOUT', 'ETIMEOUT', 'ETIMEOUT']);
    // An attempt to a name that does not resolve in time fails in time, and is retried later.
    const attempt = await postWebhook('https://slow.example/hook', {}, '{}', { timeoutMs: 5_000, policy: { allowHttp: true, allowPrivate: [] }, resolver: new HostResolver({ timeoutMs: 200, lookup }) });
    expect(attempt.error).toMatch(/^ETIMEOUT: the host name did not resolve within 200 ms/);
    expect(attempt.durationMs).toBeLessThan(1_500);
  });

  it('never asks DNS for the demo token (a dry-run checks the URL’s form only)', async () => {
    asked.length = 0;
    const res = await create('https://demo-only.example/hook', { 'x-api-key': 'demo-token' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().demo_mode).toBe(true);
    expect(asked).toEqual([]);
    // A literal private address needs no DNS and is still refused.
    expect((await create('https://10.0.0.1/hook', { 'x-api-key': 'demo-token' })).statusCode).toBe(400);
    await expect(checkWebhookUrl('https://intranet.example/x', { allowHttp: false, allowPrivate: [] }, new HostResolver({ timeoutMs: 300, lookup }))).rejects.toThrow(
      /private address/,
    );
  });
});
