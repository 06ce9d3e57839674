/**
 * pino options: JSON lines with the request id, and no secret ever written. Keys and tokens
 * can arrive in headers and in URLs (the api_key query parameter, share and portal tokens),
 * so headers are redacted and URLs are logged through `redactUrl`.
 */
import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

const SECRET_QUERY = /([?&](?:api_key|token|access_token|key|secret)=)[^&#]*/gi;
/** Share (/s/…) and portal (/portal/…) paths carry a token in every segment after the prefix. */
const TOKEN_PATH = /^(\/(?:s|portal)(?:\/[a-z-]+)?)\/[^?#]+/;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[REDACTED]').replace(TOKEN_PATH, '$1/[REDACTED]');
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
