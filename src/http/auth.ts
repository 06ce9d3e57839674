/**
 * Authentication hook for `/api/v1/*`: reads the key by the contract's precedence
 * (x-api-key, then Authorization: Bearer, then the api_key query parameter) and puts the
 * resolved caller on `request.auth`.
 */
import type { FastifyRequest } from 'fastify';
import type { AuthService, PresentedCredentials } from '../modules/teams/index.js';

function headerValue(request: FastifyRequest, name: string): string | null {
  const raw = request.headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** Credentials as presented; an Authorization header with another scheme is not an API key. */
export function presentedCredentials(request: FastifyRequest): PresentedCredentials {
  const isRead = request.method === 'GET' || request.method === 'HEAD';
  const tenantId = headerValue(request, 'x-tenant-id');
  const headerKey = headerValue(request, 'x-api-key');
  if (headerKey !== null) return { source: 'x-api-key', secret: headerKey, tenantId, isRead };
  const authorization = headerValue(request, 'authorization');
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  if (bearer?.[1]) return { source: 'authorization', secret: bearer[1], tenantId, isRead };
  const query = request.query as Record<string, unknown> | undefined;
  const queryKey = query && typeof query.api_key === 'string' && query.api_key.trim() !== '' ? query.api_key.trim() : null;
  if (queryKey !== null) return { source: 'query', secret: queryKey, tenantId, isRead };
  return { source: null, secret: null, tenantId, isRead };
}

export function authHook(auth: AuthService) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    // Routes that validate a cache by the team's list version get it read with the key.
    const listState = request.routeOptions.config?.readsListState === true;
    request.auth = await auth.authenticate(presentedCredentials(request), { listState });
  };
}
