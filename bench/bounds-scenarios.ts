/**
 * Bounds under abuse and faults, as bench scenarios (docs/security.md). Each runs only when named:
 *
 *   BENCH_SCENARIOS=baseline,invoice-get,memory-large-documents npm run bench
 *     500 documents of ~1 MB read once each, over and over: the service's RSS after stays within
 *     its cache budgets (INVOICING_READ_CACHE_MB + INVOICING_REFERENCE_CACHE_MB +
 *     INVOICING_RENDER_CACHE_MB) plus the RSS it had before (a fixed overhead).
 *   BENCH_DOCS=1000000 INVOICING_PROCESSES=1 BENCH_SCENARIOS=baseline,invoice-get,read-under-hostile-reads npm run bench
 *     GET of one document while hostile searches (q of one and two characters, a rare trigram),
 *     deep pages and rare event-type filters run at once: its p99, and the event loop's delay
 *     histogram over the run (prom-client's, from /metrics; one API process, so one loop).
 *   BENCH_SCENARIOS=baseline,invoice-create,create-with-dead-webhook npm run bench
 *     creates while a webhook endpoint that accepts connections and never answers receives
 *     every event: p99 against the plain create's.
 */
import net from 'node:net';
import autocannon from 'autocannon';
import type { BenchContext, Scenario } from './scenario.js';
import { documentBody, ensureSeededVolume } from './list-scenarios.js';

/** The event loop's delay over a scenario: prom-client's histogram, reset by the read before it. */
async function eventLoopDelay(serviceUrl: string): Promise<Record<string, number | null>> {
  const text = await (await fetch(`${serviceUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const read = (name: string): number | null => {
    const match = new RegExp(`^invoicing_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text);
    return match ? Math.round(Number(match[1]) * 1000 * 10) / 10 : null;
  };
  return { eventloop_p50_ms: read('p50'), eventloop_p90_ms: read('p90'), eventloop_p99_ms: read('p99'), eventloop_max_ms: read('max') };
}

const LARGE_DOCS = 500;
const largeIds: string[] = [];

/** A document of about 1 MB: 500 items of 1,000 Cyrillic characters (2 bytes each in UTF-8). */
function largeBody(ctx: BenchContext, i: number): string {
  const items = Array.from({ length: 500 }, (_, j) => ({ name: `Позиция ${j} `.padEnd(1000, 'ж'), qty: 1, price: 10, vat_pct: 22 }));
  return JSON.stringify({ ...documentBody(ctx.sellerInn, `LARGE-${i}`), items });
}

export const memoryLargeDocuments: Scenario = {
  name: 'memory-large-documents',
  target: 'service',
  method: 'GET',
  path: '/api/v1/invoices/{each of 500 documents of 1 MB}',
  onlyWhenNamed: true,
  // Each document is read more than once within the measurement (about 15 ms of CPU a read).
  durationSec: 30,
  setup: async (ctx) => {
    memoryLargeDocuments.headers = { 'x-api-key': ctx.apiKey };
    for (let i = largeIds.length; i < LARGE_DOCS; i++) {
      const res = await fetch(`${ctx.serviceUrl}/api/v1/invoices`, {
        method: 'POST',
        headers: { 'x-api-key': ctx.apiKey, 'content-type': 'application/json' },
        body: largeBody(ctx, i),
      });
      if (res.status !== 200) throw new Error(`creating a large document answered ${res.status}: ${await res.text()}`);
      largeIds.push(((await res.json()) as { public_id: string }).public_id);
    }
  },
  requests: () => {
    let n = 0;
    return [{ setupRequest: (request) => ({ ...request, path: `/api/v1/invoices/${largeIds[n++ % largeIds.length]}` }) }];
  },
};

let hostile: { instance: autocannon.Instance; done: Promise<autocannon.Result> } | null = null;

