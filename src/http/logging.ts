/**
 * pino options: JSON lines with the request id, and no secret ever written. Keys and tokens
 * can arrive in headers and in URLs (the api_key query parameter, share and portal tokens),
 * so headers are redacted and URLs are logged through a redactor that knows the configured
 * share and portal paths.
 */
import type { FastifyRequest } from 'fastify';
import pino, { type DestinationStream, type LoggerOptions } from 'pino';

const SECRET_PARAMS = new Set(['api_key', 'token', 'access_token', 'key', 'secret']);

/** A parameter name as the query parser sees it: `api%5Fkey` and `api_key` are the same key. */
function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).trim().toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      return SECRET_PARAMS.has(decodedName(name)) ? `${name}=[REDACTED]` : pair;
    })
    .join('&');
}

/** The default share and portal paths (`/s`, `/portal`). */
export const DEFAULT_TOKEN_PATHS: readonly string[] = ['/s', '/portal'];
/** The service's own paths: never a token, even when a share or portal base sits at the root. */
const SERVICE_PATH = /^\/(?:api|healthz|readyz|metrics)(?:[/?#]|$)/;

/**
 * Share and portal paths carry a token after their base path and its mode words (`/s/TOKEN`,
 * `/portal/document/edit/TOKEN`); everything from the first other segment on is redacted (a
 * token may itself be lowercase). The pages' static files (`…/assets/…`) are kept.
 */
function tokenPattern(base: string): RegExp {
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^(${escaped}(?:/(?:document|view|edit))*)/(?!assets/)[^?#]+`);
}

/** Redacts URLs for the logs, given the share and portal bases' paths ('' for a base at the root). */
export function createUrlRedactor(tokenPaths: readonly string[] = DEFAULT_TOKEN_PATHS): (url: string) => string {
  const patterns = [...new Set(tokenPaths)].sort((a, b) => b.length - a.length).map((base) => ({ root: base === '', re: tokenPattern(base) }));
  return (url: string) => {
    const q = url.indexOf('?');
    let path = q < 0 ? url : url.slice(0, q);
    for (const { root, re } of patterns) {
      if (root && SERVICE_PATH.test(path)) continue;
      if (re.test(path)) {
        path = path.replace(re, '$1/[REDACTED]');
        break;
      }
    }
    return q < 0 ? path : `${path}?${redactQuery(url.slice(q + 1))}`;
  };
}

export const redactUrl = createUrlRedactor();

export function loggerOptions(level: string, tokenPaths: readonly string[] = DEFAULT_TOKEN_PATHS): LoggerOptions {
  const redact = createUrlRedactor(tokenPaths);
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        'secret',
        '*.secret',
        'password',
        '*.password',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redact(request.url),
          host: request.headers?.host,
          remoteAddress: request.ip,
        };
      },
    },
  };
}

/**
 * Where the log lines go (stdout by default): written synchronously, one write per line, so the
 * process holds no log line in memory. pino's default destination writes asynchronously, at
 * most 16 KB per write and one write per turn of the event loop; under sustained load (50
 * connections, 2 log lines per request) the service produced more than that per turn and the
 * backlog grew without bound in the process (13.5 MB after 9 minutes of the read soak,
 * docs/performance.md). Written synchronously, a line costs the same CPU (~5 µs) and nothing
 * piles up: when stdout cannot keep up, the service slows down instead of growing or dropping
 * lines.
 */
export function logDestination(fd: number = 1): DestinationStream {
  return pino.destination({ dest: fd, sync: true });
}
