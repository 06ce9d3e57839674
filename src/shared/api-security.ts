/**
 * The OpenAPI security requirements of the routes, by kind. The schemes themselves are
 * declared in http/openapi.ts; these live here so that module routes need not import http/.
 */
/** Reads: the key in x-api-key, as a Bearer token, or in the api_key query parameter. */
export const API_SECURITY: Array<Record<string, string[]>> = [{ ApiKeyHeader: [] }, { BearerAuth: [] }, { ApiKeyQuery: [] }];
/** Writes: a key in the query is refused (401 api_key_missing), so only the two headers. */
export const API_WRITE_SECURITY: Array<Record<string, string[]>> = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];
/** Open routes (descriptions, health, metrics): stated explicitly, so no reader assumes a key. */
export const NO_SECURITY: Array<Record<string, string[]>> = [];
