/**
 * pino options: JSON lines with the request id, and no secret ever written. Keys and tokens
 * can arrive in headers and in URLs (the api_key query parameter, share and portal tokens),
 * so headers are redacted and URLs are logged through `redactUrl`.
 */
import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

const SECRET_PARAMS = new Set(['api_key', 'token', 'access_token', 'key', 'secret']);
/**
 * Share (/s/…) and portal (/portal/…) paths carry a token after the prefix and its mode words;
 * everything from the first other segment on is redacted (a token may itself be lowercase).
 */
const TOKEN_PATH = /^(\/(?:s|portal)(?:\/(?:document|view|edit))*)\/[^?#]+/;

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

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(TOKEN_PATH, '$1/[REDACTED]');
  return q < 0 ? path : `${path}?${redactQuery(url.slice(q + 1))}`;
}

export function loggerOptions(level: string): LoggerOptions {
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
          url: redactUrl(request.url),
          host: request.headers?.host,
          remoteAddress: request.ip,
        };
      },
    },
  };
}
