/**
 * No secret is ever written to the log (CONVENTIONS rule 13): API keys in x-api-key, in
 * Authorization: Bearer and in the api_key query parameter, valid or not, the bootstrap
 * secrets and the demo token; while the request lines themselves are logged.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/http/logging.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME_INACTIVE_KEY, ACME_KEY, ACME_KEY_2, ACME_KEY_3, BETA_KEY, SERVICE_KEY } from '../helpers/fixtures.js';

const CATALOG = '/api/v1/ref/catalog';
const DEMO_TOKEN = 'demo-token-for-logging-test-7f3a';
/** Secrets nobody has registered: refused, and still not to be logged. */
const UNKNOWN = ['ak_unknown_secret_9f8e7d6c', 'sk_forged_service_5a4b3c2d'];
const FIXTURE_SECRETS = [ACME_KEY, ACME_KEY_2, ACME_KEY_3, ACME_INACTIVE_KEY, BETA_KEY, SERVICE_KEY];
/** Share and portal links carry their token in the path. */
const PATH_TOKENS = ['shareTokAbcDEF0123456789', 'lowercasesharetokenxyz', 'portalTok.eyJwIjoiMSJ9.sig_ABC'];
const ALL_SECRETS = [...FIXTURE_SECRETS, ...UNKNOWN, DEMO_TOKEN];

interface LogEntry {
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
}

describe('logging never writes a secret', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_DEMO_TOKEN: DEMO_TOKEN } });
    const get = (url: string, headers: Record<string, string> = {}) => t.call({ method: 'GET', url, headers });
    const post = (url: string, headers: Record<string, string>, payload = '{"invoice":') =>
      t.call({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });

    for (const secret of ALL_SECRETS) {
      await get(CATALOG, { 'x-api-key': secret });
      await get(CATALOG, { authorization: `Bearer ${secret}` });
      await get(`${CATALOG}?api_key=${secret}`);
      await get(`${CATALOG}?limit=5&api_key=${encodeURIComponent(secret)}&x=1`);
      // The name of the parameter percent-encoded: still the api_key parameter to the parser.
      await get(`${CATALOG}?api%5Fkey=${secret}`);
      await get(`${CATALOG}?API_KEY=${secret}`);
      // Several ways at once, with a tenant header; an unknown route; a write refused in many ways.
      await get(`${CATALOG}?api_key=${secret}`, { 'x-api-key': secret, authorization: `Bearer ${secret}`, 'x-tenant-id': 'beta' });
      await get(`/api/v1/nothing-here?api_key=${secret}`, { 'x-api-key': secret });
      await get(`/api/v1/invoices/does-not-exist-0001?api_key=${secret}`);
      await post(`/api/v1/invoices?api_key=${secret}`, {});
      await post('/api/v1/invoices', { 'x-api-key': secret });
      await post('/api/v1/invoices', { authorization: `Bearer ${secret}` }, JSON.stringify({ api_key: secret, secret }));
      await t.call({ method: 'DELETE', url: `${CATALOG}?api_key=${secret}`, headers: { 'x-api-key': secret } });
      // A URL the router refuses before any hook runs.
      await get(`/api/v1/invoices/%E0%A4%A?api_key=${secret}`, { 'x-api-key': secret });
    }
    for (const token of PATH_TOKENS) {
      for (const url of [`/s/${token}`, `/s/${token}/document.pdf`, `/s/${token}/qr.png`, `/portal/view/${token}`, `/portal/document/edit/${token}`]) {
        await t.app.inject({ method: 'GET', url });
      }
      // However the path is written: percent-encoded (the router decodes `/%73/` to `/s/`),
      // doubled slashes, upper case, a trailing slash, a query, a dot segment.
      const first = `%${token.charCodeAt(0).toString(16).toUpperCase()}${token.slice(1)}`;
      for (const url of [`/%73/${token}`, `/s/${first}`, `/%2573/${first}/document.pdf`, `//s//${token}`, `/S/${token}`, `/s/${token}/`,
        `/s/${token}?utm=1`, `/s%2F${token}`, `/x/../s/${token}`, `/%70ortal/%76iew/${token}`, `/portal/VIEW/${first}/`]) {
        await t.app.inject({ method: 'GET', url });
      }
    }
  });
  afterAll(async () => t.close());

  it('logs the requests, with the api_key value redacted', () => {
    const entries = t.logs.map((line) => JSON.parse(line) as LogEntry);
    const incoming = entries.filter((e) => e.msg === 'incoming request');
    expect(incoming.length).toBeGreaterThanOrEqual(ALL_SECRETS.length * 14);
    // Every routed request is logged when it completes too (a URL the router refuses has no
    // completion line: Fastify runs no hooks for it).
    expect(entries.filter((e) => e.msg === 'request completed').length).toBeGreaterThanOrEqual(ALL_SECRETS.length * 13);
    const urls = incoming.map((e) => e.req?.url ?? '');
    expect(urls).toContain(`${CATALOG}?api_key=[REDACTED]`);
    expect(urls).toContain(`${CATALOG}?limit=5&api_key=[REDACTED]&x=1`);
    expect(urls).toContain(`${CATALOG}?API_KEY=[REDACTED]`);
    expect(urls).toContain(CATALOG);
    expect(urls).toContain('/api/v1/invoices');
    expect(urls).toContain('/s/[REDACTED]');
    expect(urls).toContain('/portal/document/edit/[REDACTED]');
    expect(urls).toContain('/s/[REDACTED]?utm=1');
    expect(urls).toContain('/portal/view/[REDACTED]');
  });

  it('writes no secret anywhere in the log, in any form', () => {
    const log = t.logs.join('\n');
    for (const secret of [...ALL_SECRETS, ...PATH_TOKENS]) {
      expect(log, secret).not.toContain(secret);
      expect(log, secret).not.toContain(encodeURIComponent(secret));
      expect(log, secret).not.toContain(Buffer.from(secret).toString('base64'));
    }
    // Not even a token's rest after a percent-encoded first character.
    for (const token of PATH_TOKENS) expect(log, token).not.toContain(token.slice(1));
    // Headers carrying secrets are not logged at all (or only redacted).
    expect(log.toLowerCase()).not.toMatch(/"(x-api-key|authorization)":"(?!\[redacted\])/);
  });
});

