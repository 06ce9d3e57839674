/**
 * The security headers of every response, computed once. @fastify/helmet builds
 * helmet's middleware chain and runs it on every request (two hooks, a dozen header writes
 * through Node's checks): ~17 µs per request, as much as serving a cached document. The
 * headers do not depend on the request (no CSP nonces are used), so they are taken once from
 * @fastify/helmet itself, with the same options, on a throwaway instance, and set as one
 * object per request. Pages that need their own CSP still set it on the reply, which wins.
 */
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import Fastify from 'fastify';

/** Headers Fastify (or Node) writes itself, not helmet's. */
const NOT_HELMET = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

export async function helmetHeaders(options: FastifyHelmetOptions): Promise<Record<string, string>> {
  const probe = Fastify();
  try {
    await probe.register(helmet, options);
    probe.get('/', async () => 'ok');
    const res = await probe.inject({ method: 'GET', url: '/' });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
      if (!NOT_HELMET.has(name) && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    return headers;
  } finally {
    await probe.close();
  }
}

/** The headers as one frozen object, for `reply.headers()` in the app's first onRequest hook (as helmet set them). */
export function staticHeaders(headers: Record<string, string>): Readonly<Record<string, string>> {
  return Object.freeze({ ...headers });
}
