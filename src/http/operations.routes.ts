/** Liveness, readiness (checks the database) and Prometheus metrics, for operators. */
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { DatabaseHandle } from '../db/database.js';
import { ApiError } from '../shared/errors.js';
import { safeEqual } from '../shared/tokens.js';
import { errorResponses } from '../shared/schemas.js';
import type { Metrics } from './metrics.js';
import { NO_SECURITY } from './openapi.js';

const Health = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true.' }),
    status: Type.String({ description: '`alive` or `ready`.' }),
  },
  { description: 'The service is up.' },
);

const Readiness = Type.Object(
  {
    ok: Type.Literal(true, { description: 'Always true.' }),
    status: Type.Literal('ready', { description: 'Always `ready`: this node serves requests.' }),
    database: Type.Literal('ok', { description: 'The database answered a query just now (without it the answer is 503 `not_ready`).' }),
    redis: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('none')], {
      description:
        'The shared rate-limit counters: `ok`, Redis answers; `degraded`, Redis does not answer and this process counts the limits on its own until it does (the node stays ready); `none`, no REDIS_URL.',
    }),
  },
  { description: 'The node is ready to serve: the database answers.' },
);

/** `Authorization: Bearer <token>` against INVOICING_METRICS_TOKEN, compared in constant time. */
function checkMetricsToken(expected: string, authorization: string | undefined): void {
  const given = /^Bearer\s+(\S{1,1024})\s*$/i.exec(authorization ?? '')?.[1];
  if (given === undefined || !safeEqual(given, expected)) {
    throw ApiError.unauthorized('metrics_token_invalid', 'send INVOICING_METRICS_TOKEN as Authorization: Bearer <token>');
  }
}

export function registerOperationsRoutes(
  app: FastifyInstance,
  deps: {
    database: DatabaseHandle;
    metrics: Metrics;
    /** The exposition `/metrics` answers: this process's registry, or the whole machine's (src/cluster/). */
    metricsText?: () => Promise<string>;
    metricsToken?: string | null;
    /** The rate-limit counters in Redis: ok, degraded (counted in the process) or none (no REDIS_URL). */
    redisState?: () => 'ok' | 'degraded' | 'none';
  },
): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness',
        description: 'Answers 200 while the process serves requests. Needs no key.',
        tags: ['operations'],
        security: NO_SECURITY,
        response: { 200: Health, ...errorResponses(429) },
      },
    },
    async () => ({ ok: true as const, status: 'alive' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness',
        description:
          'Answers 200 when the database answers a query, with the state of the shared rate-limit counters (Redis); 503 `not_ready` when the database does not answer within INVOICING_PG_CONNECT_TIMEOUT_MS (PostgreSQL). Redis not answering does not make the node unready. Needs no key.',
        tags: ['operations'],
        security: NO_SECURITY,
        response: { 200: Readiness, ...errorResponses(429, 503) },
      },
    },
    async (request) => {
      try {
        await sql`select 1`.execute(deps.database.db);
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        throw new ApiError('not_ready', { details: 'the database does not answer' });
      }
      return { ok: true as const, status: 'ready' as const, database: 'ok' as const, redis: deps.redisState?.() ?? 'none' };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description:
          'Requests and latency by route and status, rate-limit refusals and process metrics, in the Prometheus text format. When INVOICING_METRICS_TOKEN is set, needs `Authorization: Bearer <token>` (401 unauthorized with code metrics_token_invalid without it); otherwise open, so keep it off the public network.',
        tags: ['operations'],
        security: NO_SECURITY,
        response: {
          200: { description: 'Prometheus exposition format.', content: { 'text/plain': { schema: Type.String() } } },
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      if (deps.metricsToken) checkMetricsToken(deps.metricsToken, request.headers.authorization);
      const text = await (deps.metricsText?.() ?? deps.metrics.registry.metrics());
      reply.type(deps.metrics.registry.contentType);
      return text;
    },
  );
}