/** The hostile reads, in turn: each walks many rows whatever index serves it. */
function hostilePaths(): string[] {
  return [
    '/api/v1/invoices?q=a',
    '/api/v1/invoices?q=%D0%BE',
    '/api/v1/invoices?q=ab',
    '/api/v1/invoices?q=%D0%BE%D0%BE',
    '/api/v1/invoices?q=zzz',
    '/api/v1/invoices?offset=900000&limit=200',
    '/api/v1/invoices?offset=500000&limit=200&q=%D0%BE%D0%BE%D0%BE',
    '/api/v1/events?types=webhook_endpoint.disabled&limit=200',
  ];
}

export const readUnderHostileReads: Scenario = {
  name: 'read-under-hostile-reads',
  target: 'service',
  method: 'GET',
  path: '/api/v1/invoices/{id}',
  onlyWhenNamed: true,
  setup: async (ctx) => {
    const { templateId } = await ensureSeededVolume(ctx);
    readUnderHostileReads.path = `/api/v1/invoices/${templateId}`;
    readUnderHostileReads.headers = { 'x-api-key': ctx.apiKey };
  },
  before: async (ctx) => {
    await eventLoopDelay(ctx.serviceUrl);
    const paths = hostilePaths();
    let n = 0;
    // Ten connections of hostile reads for as long as the measurement runs (stopped in `after`).
    let finish: (result: autocannon.Result) => void = () => undefined;
    const done = new Promise<autocannon.Result>((resolve) => (finish = resolve));
    const instance = autocannon(
      {
        url: ctx.serviceUrl,
        connections: 10,
        duration: 3600,
        headers: { 'x-api-key': ctx.apiKey },
        requests: [{ setupRequest: (request) => ({ ...request, method: 'GET', path: paths[n++ % paths.length] as string }) }],
      },
      (_err, result) => finish(result),
    );
    hostile = { instance, done };
  },
  after: async (ctx) => {
    const load = hostile;
    hostile = null;
    const delay = await eventLoopDelay(ctx.serviceUrl);
    if (load === null) return delay;
    load.instance.stop();
    const result = await load.done;
    return {
      ...delay,
      hostile_requests: result.requests.total,
      hostile_p99_ms: result.latency.p99,
      hostile_non_2xx: result.non2xx,
    };
  },
};

let deadReceiver: net.Server | null = null;
let deadEndpointId: string | null = null;

export const createWithDeadWebhook: Scenario = {
  name: 'create-with-dead-webhook',
  target: 'service',
  method: 'POST',
  path: '/api/v1/invoices',
  onlyWhenNamed: true,
  setup: async (ctx) => {
    await ensureSeededVolume(ctx);
    createWithDeadWebhook.headers = { 'x-api-key': ctx.apiKey };
    createWithDeadWebhook.body = JSON.stringify(documentBody(ctx.sellerInn, 'DEAD-WEBHOOK'));
  },
  before: async (ctx) => {
    // Accepts every connection and never answers a byte.
    const sockets = new Set<net.Socket>();
    deadReceiver = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    });
    deadReceiver.on('close', () => {
      for (const s of sockets) s.destroy();
    });
    await new Promise<void>((resolve) => deadReceiver?.listen(0, '127.0.0.1', resolve));
    const port = (deadReceiver.address() as net.AddressInfo).port;
    const res = await fetch(`${ctx.serviceUrl}/api/v1/webhook_endpoints`, {
      method: 'POST',
      headers: { 'x-api-key': ctx.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, events: ['*'] }),
    });
    if (res.status !== 201) throw new Error(`registering the dead webhook answered ${res.status}: ${await res.text()}`);
    deadEndpointId = ((await res.json()) as { endpoint: { id: string } }).endpoint.id;
    return {};
  },
  after: async (ctx) => {
    if (deadEndpointId !== null) {
      await fetch(`${ctx.serviceUrl}/api/v1/webhook_endpoints/${deadEndpointId}`, { method: 'DELETE', headers: { 'x-api-key': ctx.apiKey } });
      deadEndpointId = null;
    }
    await new Promise<void>((resolve) => (deadReceiver ? deadReceiver.close(() => resolve()) : resolve()));
    deadReceiver = null;
    return {};
  },
};

export const boundsScenarios: Scenario[] = [memoryLargeDocuments, readUnderHostileReads, createWithDeadWebhook];
