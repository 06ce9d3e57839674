/**
 * One delivery attempt over HTTP(S): no redirects followed (a 3xx is a failure), one total
 * timeout from connect to the last byte, at most 64 KB of the answer read, every connection
 * to an address checked by `guardedLookup` (a fresh connection per attempt, no agent reuse).
 */
import http from 'node:http';
import https from 'node:https';
import type { HostResolver } from './host-resolver.js';
import { checkLiteralHost, guardedLookup, UnsafeUrlError, type UrlPolicy } from './url-safety.js';

export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  /** Null on a 2xx; otherwise a short reason (never the secret, never the body beyond a snippet). */
  error: string | null;
}

export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; policy: UrlPolicy; resolver: HostResolver; signal?: AbortSignal },
): Promise<PostResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null): PostResult => ({
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  let url: URL;
  try {
    url = new URL(rawUrl);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.policy.allowHttp)) throw new UnsafeUrlError('scheme not allowed');
    checkLiteralHost(url, options.policy);
  } catch (err) {
    return done(null, `refused: ${(err as Error).message}`);
  }
  const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (r: PostResult) => {
      if (!settled) {
        settled = true;
        resolve(r);
      }
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'invoicing-webhooks/1' },
        agent: false,
        lookup: guardedLookup(options.policy, options.resolver) as never,
        signal,
      },
      (res) => {
        let read = 0;
        let snippet = '';
        const status = res.statusCode ?? 0;
        const end = () => {
          const ok = status >= 200 && status < 300;
          finish(done(status, ok ? null : `HTTP ${status}${snippet ? `: ${snippet.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`));
        };
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (snippet.length < 200) snippet += chunk.toString('utf8', 0, Math.min(chunk.length, 200));
          if (read > MAX_RESPONSE_BYTES) {
            // Enough: the status is what counts; the rest of the body is not read.
            end();
            res.destroy();
          }
        });
        res.on('end', end);
        res.on('error', () => end());
        res.on('close', end);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (signal.aborted) return finish(done(null, `timeout after ${options.timeoutMs} ms`));
      if (err instanceof UnsafeUrlError || err.code === 'EADDRNOTALLOWED') return finish(done(null, `refused: ${err.message}`));
      finish(done(null, attemptError(err)));
    });
    req.end(body);
  });
}

/**
 * The `error` of a failed connection, as the team reads it in the deliveries list. Node's socket
 * errors name the address connected to ("connect ECONNREFUSED 10.1.2.3:443"): those are told by
 * their code alone, so the list never shows what the host resolved to.
 */
const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  EPIPE: 'the connection was closed while sending',
  ENOTFOUND: 'the host name did not resolve',
  EAI_AGAIN: 'the host name did not resolve (temporary failure)',
};

function attemptError(err: NodeJS.ErrnoException): string {
  const code = err.code ?? 'error';
  const known = SOCKET_ERRORS[code];
  if (known) return `${code}: ${known}`;
  // The bounded resolver's own errors (ETIMEOUT, EBUSY) and TLS errors name no address.
  return `${code}: ${err.message}`.slice(0, 300);
}
