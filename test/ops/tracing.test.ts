/**
 * OpenTelemetry tracing (operating contract, section 8) with a real OTLP/HTTP receiver started
 * here: one create's trace holds the request, its group commit and its deliveries (the e-mail
 * attempted in the request, the EDO send the worker makes later from the create's traceparent,
 * the webhook delivery of the create's event from the event's traceparent),
 * with the team id and the public id as attributes, and never a key, a token or an e-mail address.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tracingConfig } from '../../src/config/tracing.js';
import { currentTraceparent, inSpan, spansEnabled } from '../../src/shared/tracing.js';
import { usingPostgres } from '../helpers/db.js';
import { processFixture, until, type ServiceProcess } from '../helpers/process.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

const KEY = 'ak_tracing_main_0001';
const BUYER_EMAIL = 'buyer.person@buyer.example';
const BUYER_EDO_ID = '2BM-7728168971-2012052808301121';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Array<{ key: string; value: OtlpValue }>;
}
interface ReceivedSpan extends OtlpSpan {
  service: string;
  attrs: Record<string, string>;
}

/** An OTLP/HTTP (JSON) receiver: every span posted to /v1/traces, and every body as received. */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: string[] = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      this.bodies.push(body);
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: OtlpValue }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of doc.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) {
            for (const span of ss.spans) {
              const attrs = Object.fromEntries((span.attributes ?? []).map((a) => [a.key, String(Object.values(a.value)[0])]));
              this.spans.push({ ...span, service, attrs });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('tracing stays off: no span is made and no traceparent is stored', async () => {
    expect(tracingConfig({})).toBeNull();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({ serviceName: 'invoicing' });
    expect(spansEnabled()).toBe(false);
    expect(currentTraceparent()).toBeNull();
    expect(await inSpan('x', {}, async (span) => span)).toBeNull();
  });
});

describe('a create traced through its deliveries', () => {
  const fixture = processFixture('invoicing-tracing-');
  const receiver = new OtlpReceiver();
  // A webhook endpoint that answers 200 to every delivery.
  const hooks = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  let service: ServiceProcess;
  let created: { public_id: string; invoice_url: string; portal_view_url: string };

  beforeAll(async () => {
    const endpoint = await receiver.start();
    const bootstrap = path.join(fixture.dir, 'bootstrap.json');
    fs.writeFileSync(
      bootstrap,
      JSON.stringify({
        teams: [
          {
            id: 'trace-team',
            name: 'Trace',
            api_keys: [{ id: 6161, name: 'main', secret: KEY, active: true }],
            organizations: [
              { id: 'org-1', name: 'ООО «Ромашка»', inn: '7707083893', kpp: '773601001', edo_id: '2BM-7707083893-2012052808301120', email: 'seller@seller.example', active: true },
            ],
          },
        ],
      }),
    );
    service = await fixture.serve({
      DATABASE_URL: await fixture.freshDatabaseUrl(),
      INVOICING_BOOTSTRAP_FILE: bootstrap,
      INVOICING_DATA_DIR: path.join(fixture.dir, 'data'),
      INVOICING_PROCESSES: '1',
      INVOICING_EDO_POLL_INTERVAL_MS: '200',
      INVOICING_EDO_SANDBOX_DELIVERY_MS: '200',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      INVOICING_WEBHOOK_ALLOW_HTTP: 'true',
      INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
    });
    await service.waitUntilHealthy();
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const hook = await fetch(`${service.baseUrl}/api/v1/webhook_endpoints`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`, events: ['invoice.created'] }),
    });
    expect(hook.status).toBe(201);
    const res = await fetch(`${service.baseUrl}/api/v1/invoices`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        invoice: {
          number: 'T-1',
          date: '2026-03-02',
          currency: 'RUB',
          seller: { inn: '7707083893' },
          buyer: { name: 'ООО «Покупатель»', edo_id: BUYER_EDO_ID },
          buyer_edo_id: BUYER_EDO_ID,
          api_recipients: [{ email: BUYER_EMAIL, name: 'Покупатель' }],
          items: [{ name: 'Работа', qty: 1, price: 1000, vat_pct: 22 }],
        },
        notify_recipients: true,
      }),
    });
    expect([200, 207]).toContain(res.status);
    created = (await res.json()) as typeof created;
    // A key in the query and the share page's PDF, whose URL carries a token: neither may reach a span.
    expect((await fetch(`${service.baseUrl}/api/v1/invoices/${created.public_id}?api_key=${KEY}`)).status).toBe(200);
    expect((await fetch(`${created.invoice_url}`.replace(/^https?:\/\/[^/]+/, service.baseUrl) + '/document.pdf')).status).toBe(200);
  });

  afterAll(async () => {
    await receiver.close();
    await new Promise<void>((resolve) => hooks.close(() => resolve()));
  });

  it('holds the request, its group commit, the e-mail and the EDO send, with the team and the document', async () => {
    const request = await until('the create request span', () =>
      receiver.spans.find((s) => s.attrs['invoicing.public_id'] === created.public_id && !s.name.startsWith('invoicing.')),
    );
    const trace = (name: string) => receiver.spans.find((s) => s.traceId === request.traceId && s.name === name);
    const edo = await until('the EDO delivery in the create trace', () => trace('invoicing.edo.deliver'), 30_000);
    const email = await until('the e-mail delivery in the create trace', () => trace('invoicing.email.deliver'));
    // The webhook of the create's event, delivered by the worker from the event's stored traceparent.
    const webhook = await until('the webhook delivery in the create trace', () => trace('invoicing.webhook.deliver'), 30_000);
    expect(webhook.attrs['invoicing.team_id']).toBe('trace-team');
    // The write's time in the database: the group commit on SQLite; on PostgreSQL (one statement, no batching) the pg client's spans.
    if (usingPostgres()) expect(receiver.spans.filter((s) => s.traceId === request.traceId && (s.attrs['db.system.name'] ?? s.attrs['db.system']) === 'postgresql').map((s) => s.name)).not.toEqual([]);
    else expect(trace('invoicing.group_commit')).toBeDefined();
    for (const span of [request, email, edo]) {
      expect(span.attrs['invoicing.team_id']).toBe('trace-team');
      expect(span.attrs['invoicing.public_id']).toBe(created.public_id);
    }
    expect(email.attrs['invoicing.outcome']).toBe('sent');
    // The EDO send was made by the worker loop later, continuing the create's stored traceparent.
    expect(edo.parentSpanId).toBeTruthy();
    expect(receiver.spans.some((s) => s.name === 'invoicing.pdf.render')).toBe(true);
    expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['invoicing']));
  });

  it('never carries a key, a token or an e-mail address', async () => {
    await until('the share page PDF span', () => receiver.spans.some((s) => JSON.stringify(s).includes('document.pdf')));
    const everything = receiver.bodies.join('\n');
    const tokens = [created.invoice_url, created.portal_view_url].map((u) => new URL(u).pathname.split('/').filter((p) => p.length > 20).pop() as string);
    for (const secret of [KEY, ...tokens]) expect(everything).not.toContain(secret);
    expect(everything).not.toContain(BUYER_EMAIL);
    expect(everything).not.toContain('seller@seller.example');
    expect(everything).not.toMatch(/[\w.+-]+@[\w-]+\.example/);
    expect(everything).toContain('[REDACTED]');
  });
});
