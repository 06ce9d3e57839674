/**
 * Whether traces are exported (operating contract, section 8): the standard OpenTelemetry
 * variables, read before anything else of the service is loaded (src/tracing/register.ts), so
 * kept apart from config.ts and importing nothing. The SDK reads the rest of the OTEL_*
 * variables itself (OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER, …).
 */
export interface TracingConfig {
  /** OTEL_SERVICE_NAME, default `invoicing`. */
  serviceName: string;
}

export function tracingConfig(env: NodeJS.ProcessEnv = process.env): TracingConfig | null {
  const endpoint = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim() || (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim();
  if (endpoint === '' || (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return null;
  return { serviceName: (env.OTEL_SERVICE_NAME ?? '').trim() || 'invoicing' };
}

/** The share and portal bases' paths, for redacting their tokens from span URLs (the configuration's own parse is not loaded yet). */
export function tokenPathsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const pathOf = (url: string | undefined, fallback: string) => {
    try {
      return url ? new URL(url).pathname.replace(/\/+$/, '') : fallback;
    } catch {
      return fallback;
    }
  };
  const publicPath = pathOf(env.INVOICING_PUBLIC_URL, '');
  return [pathOf(env.INVOICING_SHARE_URL, `${publicPath}/s`), pathOf(env.INVOICING_PORTAL_URL, `${publicPath}/portal`)];
}
