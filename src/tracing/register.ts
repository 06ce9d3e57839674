/**
 * Starts OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set, and does nothing else
 * otherwise: not one module of the SDK is loaded and no loader hook is added, so a service
 * without tracing pays nothing for it.
 *
 * It must run before the service's modules are loaded (the instrumentations patch `http`, `pg`,
 * `ioredis` and Fastify as they are imported): the `invoicing` command's entry
 * (src/cli/entry.ts) awaits it first, and `node --import ./dist/src/tracing/register.js
 * dist/src/server.js` (what `npm start` runs) loads it the same way.
 */
import { tracingConfig } from '../config/tracing.js';

const config = tracingConfig();
if (config !== null) {
  const { startTracing } = await import('./sdk.js');
  await startTracing(config);
}
