/**
 * The caller of a request, as the authentication hook (http/auth.ts) resolved it. Here, below
 * http/, so that module routes can require it without importing http/.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/errors.js';
import type { AuthContext } from './auth.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /**
     * The route uses the team's list version (`auth.listState`): authentication reads it with
     * the key, in the same statement (one round trip for a cached list page or GET detail).
     */
    readsListState?: boolean;
  }
}

/** The caller of an authenticated route (the hook guarantees it). */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw ApiError.unauthorized('api_key_missing', 'this route needs an API key');
  return request.auth;
}
