/**
 * Closed error codes and the one place that maps them to HTTP statuses. The wire shape is
 * the spec's: `{ok:false, error, details?, missing_fields?, ...}`; 401 and 429 put
 * `unauthorized` / `rate_limited` in `error` and the reason in `code`.
 */

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
  // 404
  document_not_found: 404,
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
  // 413
  payload_too_large: 413,
  // 429 (error = rate_limited, code = scope and window)
  rate_limited: 429,
  // 500, 503
  internal_error: 500,
  not_ready: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const AUTH_ERROR_CODES = ['api_key_missing', 'api_key_invalid', 'api_key_inactive', 'api_key_over_tariff_limit'] as const;
export type AuthErrorCode = (typeof AUTH_ERROR_CODES)[number];

export interface ErrorBody {
  ok: false;
  error: string;
  code?: string;
  details?: string;
  missing_fields?: string[];
  document_public_id?: string;
  document_kind?: string;
  demo_public_id?: string;
  retry_after_sec?: number;
  request_id?: string;
  errors?: Array<{ field: string; code: string; message: string }>;
}

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
