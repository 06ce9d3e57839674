/**
 * PostgreSQL faults survived (operating contract, section 7): `invoicing serve` talks to
 * PostgreSQL through a TCP proxy the test controls. Stalled (connections kept, nothing answered)
 * or refused, a request is answered 503 `service_unavailable` with Retry-After within the connect
 * timeout plus one second, `/healthz` stays 200 and `/readyz` answers 503; connections dropped
 * under load do not end the process; when the database is back, requests succeed without a
 * restart and every create acknowledged before is still there. PostgreSQL pass only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usingPostgres } from '../helpers/db.js';
import { ACME_KEY, bootstrapFixture } from '../helpers/fixtures.js';
import { processFixture, until, type ServiceProcess } from '../helpers/process.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { simpleDoc } from '../modules/invoices/write-helpers.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 90_000 });

/** The connect timeout the service runs with here; the contract's bound is this plus one second. */
const CONNECT_TIMEOUT_MS = 1_000;
const BOUND_MS = CONNECT_TIMEOUT_MS + 1_000;

const fixture = processFixture('invoicing-pg-faults-');

describe.skipIf(!usingPostgres())('PostgreSQL stalled, refused and dropped under a running service', () => {
  let proxy: TcpProxy;
  let service: ServiceProcess;
  /** Every create the service acknowledged (2xx): its id and number. */
  const acknowledged: Array<{ id: string; number: string; page: string }> = [];
  let numbers = 0;

  const call = (method: string, url: string, body?: unknown) =>
    fetch(`${service.baseUrl}${url}`, {
      method,
      headers: { 'x-api-key': ACME_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** A create; acknowledged ones are remembered. */
  async function create(): Promise<Response> {
    const number = `PGF-${++numbers}`;
    const res = await call('POST', '/api/v1/invoices', simpleDoc(number));
    if (res.ok) {
      const body = (await res.clone().json()) as { public_id: string; invoice_url: string };
      acknowledged.push({ id: body.public_id, number, page: new URL(body.invoice_url).pathname });
    }
    return res;
  }

  /** The answer to `request` and how long it took. */
  async function timed(request: () => Promise<Response>): Promise<{ res: Response; ms: number; body: Record<string, unknown> }> {
    const started = performance.now();
    const res = await request();
    const body = (await res.json()) as Record<string, unknown>;
    return { res, ms: performance.now() - started, body };
  }

  function expectUnavailable(answer: { res: Response; ms: number; body: Record<string, unknown> }): void {
    expect(answer.res.status).toBe(503);
    expect(answer.body).toMatchObject({ ok: false, error: 'service_unavailable' });
    const retryAfter = Number(answer.res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
    expect(answer.body.retry_after_sec).toBe(retryAfter);
    expect(answer.ms).toBeLessThan(BOUND_MS);
  }

  /** Requests succeed again (the pool reconnects by itself). */
  async function expectBack(): Promise<void> {
    await until('a read to succeed again', async () => (await call('GET', `/api/v1/invoices/${acknowledged[0]!.id}`)).status === 200, 15_000);
    expect((await create()).status).toBe(200);
    expect((await fetch(`${service.baseUrl}/readyz`)).status).toBe(200);
  }

  beforeAll(async () => {
    const url = await fixture.freshDatabaseUrl();
    const server = new URL(url);
    proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
    const bootstrap = path.join(fixture.dir, 'bootstrap.json');
    fs.writeFileSync(bootstrap, JSON.stringify(bootstrapFixture()));
    service = await fixture.serve({
      DATABASE_URL: proxy.through(url),
      INVOICING_BOOTSTRAP_FILE: bootstrap,
      INVOICING_PROCESSES: '1',
      INVOICING_IP_RATE_PER_SEC: '100000',
      INVOICING_PG_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      INVOICING_PG_POOL_SIZE: '4',
    });
    await service.waitUntilHealthy();
    for (let i = 0; i < 3; i++) expect((await create()).status).toBe(200);
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('stalled: a read, a create and /readyz are answered 503 within the connect timeout plus 1 s, /healthz 200; back: served without a restart', async () => {
    proxy.stall();
    const page = fetch(`${service.baseUrl}${acknowledged[0]!.page}`);
    const [read, write, ready, health] = await Promise.all([
      timed(() => call('GET', `/api/v1/invoices/${acknowledged[0]!.id}`)),
      timed(() => create()),
      timed(() => fetch(`${service.baseUrl}/readyz`)),
      timed(() => fetch(`${service.baseUrl}/healthz`)),
    ]);
    // The share page: a page saying so, with Retry-After.
    const shown = await page;
    expect(shown.status).toBe(503);
    expect(shown.headers.get('retry-after')).toBe('2');
    expect(await shown.text()).toContain('Сервис временно недоступен');
    expectUnavailable(read);
    expectUnavailable(write);
    expect(ready.res.status).toBe(503);
    expect(ready.body).toMatchObject({ ok: false, error: 'not_ready' });
    expect(ready.ms).toBeLessThan(BOUND_MS);
    expect(health.res.status).toBe(200);
    expect(health.ms).toBeLessThan(500);
    // Still stalled: new connections are not answered either.
    expectUnavailable(await timed(() => call('GET', '/api/v1/invoices?limit=5')));
    await proxy.pass();
    await expectBack();
    expect(service.running).toBe(true);
  });

  it('refused: answered 503 within the bound, the process lives on; back: served without a restart', async () => {
    await proxy.refuse();
    expectUnavailable(await timed(() => call('GET', `/api/v1/invoices/${acknowledged[1]!.id}`)));
    expectUnavailable(await timed(() => create()));
    expect((await fetch(`${service.baseUrl}/readyz`)).status).toBe(503);
    expect((await fetch(`${service.baseUrl}/healthz`)).status).toBe(200);
    await proxy.pass();
    await expectBack();
    expect(service.running).toBe(true);
  });

  it('connections dropped under load: every request is answered (never a 500), the process lives on', async () => {
    const load = Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? create() : call('GET', `/api/v1/invoices/${acknowledged[i % 3]!.id}`)));
    await new Promise((r) => setTimeout(r, 20));
    proxy.drop();
    const statuses = (await Promise.all(load)).map((res) => res.status);
    for (const status of statuses) expect([200, 503]).toContain(status);
    await expectBack();
    expect(service.running).toBe(true);
    expect(service.stderr).not.toMatch(/Connection terminated|uncaught|unhandled/i);
  });

  it('every create acknowledged before, during or after the faults is still there', async () => {
    expect(acknowledged.length).toBeGreaterThanOrEqual(6);
    for (const { id, number } of acknowledged) {
      const res = await call('GET', `/api/v1/invoices/${id}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { invoice: { number: string } }).invoice.number).toBe(number);
    }
  });
});
