/**
 * Every error leaves in the spec's shape, including the framework's own (schema validation,
 * unknown route, bad URL, bad JSON, wrong content type, body limit); only JSON bodies are
 * parsed. A 5xx body carries only `internal_error` and the request id; the detail goes to the log.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnavailableReason, isDatabaseBusy } from '../db/errors.js';
import { ApiError, type ErrorBody } from '../shared/errors.js';

function describeValidation(error: FastifyError): string {
  const context = error.validationContext ?? 'request';
  const first = error.validation?.slice(0, 5).map((v) => {
    const where = v.instancePath ? v.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
    const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty;
    const field = [where, missing].filter(Boolean).join('.');
    return field ? `${field}: ${v.message ?? 'is invalid'}` : (v.message ?? 'is invalid');
  });
  return `${context}: ${first?.join('; ') ?? error.message}`;
}

/** Maps any thrown value to an ApiError. */
export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  const err = error as FastifyError;
  if (err?.validation) {
    const code = err.validationContext === 'querystring' ? 'invalid_query' : 'invalid_request';
    return new ApiError(code, { details: describeValidation(err) });
  }
  switch (err?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        'payload_too_large',
        { details: 'the JSON body is larger than 5 MB (5242880 bytes)' },
        { connection: 'close' },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_content_type', { details: 'the body must be sent as Content-Type: application/json' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', { details: 'the body is empty; send a JSON object' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', { details: 'the body is not valid JSON' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', { details: 'Content-Length does not match the body' });
    default:
      break;
  }
  // A write that did not get SQLite's write lock in time wrote nothing: the client may retry it.
  if (isDatabaseBusy(err)) {
    return new ApiError(
      'not_ready',
      { details: 'the database is busy with other writes and this one waited its limit; nothing was written: retry after Retry-After', retry_after_sec: 1 },
      { 'retry-after': '1' },
    );
  }
  const unavailable = databaseUnavailableReason(err);
  if (unavailable !== null) return serviceUnavailable(unavailable);
  // JSON.parse errors from the body parser carry statusCode 400 and a SyntaxError.
  if (err instanceof SyntaxError && err.statusCode === 400) {
    return new ApiError('invalid_json', { details: `the body is not valid JSON: ${err.message}` });
  }
  if (typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError('invalid_request', { details: err.message });
  }
  return null;
}

/** Retry-After of a request the database could not serve: about one connection attempt's wait away. */
export const DATABASE_RETRY_AFTER_SEC = 2;

/**
 * 503 `service_unavailable`: the database could not serve the request now (unreachable, a
 * statement past its time limit, out of disk: src/db/errors.ts); `reason` says which, and
 * whether a write may have been stored.
 */
export function serviceUnavailable(reason: string): ApiError {
  return new ApiError(
    'service_unavailable',
    {
      details: `${reason}; retry after Retry-After`,
      retry_after_sec: DATABASE_RETRY_AFTER_SEC,
    },
    { 'retry-after': String(DATABASE_RETRY_AFTER_SEC) },
  );
}

/**
 * Longest path parameter the router accepts. Portal tokens sign the team and document ids
 * (up to 100 and 64 characters) and come to about 300 characters at most.
 */
export const MAX_PARAM_LENGTH = 400;

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).send(error.body);
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a URL that is not valid
 * percent-encoding). No hook runs for these, so the request id and the JSON API's security
 * headers are set here; otherwise the framework would answer in its own shape.
 */
export function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', request.id);
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Content-Security-Policy', "default-src 'none';frame-ancestors 'none'");
  reply.header('X-Frame-Options', 'SAMEORIGIN');
  const apiError =
    error.code === 'FST_ERR_BAD_URL'
      ? new ApiError('invalid_request', { details: 'the URL is not valid percent-encoding' })
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new ApiError('invalid_request', { details: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters` })
        : (toApiError(error) ?? new ApiError('invalid_request', { details: 'the request could not be routed' }));
  sendApiError(reply, apiError);
}

export function registerErrorHandling(app: FastifyInstance): void {
  // Bodies are JSON only. Fastify also parses text/plain by default, which would hand a
  // string to routes that expect an object instead of refusing it as invalid_content_type.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError) {
      if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendApiError(reply, apiError);
    }
    request.log.error({ err: error }, 'unhandled error');
    const body: ErrorBody = { ok: false, error: 'internal_error', request_id: String(request.id) };
    return reply.code(500).send(body);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const body: ErrorBody = { ok: false, error: 'not_found', details: `no route ${request.method} ${request.url.split('?')[0]}` };
    return reply.code(404).send(body);
  });
}
