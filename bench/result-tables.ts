/**
 * What a bench run records per scenario (its row, the service's memory samples) and how it is
 * written out: the markdown tables of bench/results/<timestamp>.md.
 */

export interface Row {
  scenario: string;
  /** 1-based: which of the BENCH_ROUNDS rounds measured it. */
  round: number;
  method: string;
  path: string;
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  ratio_to_baseline: number | null;
  total_requests: number;
  non_2xx: number;
  errors: number;
  /** The service's CPU time (user + system, every process of it) per answered request, ms: steadier than req/s on a shared machine. */
  cpu_ms_per_request: number | null;
  /** The service's resident memory (every process of it, summed) before and after the scenario, MB (null for the baseline). */
  rss_start_mb: number | null;
  rss_end_mb: number | null;
  /** The service's RSS (MB) every BENCH_SAMPLE_SEC (30 s) during the scenario: whether memory levels off (a soak). */
  rss_samples_mb?: number[];
  /** The same samples in detail: what the RSS is made of (kernel's split; V8 heap and external memory from /metrics). */
  memory_samples?: MemorySample[];
  /** What the scenario's `after` reported (e.g. the event loop's delay over the run). */
  extra?: Record<string, unknown>;
}

/** One sample of the service's memory, MB (null where it could not be read). */
export interface MemorySample {
  /** Seconds since the scenario's measurement began. */
  at_s: number;
  rss: number | null;
  /** Anonymous memory (V8 heap, native allocations) and mapped files (code, libraries). */
  rss_anon: number | null;
  rss_file: number | null;
  /** V8 heap: used by live and not yet collected objects, and reserved (`process.memoryUsage()` heapUsed, heapTotal). */
  heap_used: number | null;
  heap_total: number | null;
  /** Memory of C++ objects bound to JS objects, Buffers included (`external`). */
  external: number | null;
  /** Requests the service has answered since it started (/metrics), and MB of log it has written to its stdout by then. */
  requests: number | null;
  log_written: number | null;
}

/** Process metrics of the service's /metrics (prom-client's defaults), MB. */
export async function heapFromMetrics(serviceUrl: string): Promise<Pick<MemorySample, 'heap_used' | 'heap_total' | 'external' | 'requests'>> {
  const none = { heap_used: null, heap_total: null, external: null, requests: null };
  try {
    const text = await (await fetch(`${serviceUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    const read = (name: string): number | null => {
      const match = new RegExp(`^invoicing_${name} (\\S+)$`, 'm').exec(text);
      return match ? Math.round((Number(match[1]) / 1048576) * 10) / 10 : null;
    };
    let requests = 0;
    for (const m of text.matchAll(/^invoicing_http_requests_total\{[^}]*\} (\S+)$/gm)) requests += Number(m[1]);
    return {
      heap_used: read('nodejs_heap_size_used_bytes'),
      heap_total: read('nodejs_heap_size_total_bytes'),
      external: read('nodejs_external_memory_bytes'),
      requests,
    };
  } catch {
    return none;
  }
}

export function markdownTable(rows: Row[], withRounds: boolean): string {
  const lines = [
    `| ${withRounds ? 'round | ' : ''}scenario | request | req/s | p50 ms | p99 ms | ratio to baseline | CPU ms/req | requests | non-2xx | errors | RSS MB before → after |`,
    `|${withRounds ? '---:|' : ''}---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const r of rows) {
    const ratio = r.ratio_to_baseline === null ? '–' : r.ratio_to_baseline.toFixed(2);
    lines.push(
      `| ${withRounds ? `${r.round} | ` : ''}${r.scenario} | ${r.method} ${r.path} | ${Math.round(r.requests_per_sec)} | ${r.p50_ms} | ${r.p99_ms} | ${ratio} | ${r.cpu_ms_per_request === null ? '–' : r.cpu_ms_per_request.toFixed(2)} | ${r.total_requests} | ${r.non_2xx} | ${r.errors} | ${r.rss_start_mb === null ? '–' : `${r.rss_start_mb} → ${r.rss_end_mb}`} |`,
    );
  }
  return lines.join('\n');
}

export function memoryTable(scenario: string, samples: MemorySample[]): string {
  const mb = (v: number | null): string => (v === null ? '–' : String(v));
  return [
    `Memory of the service during ${scenario} (MB; RSS split by the kernel, heap and external from /metrics; the service's stdout log, MB written so far):`,
    '',
    '| s | RSS | anon | file | heap used | heap total | external | requests answered | log written |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...samples.map(
      (s) =>
        `| ${s.at_s} | ${mb(s.rss)} | ${mb(s.rss_anon)} | ${mb(s.rss_file)} | ${mb(s.heap_used)} | ${mb(s.heap_total)} | ${mb(s.external)} | ${mb(s.requests)} | ${mb(s.log_written)} |`,
    ),
    '',
  ].join('\n');
}
