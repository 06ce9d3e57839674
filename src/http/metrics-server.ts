/**
 * `invoicing worker`'s optional metrics listener (INVOICING_WORKER_METRICS_PORT): GET /metrics
 * in the Prometheus text format (process metrics and delivery outcomes), nothing else. With
 * INVOICING_METRICS_TOKEN set it needs `Authorization: Bearer <token>`, like an API node's.
 */
import http from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { deliveryOutcomes, workerHeartbeats } from '../shared/delivery-metrics.js';
import { safeEqual } from '../shared/tokens.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  host: string;
  port: number;
  token: string | null;
  /** Adds the metrics collected on scrape (the worker's database gauges: operations-metrics.ts). */
  register?: (registry: Registry) => void;
}): Promise<MetricsServer> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'invoicing_worker_' });
  registry.registerMetric(deliveryOutcomes);
  registry.registerMetric(workerHeartbeats);
  options.register?.(registry);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error: 'not_found' }));
      return;
    }
    if (options.token !== null) {
      const auth = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!auth || !safeEqual(auth[1] as string, options.token)) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="metrics"' });
        res.end(JSON.stringify({ ok: false, error: 'unauthorized', code: 'api_key_missing' }));
        return;
      }
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
