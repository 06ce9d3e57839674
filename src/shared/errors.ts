/**
 * Closed error codes and the one place that maps them to HTTP statuses. The wire shape is
 * the spec's: `{ok:false, error, details?, missing_fields?, ...}`; 401 and 429 put
 * `unauthorized` / `rate_limited` in `error` and the reason in `code`.
 */
import { Type, type Static } from '@sinclair/typebox';

export const ERROR_STATUS = {
  // 400
  invalid_json: 400,
  invalid_content_type: 400,
  invalid_query: 400,
  invalid_request: 400,
  validation_failed: 400,
  prohibited_field: 400,
  partial_update_not_supported: 400,
  invalid_webhook_url: 400,
  // 401 (error = unauthorized, code = one of these)
  api_key_missing: 401,
  api_key_invalid: 401,
  api_key_inactive: 401,
  api_key_over_tariff_limit: 401,
  // 403
  tenant_scope_not_resolved: 403,
  seller_org_not_allowed: 403,
  seller_org_over_tariff_limit: 403,
  webhook_endpoints_over_tariff_limit: 403,
  storage_over_tariff_limit: 403,
  // 404
  document_not_found: 404,
  revision_not_found: 404,
  not_found: 404,
  webhook_endpoint_not_found: 404,
  // 405
  method_not_allowed: 405,
  // 409
  public_id_conflict: 409,
  public_id_mismatch: 409,
  invalid_status_transition: 409,
  document_locked: 409,
  sending_restricted: 409,
  idempotency_key_reused: 409,
  idempotency_request_in_progress: 409,
  revision_conflict: 409,
  webhook_backlog_full: 409,
  // 408
  request_timeout: 408,
  // 413
  payload_too_large: 413,
  // 429 (error = rate_limited, code = scope and window)
  rate_limited: 429,
  // 500, 503
  internal_error: 500,
  not_ready: 503,
  render_queue_full: 503,
  render_timeout: 503,
  shutting_down: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const AUTH_ERROR_CODES = ['api_key_missing', 'api_key_invalid', 'api_key_inactive', 'api_key_over_tariff_limit', 'metrics_token_invalid'] as const;
export type AuthErrorCode = (typeof AUTH_ERROR_CODES)[number];

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
          '401: api_key_missing, api_key_invalid, api_key_inactive or api_key_over_tariff_limit (metrics_token_invalid on /metrics). 429: the scope and window that refused: ip_per_sec, key_per_sec, key_per_min, key_per_day, team_per_sec, team_per_min, team_per_day, link_per_min, or demo_per_sec (the published demo token\'s own rate).',
      }),
    ),
    details: Type.Optional(
      Type.String({
        // 100 paths of at most 32 segments of at most ~106 characters each (names are cut at 100).
        maxLength: 400_000,
        description: 'Human-readable explanation; for field errors, the offending paths (at most 100, see `errors_not_listed`).',
      }),
    ),
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
        { maxItems: 100, description: 'The field errors of a refused write: the first 100 (the rest are counted in `errors_not_listed`).' },
      ),
    ),
    errors_not_listed: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'How many further field errors `errors` leaves out (it lists at most 100); absent when it lists them all.',
      }),
    ),
    document_public_id: Type.Optional(Type.String({ description: 'The document concerned, when there is one.' })),
    document_kind: Type.Optional(Type.String({ description: 'Kind of the document concerned (`invoice`).' })),
    demo_public_id: Type.Optional(Type.String({ description: 'In demo mode: the id of the published sample document.' })),
    retry_after_sec: Type.Optional(Type.Integer({ minimum: 1, description: '429 and 503: seconds to wait before retrying (as the Retry-After header).' })),
    request_id: Type.Optional(Type.String({ description: '500 only: the request id to quote to the operator.' })),
  },
  { $id: 'ErrorBody', additionalProperties: false, description: 'The error shape of every non-2xx response.' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export class ApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    extra: Omit<ErrorBody, 'ok' | 'error'> = {},
    headers: Record<string, string> = {},
  ) {
    super(extra.details ?? code);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
    this.body = { ok: false, error: code, ...extra };
    this.headers = headers;
  }

  /** 401: `error` is always `unauthorized`, the reason goes to `code`. */
  static unauthorized(code: AuthErrorCode, details: string): ApiError {
    const err = new ApiError('api_key_missing', { details }, { 'WWW-Authenticate': 'Bearer realm="invoicing"' });
    err.body.error = 'unauthorized';
    err.body.code = code;
    return err;
  }
}
