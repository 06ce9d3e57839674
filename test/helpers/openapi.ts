/**
 * Validates responses against the published OpenAPI document (the one served at
 * /api/openapi.json), so a response that drifts from its description fails the test.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

type OpenApiDoc = {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
};

export class SpecValidator {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction | null>();
  private readonly routes: Array<{ template: string; regex: RegExp }>;

  constructor(private readonly doc: OpenApiDoc) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema({ $id: 'openapi.json', components: doc.components ?? {} });
    this.routes = Object.keys(doc.paths).map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** The OpenAPI path template a concrete path belongs to (static templates win). */
  templateFor(path: string): string | undefined {
    const matches = this.routes.filter((r) => r.regex.test(path));
    matches.sort((a, b) => (a.template.includes('{') ? 1 : 0) - (b.template.includes('{') ? 1 : 0));
    return matches[0]?.template;
  }

  /** Throws with the schema errors when `body` does not match the documented response. */
  check(method: string, url: string, status: number, contentType: string, body: unknown): void {
    const path = url.split('?')[0] ?? url;
    const template = this.templateFor(path);
    if (!template) {
      // An undocumented path is only ever an unknown route: 404 in the error shape.
      if (status === 404) return this.checkErrorBody(body);
      throw new Error(`no documented path for ${method} ${path}`);
    }
    const operation = this.doc.paths[template]?.[method.toLowerCase()];
    if (!operation) {
      // The 405 refusals are deliberately not separate operations; they use ErrorBody.
      if (status === 405 || status === 429) return this.checkErrorBody(body);
      throw new Error(`no documented operation ${method} ${template}`);
    }
    const response = operation.responses?.[String(status)];
    if (!response) {
      // Rate limiting and framework refusals may precede any route; all use ErrorBody.
      if (status >= 400) return this.checkErrorBody(body);
      throw new Error(`status ${status} is not documented for ${method} ${template}`);
    }
    const mediaType = contentType.split(';')[0]?.trim() ?? '';
    const schema = response.content?.[mediaType]?.schema;
    if (!schema) throw new Error(`content type ${mediaType} is not documented for ${status} of ${method} ${template}`);
    const key = `${method} ${template} ${status} ${mediaType}`;
    let validate = this.cache.get(key);
    if (validate === undefined) {
      validate = this.ajv.compile(rewriteRefs(schema) as object);
      this.cache.set(key, validate);
    }
    if (validate && !validate(body)) {
      throw new Error(`${key}: response does not match the published schema: ${this.ajv.errorsText(validate.errors)}`);
    }
  }

  private checkErrorBody(body: unknown): void {
    const validate = this.ajv.compile({ $ref: 'openapi.json#/components/schemas/ErrorBody' });
    if (!validate(body)) throw new Error(`error body does not match ErrorBody: ${this.ajv.errorsText(validate.errors)}`);
  }
}

/** `#/components/…` refs inside an operation point into the registered document. */
function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi.json${v}` : rewriteRefs(v);
    }
    return out;
  }
  return node;
}
