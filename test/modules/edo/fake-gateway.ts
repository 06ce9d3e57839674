/**
 * A fake EDO gateway on loopback speaking docs/edo-operator-protocol.md: a real node:http
 * server whose behaviour the test switches (answer, fail with a status, hang, refuse the
 * participant), idempotent by job id like a real gateway, with a change feed the test fills.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type GatewayMode = { kind: 'ok' } | { kind: 'status'; status: number; error?: string; retryAfter?: string } | { kind: 'hang' };

export interface ReceivedDocument {
  job_id: string;
  document_id: string;
  sender: string;
  recipient: string;
  document: Record<string, unknown>;
  file: { name: string; content_type: string; content_base64: string };
}

interface FeedEvent {
  id: string;
  type: string;
  job_id?: string | null;
  document_id: string;
  at: string;
  [key: string]: unknown;
}

export class FakeGateway {
  readonly token = 'gw_token_4b1d7e0c2a9f8e6d5c4b3a2918f7e6d5';
  mode: GatewayMode = { kind: 'ok' };
  /** Every send request as received (including failed and repeated ones). */
  readonly sendRequests: { jobId: string; idempotencyKey: string | undefined; authorization: string | undefined }[] = [];
  readonly feedRequests: { after: string | null; limit: number }[] = [];
  readonly documents = new Map<string, ReceivedDocument>();
  private readonly events: FeedEvent[] = [];
  private server: Server | null = null;
  private port = 0;
  private readonly hanging = new Set<ServerResponse>();

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The document sent for `jobId` (once, however often it was retried). */
  documentOf(jobId: string): ReceivedDocument {
    const doc = this.documents.get(jobId);
    if (!doc) throw new Error(`the gateway has no document for job ${jobId}`);
    return doc;
  }

  /** Appends a status event for the job's document to the feed. */
  report(jobId: string, status: 'delivered' | 'accepted' | 'rejected', at: string, reason: string | null = null): void {
    const doc = this.documentOf(jobId);
    this.events.push({ id: `ev-${this.events.length + 1}`, type: 'status', job_id: jobId, document_id: doc.document_id, at, status, reason });
  }

  /** Appends an incoming link (a document referring to the job's document) to the feed. */
  link(jobId: string, link: { document_id: string; kind: string; title: string; number?: string | null; date?: string | null }, at: string, withJobId = true): void {
    const doc = this.documentOf(jobId);
    this.events.push({ id: `ev-${this.events.length + 1}`, type: 'link', ...(withJobId ? { job_id: jobId } : {}), document_id: doc.document_id, at, link });
  }

  /** Appends an event about a document this service never sent (another system's). */
  foreignEvent(at: string): void {
    this.events.push({ id: `ev-${this.events.length + 1}`, type: 'status', job_id: null, document_id: 'foreign-doc', at, status: 'delivered' });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://gateway');
      if (req.headers.authorization !== `Bearer ${this.token}`) return json(res, 401, { error: 'unauthorized' });
      if (req.method === 'POST' && url.pathname === '/v1/documents') return this.send(req, res, Buffer.concat(chunks).toString('utf8'));
      if (req.method === 'GET' && url.pathname === '/v1/events') return this.feed(url, res);
      json(res, 404, { error: 'not_found' });
    });
  }

  private send(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const body = JSON.parse(raw) as ReceivedDocument;
    this.sendRequests.push({ jobId: body.job_id, idempotencyKey: header(req, 'idempotency-key'), authorization: header(req, 'authorization') });
    const mode = this.mode;
    if (mode.kind === 'hang') {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    if (mode.kind === 'status') {
      return json(res, mode.status, { error: mode.error ?? 'unavailable', message: `gateway says ${mode.status}` }, mode.retryAfter ? { 'Retry-After': mode.retryAfter } : {});
    }
    const known = this.documents.get(body.job_id);
    if (known) return json(res, 200, { document_id: known.document_id, status: 'sent' });
    const stored = { ...body, document_id: `GW-${this.documents.size + 1}` };
    this.documents.set(body.job_id, stored);
    json(res, 201, { document_id: stored.document_id, status: 'sent' });
  }

  private feed(url: URL, res: ServerResponse): void {
    const after = url.searchParams.get('after');
    const limit = Number(url.searchParams.get('limit') ?? '100');
    this.feedRequests.push({ after, limit });
    if (this.mode.kind === 'status' && this.mode.status >= 500) return json(res, this.mode.status, { error: 'unavailable' });
    const start = after === null ? 0 : Number(after.replace('c', ''));
    const page = this.events.slice(start, start + limit);
    const next = start + page.length;
    json(res, 200, { events: page, next_cursor: page.length ? `c${next}` : null, has_more: next < this.events.length });
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}
