/**
 * 405 with an Allow header for a known path asked with another method (Fastify alone would
 * answer 404). Routes are collected as they are registered; `addRefusals()` goes last.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/errors.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function trackRoutesForMethodNotAllowed(app: FastifyInstance): { addRefusals(): void } {
  const byPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = byPath.get(route.url) ?? new Set<string>();
    for (const m of methods) set.add(m);
    byPath.set(route.url, set);
  });
  return {
    addRefusals() {
      for (const [url, present] of [...byPath]) {
        const missing = METHODS.filter((m) => !present.has(m));
        if (missing.length === 0) continue;
        const allow = [...present].join(', ');
        app.route({
          method: missing,
          url,
          schema: { hide: true },
          handler: async (_request, reply) => {
            reply.header('Allow', allow);
            throw new ApiError('method_not_allowed', { details: `${url.replace(/:(\w+)/g, '{$1}')} accepts ${allow}` });
          },
        });
      }
    },
  };
}
