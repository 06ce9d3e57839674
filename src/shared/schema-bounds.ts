/**
 * Default bounds for every route schema (docs/security.md "Input bounds"): a string
 * with no `maxLength`, `enum` or `const` gets a `maxLength`, an integer its `format` and range,
 * an array its `maxItems`. Schemas state their real bounds where they matter (the invoice
 * payload, queries, headers); this pass only closes what a schema leaves open, on the very
 * objects the routes validate with and the OpenAPI description is generated from, so a new
 * route is bounded and passes the Spectral OWASP ruleset without anyone remembering to.
 *
 * Request parts validated by ajv (query, params, headers) enforce the added bounds; responses
 * are only serialized, and the defaults are above anything the service sends.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

/** A string without a bound of its own: far above any value the service sends or accepts. */
export const DEFAULT_STRING_MAX_LENGTH = 10_000;
/** An array without a bound of its own. */
export const DEFAULT_ARRAY_MAX_ITEMS = 10_000;
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

const FORMAT_MAX_LENGTH: Record<string, number> = { date: 10, 'date-time': 64, email: 320, uri: 2048 };

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(s: Schema): unknown[] {
  return Array.isArray(s.type) ? s.type : [s.type];
}

function boundOne(s: Schema): void {
  const types = typesOf(s);
  if (types.includes('string') && s.maxLength === undefined && s.enum === undefined && s.const === undefined) {
    s.maxLength = (typeof s.format === 'string' && FORMAT_MAX_LENGTH[s.format]) || DEFAULT_STRING_MAX_LENGTH;
  }
  if (types.includes('integer')) {
    if (s.minimum === undefined && s.exclusiveMinimum === undefined) s.minimum = 0;
    if (s.maximum === undefined && s.exclusiveMaximum === undefined) s.maximum = Number.MAX_SAFE_INTEGER;
    if (s.format === undefined) {
      const min = Number(s.minimum ?? s.exclusiveMinimum);
      const max = Number(s.maximum ?? s.exclusiveMaximum);
      s.format = min >= INT32_MIN && max <= INT32_MAX ? 'int32' : 'int64';
    }
  }
  if (types.includes('array') && s.maxItems === undefined) s.maxItems = DEFAULT_ARRAY_MAX_ITEMS;
}

const SUBSCHEMA_KEYS = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'schema'];
const SUBSCHEMA_LIST_KEYS = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];
const SUBSCHEMA_MAP_KEYS = ['properties', 'patternProperties', '$defs', 'definitions', 'content'];

/** Adds the default bounds to `schema` and every schema inside it, in place. Idempotent. */
export function boundSchema(schema: unknown, seen: WeakSet<object> = new WeakSet()): void {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const s = stack.pop();
    if (!isSchema(s) || seen.has(s)) continue;
    seen.add(s);
    boundOne(s);
    for (const key of SUBSCHEMA_KEYS) if (isSchema(s[key])) stack.push(s[key]);
    for (const key of SUBSCHEMA_LIST_KEYS) if (Array.isArray(s[key])) stack.push(...(s[key] as unknown[]));
    for (const key of SUBSCHEMA_MAP_KEYS) if (isSchema(s[key])) stack.push(...Object.values(s[key] as Schema));
  }
}

const bounded = new WeakSet<object>();

/**
 * Bounds every route's schemas (body, query, params, headers, responses) as the route is added,
 * before it is compiled, and the shared schemas its plugin registered with `addSchema`.
 */
export function registerSchemaBounds(app: FastifyInstance): void {
  app.addHook('onRoute', function (this: FastifyInstance, route: RouteOptions) {
    const schema = route.schema as Schema | undefined;
    if (schema) {
      for (const part of ['body', 'querystring', 'params', 'headers']) boundSchema(schema[part], bounded);
      if (isSchema(schema.response)) for (const r of Object.values(schema.response)) boundSchema(r, bounded);
    }
    for (const shared of Object.values(this.getSchemas())) boundSchema(shared, bounded);
  });
}
