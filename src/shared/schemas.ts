/**
 * Schemas shared by every module. Each is registered once with `app.addSchema` and
 * referenced by `$id`, so the OpenAPI document lists it under components.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AUTH_ERROR_CODES, ERROR_STATUS } from './errors.js';

/** Every value `error` can take: 401 and 429 carry their reason in `code` instead. */
export const ERROR_IDENTIFIERS = [
  ...Object.keys(ERROR_STATUS).filter((c) => !(AUTH_ERROR_CODES as readonly string[]).includes(c)),
  'unauthorized',
];

export const ErrorBody = Type.Object(
  {
    ok: Type.Literal(false, { description: 'Always false for an error.' }),
    error: Type.Union(
      ERROR_IDENTIFIERS.map((c) => Type.Literal(c)),
      {
        description:
          'Error identifier. `unauthorized` for every 401 and `rate_limited` for every 429 (the reason is in `code`). The list is closed: a new identifier comes with a new API version.',
      },
    ),
    code: Type.Optional(
      Type.String({
        description:
          '401: api_key_missing, api_key_invalid, api_key_inactive or api_key_over_tariff_limit. 429: the scope and window that refused, e.g. ip_per_sec, key_per_min, team_per_day.',
      }),
    ),
    details: Type.Optional(Type.String({ description: 'Human-readable explanation; for field errors, every offending path.' })),
    missing_fields: Type.Optional(
      Type.Array(Type.String(), { description: 'Every required path that is missing, e.g. `items[2].price`.' }),
    ),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            field: Type.String({ description: 'Path of the offending field.' }),
            code: Type.String({ description: 'Machine-readable reason.' }),
            message: Type.String({ description: 'Human-readable reason.' }),
          },
          { additionalProperties: true },
        ),
        { description: 'Every field error of a refused write.' },
      ),
    ),
    document_public_id: Type.Optional(Type.String({ description: 'The document concerned, when there is one.' })),
    document_kind: Type.Optional(Type.String({ description: 'Kind of the document concerned (`invoice`).' })),
    demo_public_id: Type.Optional(Type.String({ description: 'In demo mode: the id of the published sample document.' })),
    retry_after_sec: Type.Optional(Type.Integer({ minimum: 1, description: '429 only: seconds to wait before retrying.' })),
    request_id: Type.Optional(Type.String({ description: '500 only: the request id to quote to the operator.' })),
  },
  { $id: 'ErrorBody', additionalProperties: false, description: 'The error shape of every non-2xx response.' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** A `$ref` to a registered schema, typed as the schema itself; `description` becomes the response's. */
export function ref<T extends TSchema>(schema: T, description?: string): T {
  if (!schema.$id) throw new Error('ref() needs a schema with $id');
  const out: Record<string, unknown> = { $ref: `${schema.$id}#` };
  if (description) out.description = description;
  return Type.Unsafe<Static<T>>(out) as unknown as T;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: `invalid_json`, `invalid_content_type`, `invalid_query`, `invalid_request`, `validation_failed` (with `missing_fields` and `errors`), `prohibited_field`, `partial_update_not_supported` or `invalid_webhook_url` (with the reason in `details`).',
  401: 'Authentication failed: `error` is `unauthorized` and `code` is api_key_missing, api_key_invalid, api_key_inactive or api_key_over_tariff_limit.',
  403: 'Scope, seller or tariff problem: `tenant_scope_not_resolved`, `seller_org_not_allowed`, `seller_org_over_tariff_limit` or `webhook_endpoints_over_tariff_limit`.',
  404: 'Not found: `document_not_found` (in demo mode with `demo_public_id`) `webhook_endpoint_not_found` (unknown or another team’s endpoint) or `not_found` for an unknown route.',
  405: 'The path exists but not with this method: `method_not_allowed` (see the Allow header).',
  409: 'Conflict: `public_id_conflict`, `public_id_mismatch`, `invalid_status_transition`, `document_locked`, `sending_restricted`, `idempotency_key_reused`, `idempotency_request_in_progress` or `revision_conflict`.',
  413: 'The JSON body is larger than 5 MB: `payload_too_large`.',
  429: 'Rate limited: `error` is `rate_limited`, `code` names the scope and window, `retry_after_sec` says when to retry (also the Retry-After header).',
  500: 'Internal error: only `internal_error` and `request_id`; the detail is in the service log.',
  503: 'Not ready: `not_ready`.',
};

/** Error responses of a route, by status, each referencing ErrorBody. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = ref(ErrorBody, ERROR_DESCRIPTIONS[status] ?? 'Error');
  return out;
}
