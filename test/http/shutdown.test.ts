/**
 * A request that reaches the server while it closes gets the spec's error
 * shape (503 shutting_down with Retry-After), not Fastify's own body. Real socket: the
 * server starts closing while a request is in flight; the next one on that connection is refused.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/app.js';
import { ACME_KEY } from '../helpers/fixtures.js';

describe('during shutdown', () => {
  it('answers a request arriving while the server closes with 503 shutting_down in the error shape', async () => {
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const t = await buildTestApp({
      beforeReady: (app) => {
        app.get('/test/slow', async () => {
          started();
          await new Promise((r) => setTimeout(r, 400));
          return { ok: true };
        });
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as net.AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (c) => (data += c.toString('utf8')));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /test/slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await inFlight;
    const closing = t.close();
    await new Promise((r) => setTimeout(r, 50));
    // The next request on the open connection arrives while the server is closing.
    socket.write(`GET /api/v1/ref/catalog HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${ACME_KEY}\r\n\r\n`);
    await ended;
    await closing;
    const second = data.slice(data.indexOf("HTTP/1.1", 10));
    expect(second).toMatch(/^HTTP\/1\.1 503/);
    expect(second.toLowerCase()).toContain('retry-after: 1');
    expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toMatchObject({ ok: false, error: 'shutting_down' });
  });
});
