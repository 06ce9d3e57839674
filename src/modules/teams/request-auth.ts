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
}

/** The caller of an authenticated route (the hook guarantees it). */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw ApiError.unauthorized('api_key_missing', 'this route needs an API key');
  return request.auth;
}
