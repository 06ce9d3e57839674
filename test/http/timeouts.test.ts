/**
 * A slow-trickle client cannot hold a node. Real sockets on a real port: a
 * body or headers sent a byte at a time past INVOICING_REQUEST_TIMEOUT_MS get 408 in the
 * spec's shape and the connection is closed; INVOICING_MAX_CONNECTIONS caps open connections.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ACME_KEY } from '../helpers/fixtures.js';

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await buildTestApp({ env: { INVOICING_REQUEST_TIMEOUT_MS: '1000', INVOICING_MAX_CONNECTIONS: '3' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await t?.close();
});

interface Trickle {
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<{ data: string; afterMs: number }>;
  stop(): void;
}

/** Sends `head` at once, then one byte of `rest` every `everyMs` until the server closes. */
function trickle(head: string, rest: string, everyMs: number): Trickle {
  const started = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  let i = 0;
  socket.on('data', (chunk) => (data += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  const timer = setInterval(() => {
    if (i < rest.length && socket.writable) socket.write(rest[i++] as string);
  }, everyMs);
  socket.on('connect', () => socket.write(head));
  const closed = new Promise<{ data: string; afterMs: number }>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ data, afterMs: Date.now() - started });
    });
  });
  return { closed, stop: () => (clearInterval(timer), socket.destroy()) };
}

describe('request timeouts', () => {
  it('a body trickling in a byte every 200 ms is cut after the request timeout with 408 in the error shape', async () => {
    const body = JSON.stringify({ number: 'x'.repeat(200) });
    const head = `POST /api/v1/invoices HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${ACME_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const slow = trickle(head, body, 200);
    const { data, afterMs } = await slow.closed;
    expect(afterMs).toBeGreaterThanOrEqual(900);
    expect(afterMs).toBeLessThan(8_000);
    expect(data).toMatch(/^HTTP\/1\.1 408/);
    expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).toMatchObject({ ok: false, error: 'request_timeout' });
  });

  it('headers trickling in are cut too', async () => {
    const slow = trickle('GET /api/v1/ref/catalog HTTP/1.1\r\n', `Host: localhost\r\nx-api-key: ${ACME_KEY}\r\nX-Pad: ${'a'.repeat(200)}\r\n\r\n`, 200);
    const { data, afterMs } = await slow.closed;
    expect(afterMs).toBeLessThan(8_000);
    expect(data).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a normal request on the same server is answered', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/api/v1/ref/catalog', agent: false, headers: { 'x-api-key': ACME_KEY, connection: 'close' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
  });
});

function connections(): Promise<number> {
  return new Promise((resolve, reject) => t.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

describe('the connection cap', () => {
  it('refuses connections beyond INVOICING_MAX_CONNECTIONS while the others stay open', async () => {
    // Earlier tests' connections are gone first.
    for (let i = 0; i < 50 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const open: net.Socket[] = [];
    const connect = () =>
      new Promise<net.Socket>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined);
      });
    try {
      for (let i = 0; i < 3; i++) open.push(await connect());
      const extra = await connect();
      open.push(extra);
      const closedAt = await new Promise<number>((resolve) => {
        const started = Date.now();
        extra.on('close', () => resolve(Date.now() - started));
        extra.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      });
      expect(closedAt).toBeLessThan(900);
      expect(open.slice(0, 3).every((s) => !s.destroyed)).toBe(true);
    } finally {
      for (const s of open) s.destroy();
    }
  });
});
