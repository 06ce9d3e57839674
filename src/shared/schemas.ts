/**
 * Schemas shared by every module. Each is registered once with `app.addSchema` and
 * referenced by `$id`, so the OpenAPI document lists it under components.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody } from './errors.js';

export { ERROR_IDENTIFIERS, ErrorBody } from './errors.js';

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
  409: 'Conflict: `public_id_conflict`, `public_id_mismatch`, `invalid_status_transition`, `document_locked`, `sending_restricted`, `idempotency_key_reused`, `idempotency_request_in_progress`, `revision_conflict` or `webhook_backlog_full` (the webhook endpoint already holds 1,000 deliveries still to make).',
  413: 'The JSON body is larger than 5 MB: `payload_too_large`.',
  429: 'Rate limited: `error` is `rate_limited`, `code` names the scope and window, `retry_after_sec` says when to retry (also the Retry-After header).',
  500: 'Internal error: only `internal_error` and `request_id`; the detail is in the service log.',
  503: 'Unavailable for now, with `retry_after_sec` (also the Retry-After header): `service_unavailable`, the database could not serve the request (not reached within INVOICING_PG_CONNECT_TIMEOUT_MS, a statement past its time limit, no disk space left; `details` says whether a write may have been stored); `not_ready`, the database does not answer (`/readyz`) or, on SQLite, a write waited its limit for the write lock while other writes held it (nothing was written); `render_queue_full`, every PDF renderer is busy; `shutting_down`, the server is stopping.',
};

/** Error responses of a route, by status, each referencing ErrorBody. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = ref(ErrorBody, ERROR_DESCRIPTIONS[status] ?? 'Error');
  return out;
}
