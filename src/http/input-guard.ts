/**
 * Query and path parameters before schema validation (issue 10, docs/security.md "Input
 * bounds"). The app's ajv coerces query strings with `Number()`, which reads `0x10` as 16,
 * `1e3` as 1000, ` 5` as 5 and `Infinity` as a number; and a control character in a path or
 * query value reaches the database (PostgreSQL refuses U+0000 in text: a 500). So, on every
 * route:
 * - a query parameter the route declares as an integer is decimal digits only (at most 15, so
 *   the value is exact), given once; anything else is 400 `invalid_query` naming the parameter
 *   (the range is then checked by the schema, also `invalid_query`);
 * - any query value containing a control character (U+0000–U+001F, U+007F) is 400
 *   `invalid_query` naming the parameter;
 * - any path parameter containing one is 400 `invalid_request` naming the parameter.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/errors.js';

const DECIMAL = /^[0-9]{1,15}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

interface ObjectSchema {
  properties?: Record<string, { type?: unknown; anyOf?: Array<{ type?: unknown }> }>;
}

function integerParams(schema: unknown): string[] {
  const props = (schema as ObjectSchema | undefined)?.properties ?? {};
  return Object.entries(props)
    .filter(([, p]) => p.type === 'integer' || p.anyOf?.some((a) => a.type === 'integer'))
    .map(([name]) => name);
}

const cache = new WeakMap<object, string[]>();

function integersOf(request: FastifyRequest): string[] {
  const schema = request.routeOptions.schema?.querystring as object | undefined;
  if (!schema) return [];
  let names = cache.get(schema);
  if (!names) {
    names = integerParams(schema);
    cache.set(schema, names);
  }
  return names;
}

function checkQuery(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query || typeof query !== 'object') return;
  for (const [name, value] of Object.entries(query)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && CONTROL.test(v)) || CONTROL.test(name)) {
      throw new ApiError('invalid_query', { details: `query parameter ${JSON.stringify(name)} contains a control character` });
    }
  }
  for (const name of integersOf(request)) {
    const value = query[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !DECIMAL.test(value)) {
      throw new ApiError('invalid_query', {
        details: `${name} must be given once, as a decimal integer (digits 0–9 only, at most 15)`,
      });
    }
  }
}

function checkParams(request: FastifyRequest): void {
  const params = request.params as Record<string, unknown> | undefined;
  if (!params || typeof params !== 'object') return;
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'string' && CONTROL.test(value)) {
      throw new ApiError('invalid_request', { details: `path parameter ${name} contains a control character` });
    }
  }
}

export function registerInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    checkParams(request);
    checkQuery(request);
  });
}
