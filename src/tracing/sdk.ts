/**
 * The OpenTelemetry SDK, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (register.ts).
 *
 * - The `import-in-the-middle` loader hook is registered first, told by the instrumentations
 *   which modules to wrap (only those: `createAddHookMessageChannel`), so ESM imports of `pg`,
 *   `ioredis` and `node:http` are instrumented; Fastify is instrumented through its own
 *   diagnostics channel (`@fastify/otel`, `registerOnInitialization`).
 * - Spans are exported over OTLP/HTTP, protobuf by default or JSON with
 *   OTEL_EXPORTER_OTLP_PROTOCOL=http/json; the exporters read the endpoint and headers from the
 *   standard variables. Batched (OTEL_BSP_SCHEDULE_DELAY, default 5 s).
 * - Before export, every span is scrubbed (scrub.ts): URLs lose their tokens and secret query
 *   parameters, and any e-mail address or secret-named attribute is redacted, whatever the
 *   instrumentation recorded.
 */
import module from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import type { TracingConfig } from '../config/tracing.js';
import { tokenPathsFromEnv } from '../config/tracing.js';
import { enableSpans } from '../shared/tracing.js';
import { ScrubbingSpanProcessor } from './scrub.js';

/** Requests that would only add noise to the traces: probes and scrapes. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

async function traceExporter() {
  const protocol = (process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? process.env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  if (protocol !== 'http/protobuf') process.stderr.write(`invoicing: OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; exporting OTLP/HTTP protobuf\n`);
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

export async function startTracing(config: TracingConfig): Promise<void> {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  module.register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const [{ NodeSDK }, { BatchSpanProcessor }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, { FastifyOtelInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
      import('@fastify/otel'),
    ]);
  const sdk = new NodeSDK({
    serviceName: config.serviceName,
    spanProcessors: [new ScrubbingSpanProcessor(tokenPathsFromEnv()), new BatchSpanProcessor(await traceExporter())],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] as string),
        // Headers are never recorded (the instrumentation records none unless asked).
      }),
      new FastifyOtelInstrumentation({ registerOnInitialization: true, ignorePaths: (route) => UNTRACED_PATHS.has(route.url) }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      // Command names only: arguments would carry rate-limit keys (key ids, client addresses).
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  enableSpans();
  // A command that ends by itself (migrate, backup) flushes what is batched; a server stopped by a
  // signal exits without waiting, losing at most OTEL_BSP_SCHEDULE_DELAY of spans.
  process.once('beforeExit', () => void sdk.shutdown().catch(() => undefined));
}
