/**
 * The HTTP EDO connector against a real gateway on loopback (node:http, scripted per test):
 * what goes on the wire, how answers map to the port, and how every failure is classified.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EdoOperatorError, type EdoErrorCode, type EdoOutgoingDocument } from '../../../src/modules/edo/edo-operator.js';
import { HttpEdoOperator, MAX_RETRY_AFTER_MS } from '../../../src/modules/edo/http-operator.js';

const TOKEN = 'tok_5f2b9c0e8a7d4e31b6c2a9f0d8e7c6b5';
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 0xff, 0x80, 0x7f, 0xc3, 0x28]), Buffer.from('\n%%EOF\n')]);
const FIXED_NOW = new Date('2026-11-25T10:00:00Z');

interface Recorded {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}
type Script = (req: Recorded, res: ServerResponse) => void;

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

/** A gateway on 127.0.0.1 that answers with `script` and records every request. */
async function startGateway(script: Script): Promise<{ baseUrl: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: new URL(req.url ?? '/', 'http://gateway'), headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      script(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function operator(baseUrl: string, timeoutMs = 2_000): HttpEdoOperator {
  return new HttpEdoOperator({ baseUrl, token: TOKEN, timeoutMs, clock: { now: () => FIXED_NOW } });
}

function outgoing(jobId = 'job_0f3c8d2a9b7e4f61a5c3d2e1f0a9b8c7'): EdoOutgoingDocument {
  return {
    jobId,
    sender: '2BM-7707083893-2012052808301120',
    recipient: '2BM-7728168971-2012052808301121',
    document: {
      kind: 'invoice',
      publicId: 'inv_8d1f2c',
      revision: 3,
      number: '42',
      date: '2026-11-25',
      currency: 'RUB',
      total: '19789.99',
      title: 'Счёт № 42 от 25.11.2026',
      seller: { name: 'ООО «Ромашка»', inn: '7707083893', kpp: '770701001' },
      buyer: { name: 'ИП Иванов И. И.', inn: null, kpp: null },
    },
    file: { name: 'Счёт 42.pdf', contentType: 'application/pdf', content: PDF },
  };
}

const signal = () => new AbortController().signal;

/** Awaits the rejection and checks it is an EdoOperatorError that never shows the token. */
async function operatorError(call: Promise<unknown>): Promise<EdoOperatorError> {
  const err: unknown = await call.then(
    () => expect.unreachable('the call succeeded'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EdoOperatorError);
  const error = err as EdoOperatorError;
  expect(error.message).not.toContain(TOKEN);
  expect(error.message).not.toMatch(/\n/);
  return error;
}

describe('send', () => {
  it('posts the document as the protocol says and maps the receipt', async () => {
    const gw = await startGateway((_req, res) => json(res, 201, { document_id: 'op-doc-1', status: 'delivered', extra: 'ignored' }));
    const edo = operator(gw.baseUrl + '/');
    expect(edo.kind).toBe('http');
    expect(edo.feedName).toBe(`http:${gw.baseUrl}`);

    await expect(edo.send(outgoing(), signal())).resolves.toEqual({ operatorDocumentId: 'op-doc-1', status: 'delivered' });

    const [req] = gw.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url.pathname).toBe('/v1/documents');
    expect(req?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'idempotency-key': 'job_0f3c8d2a9b7e4f61a5c3d2e1f0a9b8c7',
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'invoicing-edo-connector/1',
    });
    const body = JSON.parse(req?.body ?? '') as { file: { content_base64: string } };
    expect(body).toEqual({
      job_id: 'job_0f3c8d2a9b7e4f61a5c3d2e1f0a9b8c7',
      sender: '2BM-7707083893-2012052808301120',
      recipient: '2BM-7728168971-2012052808301121',
      document: {
        kind: 'invoice',
        public_id: 'inv_8d1f2c',
        revision: 3,
        number: '42',
        date: '2026-11-25',
        currency: 'RUB',
        total: '19789.99',
        title: 'Счёт № 42 от 25.11.2026',
        seller: { name: 'ООО «Ромашка»', inn: '7707083893', kpp: '770701001' },
        buyer: { name: 'ИП Иванов И. И.', inn: null, kpp: null },
      },
      file: { name: 'Счёт 42.pdf', content_type: 'application/pdf', content_base64: expect.any(String) as string },
    });
    expect(Buffer.from(body.file.content_base64, 'base64').equals(PDF)).toBe(true);
  });

  it('gets the first receipt again for a repeated job id', async () => {
    const byJob = new Map<string, string>();
    const gw = await startGateway((req, res) => {
      // Keyed by the header, as a gateway would: the body's job_id is checked against it below.
      const jobId = String(req.headers['idempotency-key']);
      const known = byJob.get(jobId);
      if (known) return json(res, 200, { document_id: known, status: 'sent' });
      byJob.set(jobId, `op-doc-${byJob.size + 1}`);
      json(res, 201, { document_id: byJob.get(jobId), status: 'sent' });
    });
    const edo = operator(gw.baseUrl);
    const first = await edo.send(outgoing('job_a'), signal());
    const again = await edo.send(outgoing('job_a'), signal());
    const other = await edo.send(outgoing('job_b'), signal());
    expect(again).toEqual(first);
    expect(other.operatorDocumentId).not.toBe(first.operatorDocumentId);
    expect(byJob.size).toBe(2);
    for (const req of gw.requests) expect(req.headers['idempotency-key']).toBe((JSON.parse(req.body) as { job_id: string }).job_id);
  });

  it.each<{ status: number; body?: unknown; headers?: Record<string, string>; code: EdoErrorCode; permanent: boolean; retryAfterMs?: number; text?: string }>([
    { status: 503, body: { error: 'maintenance', message: 'back soon' }, headers: { 'Retry-After': '7' }, code: 'operator_unavailable', permanent: false, retryAfterMs: 7_000, text: 'operator answered 503: back soon' },
    { status: 429, headers: { 'Retry-After': 'Wed, 25 Nov 2026 10:02:00 GMT' }, code: 'operator_unavailable', permanent: false, retryAfterMs: 120_000 },
    { status: 503, headers: { 'Retry-After': '86400' }, code: 'operator_unavailable', permanent: false, retryAfterMs: MAX_RETRY_AFTER_MS },
    { status: 500, body: 'Internal Server Error', code: 'operator_unavailable', permanent: false, text: 'operator answered 500' },
    { status: 422, body: { error: 'participant_not_found' }, code: 'participant_not_found', permanent: true },
    { status: 404, body: { error: 'participant_not_found', message: 'no such box' }, code: 'participant_not_found', permanent: true },
    { status: 404, body: { error: 'not_found' }, code: 'operator_rejected', permanent: true },
    { status: 400, body: { error: 'invalid_document', message: `total\nmust be positive ${'x'.repeat(400)}` }, code: 'operator_rejected', permanent: true, text: 'operator answered 400: total must be positive xxx' },
    { status: 401, body: { error: 'unauthorized', message: `token Bearer ${TOKEN} is revoked` }, code: 'operator_auth_failed', permanent: false, text: 'operator answered 401: token Bearer [redacted] is revoked' },
    { status: 302, headers: { Location: '/elsewhere' }, code: 'operator_unavailable', permanent: false, text: 'redirects are not followed' },
  ])('maps $status $body to $code (permanent: $permanent)', async ({ status, body, headers, code, permanent, retryAfterMs, text }) => {
    const gw = await startGateway((_req, res) => {
      if (typeof body === 'object') return json(res, status, body, headers);
      res.writeHead(status, { 'Content-Type': 'text/plain', ...headers }).end(body ?? '');
    });
    const error = await operatorError(operator(gw.baseUrl).send(outgoing(), signal()));
    expect({ code: error.code, permanent: error.permanent, retryAfterMs: error.retryAfterMs }).toEqual({ code, permanent, retryAfterMs: retryAfterMs ?? null });
    if (text) expect(error.message).toContain(text);
    expect(error.message.length).toBeLessThan(400);
  });

  it('gives up on a gateway that never answers after timeoutMs', async () => {
    const gw = await startGateway(() => undefined);
    const started = Date.now();
    const error = await operatorError(operator(gw.baseUrl, 300).send(outgoing(), signal()));
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error).toMatchObject({ code: 'operator_timeout', permanent: false });
    expect(error.message).toContain('300 ms');
  });

  it('says "aborted" when the caller aborts', async () => {
    const gw = await startGateway(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await operatorError(operator(gw.baseUrl).send(outgoing(), controller.signal));
    expect(error).toMatchObject({ code: 'operator_timeout', permanent: false });
    expect(error.message).toContain('aborted');
  });

  it('reports a closed port as unreachable', async () => {
    const gw = await startGateway(() => undefined);
    await cleanup.pop()?.();
    const error = await operatorError(operator(gw.baseUrl).send(outgoing(), signal()));
    expect(error).toMatchObject({ code: 'operator_unreachable', permanent: false });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it.each([
    { name: 'non-JSON', send: (res: ServerResponse) => res.writeHead(200).end('<html>ok</html>'), says: 'not JSON' },
    { name: 'empty id', send: (res: ServerResponse) => json(res, 200, { document_id: '', status: 'sent' }), says: 'at /document_id' },
    { name: 'unknown status', send: (res: ServerResponse) => json(res, 202, { document_id: 'd1', status: 'queued' }), says: 'at /status' },
    { name: 'chunked oversized', send: (res: ServerResponse) => res.writeHead(200).write('x'.repeat(700_000), () => res.end('x'.repeat(700_000))), says: 'larger than' },
    { name: 'oversized', send: (res: ServerResponse) => json(res, 200, { document_id: 'd1', status: 'sent', pad: 'x'.repeat(1_100_000) }), says: 'larger than' },
  ])('treats a 2xx with a $name body as a protocol error', async ({ send, says }) => {
    const gw = await startGateway((_req, res) => send(res));
    const error = await operatorError(operator(gw.baseUrl).send(outgoing(), signal()));
    expect(error).toMatchObject({ code: 'operator_protocol_error', permanent: false });
    expect(error.message).toContain(says);
  });
});

describe('fetchEvents', () => {
  const statusEvent = { id: 'e1', type: 'status', job_id: 'job_a', document_id: 'op-doc-1', at: '2026-11-25T13:00:00+03:00', status: 'rejected', reason: 'wrong amount' };
  const bareStatus = { id: 'e2', type: 'status', document_id: 'op-doc-2', at: '2026-11-25T10:05:00.123Z', status: 'delivered' };
  const linkEvent = {
    id: 'e4',
    type: 'link',
    document_id: 'op-doc-1',
    at: '2026-11-25T10:06:00Z',
    link: { document_id: 'op-link-9', kind: 'receipt_notice', title: 'Извещение о получении', number: null, date: '2026-11-25' },
  };

  it('pages with limit and after, maps events, skips unknown types and keeps the cursor on null', async () => {
    const gw = await startGateway((req, res) => {
      const after = req.url.searchParams.get('after');
      if (after === null) return json(res, 200, { events: [statusEvent, bareStatus], next_cursor: 'c2', has_more: true });
      if (after === 'c2') return json(res, 200, { events: [{ id: 'e3', type: 'signature', whatever: 1 }, linkEvent], next_cursor: 'c4', has_more: false });
      json(res, 200, { events: [], next_cursor: null, has_more: false });
    });
    const edo = operator(gw.baseUrl);

    const first = await edo.fetchEvents(null, 2, signal());
    expect(first).toEqual({
      events: [
        { type: 'status', eventId: 'e1', jobId: 'job_a', operatorDocumentId: 'op-doc-1', at: '2026-11-25T10:00:00.000Z', status: 'rejected', reason: 'wrong amount' },
        { type: 'status', eventId: 'e2', jobId: null, operatorDocumentId: 'op-doc-2', at: '2026-11-25T10:05:00.123Z', status: 'delivered', reason: null },
      ],
      nextCursor: 'c2',
      hasMore: true,
    });
    const second = await edo.fetchEvents('c2', 2, signal());
    expect(second).toEqual({
      events: [
        {
          type: 'link',
          eventId: 'e4',
          jobId: null,
          operatorDocumentId: 'op-doc-1',
          at: '2026-11-25T10:06:00.000Z',
          link: { operatorDocumentId: 'op-link-9', kind: 'receipt_notice', title: 'Извещение о получении', number: null, date: '2026-11-25' },
        },
      ],
      nextCursor: 'c4',
      hasMore: false,
    });
    await expect(edo.fetchEvents('c4', 2, signal())).resolves.toEqual({ events: [], nextCursor: 'c4', hasMore: false });

    expect(gw.requests.map((r) => [r.method, r.url.pathname, Object.fromEntries(r.url.searchParams)])).toEqual([
      ['GET', '/v1/events', { limit: '2' }],
      ['GET', '/v1/events', { limit: '2', after: 'c2' }],
      ['GET', '/v1/events', { limit: '2', after: 'c4' }],
    ]);
    expect(gw.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('fails the page on a malformed known event, naming its path', async () => {
    const gw = await startGateway((_req, res) => json(res, 200, { events: [statusEvent, { ...bareStatus, status: 'signed' }], next_cursor: 'c2', has_more: false }));
    const error = await operatorError(operator(gw.baseUrl).fetchEvents(null, 10, signal()));
    expect(error).toMatchObject({ code: 'operator_protocol_error', permanent: false });
    expect(error.message).toContain('at /events/1/status');
  });

  it.each<{ status: number; error?: string; code: EdoErrorCode }>([
    { status: 500, code: 'operator_unavailable' },
    { status: 400, error: 'bad_cursor', code: 'operator_rejected' },
    { status: 422, error: 'participant_not_found', code: 'participant_not_found' },
    { status: 404, error: 'not_found', code: 'operator_unavailable' },
    { status: 403, error: 'forbidden', code: 'operator_auth_failed' },
  ])('keeps a feed $status retryable ($code)', async ({ status, error: errorCode, code }) => {
    const gw = await startGateway((_req, res) => json(res, status, { error: errorCode ?? 'oops' }, { 'Retry-After': '30' }));
    const error = await operatorError(operator(gw.baseUrl).fetchEvents('c1', 10, signal()));
    expect(error).toMatchObject({ code, permanent: false, retryAfterMs: 30_000 });
  });
});
