/**
 * Query and path parameters before schema validation (docs/security.md "Input bounds"). The
 * app's ajv coerces query strings with `Number()`, which reads `0x10` as 16, `1e3` as 1000,
 * ` 5` as 5 and `Infinity` as a number; and a control character in a path or query value
 * reaches the database (PostgreSQL refuses U+0000 in text: a 500). So, on every route:
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

/**
 * Shape limits checked on the raw JSON text before JSON.parse. A document may nest 32 levels and
 * sits at most one level down (`invoice`); its arrays hold at most 1000 entries and its objects
 * 200 properties (docs/security.md). The text limits are far looser, so a document just beyond
 * a bound still gets its precise error from validation; a body far beyond them (a 2,000,000-deep
 * array, an object of 400,000 properties) is refused after one cheap scan instead of costing
 * seconds of event loop in JSON.parse and the passes after it.
 */
export const JSON_TEXT_LIMITS = { nesting: 64, arrayEntries: 10_000, objectMembers: 2_000 } as const;

export type JsonShapeProblem = { code: 'too_deep' | 'too_many_items' | 'too_many_properties'; message: string };

/** Scans JSON text once (strings skipped) for nesting and container sizes beyond JSON_TEXT_LIMITS. */
export function jsonShapeProblem(text: string): JsonShapeProblem | null {
  const L = JSON_TEXT_LIMITS;
  const counts = new Int32Array(L.nesting + 2);
  const arrays = new Uint8Array(L.nesting + 2);
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to the next quote not escaped.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > L.nesting) return { code: 'too_deep', message: `the body is nested deeper than ${L.nesting} levels` };
      counts[depth] = 1;
      arrays[depth] = c === 0x5b ? 1 : 0;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x2c && depth > 0) {
      const n = ++counts[depth]!;
      if (arrays[depth] === 1 && n > L.arrayEntries) {
        return { code: 'too_many_items', message: `the body has an array of more than ${L.arrayEntries} entries` };
      }
      if (arrays[depth] === 0 && n > L.objectMembers) {
        return { code: 'too_many_properties', message: `the body has an object of more than ${L.objectMembers} properties` };
      }
    }
  }
  return null;
}

/** The JSON body parser: the framework's own (prototype-poisoning checks), after the shape scan. */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    const problem = jsonShapeProblem(text);
    if (problem) {
      done(
        new ApiError('validation_failed', {
          details: `1 field is invalid: ${problem.message}`,
          missing_fields: [],
          errors: [{ field: '', code: problem.code, message: problem.message }],
        }),
        undefined,
      );
      return;
    }
    parse(request, text, done);
  });
}
