/** Prometheus metrics: requests and latency by route and status, rate-limit refusals. */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { deliveryOutcomes, workerHeartbeats } from '../shared/delivery-metrics.js';

export interface Metrics {
  registry: Registry;
  rateLimitRefusals: Counter<'code'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'invoicing_' });
  const rateLimitRefusals = new Counter({
    name: 'invoicing_rate_limit_refusals_total',
    help: 'Requests refused with 429, by the limit that refused them',
    labelNames: ['code'],
    registers: [registry],
  });
  // E-mail, EDO and webhook delivery outcomes (counted by the workers of this process).
  registry.registerMetric(deliveryOutcomes);
  registry.registerMetric(workerHeartbeats);
  return { registry, rateLimitRefusals };
}

export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  const requests = new Counter({
    name: 'invoicing_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [metrics.registry],
  });
  const duration = new Histogram({
    name: 'invoicing_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [metrics.registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL: ids and tokens stay out of label values.
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
}
