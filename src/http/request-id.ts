/** Every request gets an id: the caller's X-Request-Id when it is sane, else a new UUID. */
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function generateRequestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && SANE_ID.test(value) ? value : crypto.randomUUID();
}