describe('the request lines', () => {
  it('are the lines pino writes for them, byte for byte but the time', async () => {
    const t = await buildTestApp();
    try {
      const id = 'line-check-1';
      const res = await t.call({ method: 'GET', url: `${CATALOG}?limit=5&api_key=${ACME_KEY}`, headers: { 'x-request-id': id, host: 'api.example:8443' } });
      expect(res.statusCode).toBe(200);
      const lines = t.logs.filter((line) => line.includes(`"request_id":"${id}"`));
      expect(lines).toHaveLength(2);
      const [incoming, completed] = lines as [string, string];
      const responseTime = (JSON.parse(completed) as { responseTime: number }).responseTime;

      // The same lines through pino, with the app's options and a child bound to the request id.
      const written: string[] = [];
      const stream = new Writable({
        write(chunk, _enc, done) {
          written.push(String(chunk).trimEnd());
          done();
        },
      });
      const child = pino(loggerOptions('info'), stream).child({ request_id: id });
      child.info({ req: { method: 'GET', url: `${CATALOG}?limit=5&api_key=${ACME_KEY}`, headers: { host: 'api.example:8443' }, ip: '127.0.0.1' } }, 'incoming request');
      child.info({ res: { statusCode: 200 }, responseTime }, 'request completed');
      await new Promise((resolve) => setImmediate(resolve));
      const noTime = (line: string) => line.replace(/"time":\d+/, '"time":0');
      expect(written.map(noTime)).toEqual([noTime(incoming), noTime(completed)]);
      expect(incoming).toContain('api_key=[REDACTED]');
    } finally {
      await t.close();
    }
  });

  it('follow LOG_LEVEL: none written at warn', async () => {
    const t = await buildTestApp({ env: { LOG_LEVEL: 'warn' } });
    try {
      await t.call({ method: 'GET', url: CATALOG, headers: { 'x-api-key': ACME_KEY, 'x-request-id': 'quiet-1' } });
      expect(t.logs.filter((line) => line.includes('quiet-1'))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
