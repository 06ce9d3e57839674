/**
 * Benchmark: the built service (`node dist/src/server.js`) in a child process, driven by
 * autocannon, against a physical-limit baseline: a bare `node:http` server, also a child
 * process, answering the same bytes (body and content type) as GET of one document. The ratio
 * column says what share of that limit each scenario reaches.
 *
 *   npm run bench                       # 10 s per scenario, 50 connections
 *   BENCH_DURATION=3 BENCH_CONNECTIONS=20 BENCH_SCENARIOS=catalog,baseline npm run bench
 *   BENCH_ROUNDS=5 BENCH_SCENARIOS=baseline,invoice-create,invoice-create-edo npm run bench
 *
 * BENCH_ROUNDS=N runs the selected scenarios N times in turn and adds a summary (bench/summary.ts):
 * per scenario the median and range over the rounds of req/s, of CPU ms per request, of the
 * ratio to the same round's baseline and of the ratio to the same round's BENCH_COMPARE_TO
 * scenario (default `invoice-create`). On a shared machine the figures of one run move by tens
 * of percent between runs; ratios taken within a round, then their median, are what a target
 * like "within 10 % of a plain create" can be judged by.
 *
 * The service runs on a temporary SQLite database unless DATABASE_URL is set (REDIS_URL is
 * passed on when set), bootstrapped with a team whose tariff has limits no run can reach and
 * INVOICING_IP_RATE_PER_SEC=1000000, so nothing is throttled. Results go to
 * bench/results/<timestamp>.md and .json.
 *
 * Adding a scenario: append to `scenarios` below. `setup` runs once before the measurement
 * (e.g. seed documents through the API); `body` is sent with every request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { boundsScenarios } from './bounds-scenarios.js';
import { hostileScenarios } from './hostile-scenarios.js';
import { ensureTemplate, listScenarios } from './list-scenarios.js';
import {
  cpuMs,
  freePort,
  gitCommit,
  killProcesses,
  REPO_ROOT,
  RESULTS_DIR,
  processTree,
  residentMb,
  rssMb,
  signalTree,
  startProcess,
  stopProcesses,
  waitForHealthy,
} from './processes.js';
import { runScaleOut } from './scale-out.js';
import { summarize, summaryMarkdown } from './summary.js';
import { runCleanups } from './cleanup.js';
import { startOtlpSink } from './otlp-sink.js';

/** dist/bench/run.js or bench/run.ts: the repository is two levels or one level up. */

const DURATION_SEC = positiveInt('BENCH_DURATION', 10);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 50);
const WARMUP_SEC = Math.min(2, DURATION_SEC);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()).filter(Boolean);
const ROUNDS = positiveInt('BENCH_ROUNDS', 1);
const COMPARE_TO = process.env.BENCH_COMPARE_TO?.trim() || 'invoice-create';
/** Seconds between the service's memory samples during a scenario. */
const SAMPLE_SEC = positiveInt('BENCH_SAMPLE_SEC', 30);
/**
 * BENCH_HEAPSNAPSHOT_AT=120,540: at these seconds of each service scenario, SIGUSR2 to the
 * service, which writes a heap snapshot when started with
 * BENCH_SERVICE_NODE_ARGS="--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=/tmp/snap". Writing
 * one stops the service for a few seconds: the scenario's figures then measure less.
 */
const HEAPSNAPSHOT_AT = (process.env.BENCH_HEAPSNAPSHOT_AT ?? '')
  .split(',')
  .filter((s) => s.trim() !== '')
  .map((s) => {
    const sec = Number(s);
    if (!Number.isInteger(sec) || sec < 1) throw new Error(`BENCH_HEAPSNAPSHOT_AT must list positive integers (got ${JSON.stringify(s)})`);
    return sec;
  });

const BENCH_KEY = 'ak_bench_0000000000000000000000000001';
const BENCH_INN = '7707083893';

export interface BenchContext {
  serviceUrl: string;
  baselineUrl: string;
  apiKey: string;
  /** The seller INN of the bench team's organization. */
  sellerInn: string;
  /** The service's DATABASE_URL and the bench team, for scenarios that seed data directly. */
  databaseUrl: string;
  teamId: string;
}

export interface Scenario {
  name: string;
  /** Which server the requests go to. */
  target: 'service' | 'baseline';
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Runs once before the measurement, e.g. to seed documents. */
  setup?: (ctx: BenchContext) => Promise<void>;
  /** Requests built per call (autocannon's `requests`), for scenarios whose requests differ. */
  requests?: () => autocannon.Request[];
  /** Measured this long instead of BENCH_DURATION (e.g. a soak). */
  durationSec?: number;
  /** Runs only when named in BENCH_SCENARIOS. */
  onlyWhenNamed?: boolean;
  /** Runs right before the measurement (after the warm-up), e.g. to start a load beside it. */
  before?: (ctx: BenchContext) => Promise<unknown>;
  /** Runs right after the measurement; what it answers is reported with the row (`extra`). */
  after?: (ctx: BenchContext) => Promise<Record<string, unknown>>;
}

const authHeaders = { 'x-api-key': BENCH_KEY };

/** In the order they run. Ratios are to the `baseline` scenario. */
export const scenarios: Scenario[] = [
  { name: 'baseline', target: 'baseline', method: 'GET', path: '/api/v1/invoices/baseline' },
  { name: 'healthz', target: 'service', method: 'GET', path: '/healthz' },
  { name: 'catalog', target: 'service', method: 'GET', path: '/api/v1/ref/catalog', headers: authHeaders },
  // List, search, read and create over BENCH_DOCS seeded documents (bench/list-scenarios.ts).
  ...listScenarios,
  // The worst hostile bodies near 5 MB (issue 10): their p99 is the event loop one holds.
  ...hostileScenarios,
  // Bounds under abuse and faults (bench/bounds-scenarios.ts), when named.
  ...boundsScenarios,
];

interface Row {
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
interface MemorySample {
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
async function heapFromMetrics(serviceUrl: string): Promise<Pick<MemorySample, 'heap_used' | 'heap_total' | 'external' | 'requests'>> {
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

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got ${JSON.stringify(raw)})`);
  return value;
}

function bootstrapFile(dir: string): string {
  const huge = { per_sec: 2_000_000_000, per_min: 2_000_000_000, per_day: 2_000_000_000 };
  const file = path.join(dir, 'bench-bootstrap.json');
  const content = {
    tariffs: { bench: { max_organizations: 10, max_api_keys: 10, key_rate: huge, team_rate: huge, emails_per_day: 2_000_000_000, external_share: true } },
    teams: [
      {
        id: 'bench',
        name: 'Benchmark team',
        tariff: 'bench',
        api_keys: [{ id: 990001, name: 'bench', secret: BENCH_KEY, active: true }],
        organizations: [
          { id: 'bench-org', name: 'ООО «Ромашка»', inn: BENCH_INN, kpp: '773601001', edo_id: '2BM-7707083893-2012052808301120', active: true },
        ],
        bank_accounts: [
          {
            id: 'bench-ba',
            organization_id: 'bench-org',
            bank_name: 'ПАО Сбербанк',
            bik: '044525225',
            account: '40702810938000000001',
            corr_account: '30101810400000000225',
            is_default: true,
          },
        ],
        managers: [{ id: 'bench-m', name: 'Иван Петров', email: 'ivan@romashka.example' }],
        signers: [{ id: 'bench-s', organization_id: 'bench-org', name: 'Анна Смирнова', position: 'Генеральный директор', role: 'director' }],
      },
    ],
  };
  fs.writeFileSync(file, JSON.stringify(content, null, 2));
  return file;
}

/** The baseline: a bare node:http server answering every request with the given bytes. */
const BASELINE_SCRIPT = `
const fs = require('node:fs');
const http = require('node:http');
const body = fs.readFileSync(process.env.BASELINE_BODY_FILE);
const type = process.env.BASELINE_CONTENT_TYPE;
http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': type, 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.BASELINE_PORT), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
`;

async function measure(url: string, scenario: Scenario, durationSec: number): Promise<autocannon.Result> {
  return autocannon({
    url: url + scenario.path,
    method: scenario.method,
    headers: { ...(scenario.body ? { 'content-type': 'application/json' } : {}), ...scenario.headers },
    ...(scenario.body ? { body: scenario.body } : {}),
    ...(scenario.requests ? { requests: scenario.requests() } : {}),
    connections: CONNECTIONS,
    duration: durationSec,
  });
}

function markdownTable(rows: Row[], withRounds: boolean): string {
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

function memoryTable(scenario: string, samples: MemorySample[]): string {
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

async function main(): Promise<void> {
  // BENCH_TOPOLOGY=two-nodes: two API nodes and a worker on PostgreSQL + Redis (bench/scale-out.ts).
  if (process.env.BENCH_TOPOLOGY === 'two-nodes') return runScaleOut();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-bench-'));
  const databaseUrl = process.env.DATABASE_URL || `sqlite:${path.join(tmp, 'bench.sqlite')}`;
  // BENCH_SERVICE_ROOT: another checkout's built service (its dist/), measured by this bench, so
  // two builds are compared in one sitting with the same scenarios (docs/performance.md).
  const serviceRoot = process.env.BENCH_SERVICE_ROOT ? path.resolve(process.env.BENCH_SERVICE_ROOT) : REPO_ROOT;
  const serverEntry = path.join(serviceRoot, 'dist', 'src', 'server.js');
  if (!fs.existsSync(serverEntry)) throw new Error(`${serverEntry} is missing: run npm run build there (npm run bench does it here)`);

  const servicePort = await freePort();
  const serviceLog = path.join(tmp, 'service.log');
  const serviceEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(servicePort),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    INVOICING_BOOTSTRAP_FILE: bootstrapFile(tmp),
    INVOICING_IP_RATE_PER_SEC: '1000000',
    INVOICING_DATA_DIR: path.join(tmp, 'data'),
    // create-with-dead-webhook registers an endpoint on this machine (bench/bounds-scenarios.ts).
    INVOICING_WEBHOOK_ALLOW_HTTP: 'true',
    INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
    LOG_LEVEL,
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    // Background-job settings pass through, e.g. INVOICING_IN_PROCESS_WORKER=false to measure
    // the API alone, or INVOICING_EDO_OPERATOR; the PostgreSQL settings (INVOICING_PG_POOL_SIZE);
    // and INVOICING_PROCESSES (default auto: one API process per core; 1 measures one process).
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => /^INVOICING_(IN_PROCESS_WORKER|EDO_\w+|PG_\w+|PROCESSES)$/.test(name))),
  };
  // BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service.
  const nodeArgs = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // BENCH_OTEL=1: the service traced, exporting to a receiver that discards (bench/otlp-sink.ts).
  const otlp = process.env.BENCH_OTEL === '1' ? await startOtlpSink(serviceRoot) : null;
  if (otlp) Object.assign(serviceEnv, otlp.env);
  const service = startProcess(process.execPath, [...(otlp?.nodeArgs ?? []), ...nodeArgs, serverEntry], serviceEnv, serviceLog);
  const serviceUrl = `http://127.0.0.1:${servicePort}`;
  // Two minutes: on a machine shared with other benches and test runs, starting takes more than 30 s.
  await waitForHealthy(`${serviceUrl}/healthz`, service, serviceLog, 120_000);

  // The baseline answers exactly what the service answers for one document (GET detail).
  const templateId = await ensureTemplate({ serviceUrl, apiKey: BENCH_KEY, sellerInn: BENCH_INN });
  const detail = await fetch(`${serviceUrl}/api/v1/invoices/${templateId}`, { headers: authHeaders });
  if (detail.status !== 200) throw new Error(`GET of the template document answered ${detail.status}: ${await detail.text()}`);
  const detailBody = Buffer.from(await detail.arrayBuffer());
  const bodyFile = path.join(tmp, 'detail.body');
  fs.writeFileSync(bodyFile, detailBody);
  const baselinePort = await freePort();
  const baselineLog = path.join(tmp, 'baseline.log');
  const baseline = startProcess(
    process.execPath,
    ['-e', BASELINE_SCRIPT],
    {
      PATH: process.env.PATH,
      BASELINE_PORT: String(baselinePort),
      BASELINE_BODY_FILE: bodyFile,
      BASELINE_CONTENT_TYPE: detail.headers.get('content-type') ?? 'application/json',
    },
    baselineLog,
  );
  const baselineUrl = `http://127.0.0.1:${baselinePort}`;
  await waitForHealthy(`${baselineUrl}/`, baseline, baselineLog, 120_000);

  // The service's processes: the primary and its API processes (INVOICING_PROCESSES), or one.
  const serviceProcesses = service.pid === undefined ? 0 : processTree(service.pid).length;
  const ctx: BenchContext = { serviceUrl, baselineUrl, apiKey: BENCH_KEY, sellerInn: BENCH_INN, databaseUrl, teamId: 'bench' };
  const selected = scenarios.filter((s) => (ONLY ? ONLY.includes(s.name) : !s.onlyWhenNamed));
  const rows: Row[] = [];
  process.stdout.write(
    `Benchmark: ${selected.length} scenario(s), ${DURATION_SEC} s each after a ${WARMUP_SEC} s warm-up, ${CONNECTIONS} connections, ` +
      `database ${databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'}, LOG_LEVEL=${LOG_LEVEL}, ` +
      `INVOICING_PROCESSES=${process.env.INVOICING_PROCESSES ?? 'auto'} (${serviceProcesses} processes)\n`,
  );
  for (let round = 1; round <= ROUNDS; round++) for (const scenario of selected) {
    const url = scenario.target === 'service' ? serviceUrl : baselineUrl;
    // Every round: setups are idempotent (the seeding is done once; the update pool takes back
    // the documents whose answers a run's end cut off).
    await scenario.setup?.(ctx);
    await measure(url, scenario, WARMUP_SEC);
    const rssStart = scenario.target === 'service' ? rssMb(service.pid) : null;
    const cpuStart = scenario.target === 'service' ? cpuMs(service.pid) : null;
    const rssSamples: number[] = [];
    const memorySamples: MemorySample[] = [];
    const startedAt = Date.now();
    const timers: NodeJS.Timeout[] = [];
    if (scenario.target === 'service') {
      timers.push(
        setInterval(() => {
          const resident = residentMb(service.pid);
          if (resident !== null) rssSamples.push(resident.rss);
          const at = Math.round((Date.now() - startedAt) / 1000);
          void heapFromMetrics(serviceUrl).then((heap) => {
            // Read after the request count: a line still to be written shows as log short of requests.
            const logWritten = fs.existsSync(serviceLog) ? Math.round((fs.statSync(serviceLog).size / 1048576) * 10) / 10 : null;
            memorySamples.push({ at_s: at, rss: resident?.rss ?? null, rss_anon: resident?.anon ?? null, rss_file: resident?.file ?? null, ...heap, log_written: logWritten });
          });
        }, SAMPLE_SEC * 1000),
      );
      // To every process of the service: each API process writes its own snapshot.
      for (const sec of HEAPSNAPSHOT_AT) timers.push(setTimeout(() => signalTree(service.pid, 'SIGUSR2'), sec * 1000));
    }
    await scenario.before?.(ctx);
    const result = await measure(url, scenario, scenario.durationSec ?? DURATION_SEC).finally(() => {
      for (const timer of timers) clearTimeout(timer);
    });
    const extra = await scenario.after?.(ctx);
    const cpuEnd = scenario.target === 'service' ? cpuMs(service.pid) : null;
    const rssEnd = scenario.target === 'service' ? rssMb(service.pid) : null;
    rows.push({
      scenario: scenario.name,
      round,
      method: scenario.method,
      path: scenario.path,
      requests_per_sec: result.requests.average,
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      ratio_to_baseline: null,
      cpu_ms_per_request:
        cpuStart !== null && cpuEnd !== null && result.requests.total > 0 ? (cpuEnd - cpuStart) / result.requests.total : null,
      total_requests: result.requests.total,
      non_2xx: result.non2xx,
      errors: result.errors,
      rss_start_mb: rssStart,
      rss_end_mb: rssEnd,
      ...(rssSamples.length > 0 ? { rss_samples_mb: rssSamples } : {}),
      ...(memorySamples.length > 0 ? { memory_samples: memorySamples.sort((a, b) => a.at_s - b.at_s) } : {}),
      ...(extra && Object.keys(extra).length > 0 ? { extra } : {}),
    });
    process.stdout.write(`  ${ROUNDS > 1 ? `round ${round}: ` : ''}${scenario.name}: ${Math.round(result.requests.average)} req/s\n`);
  }
  for (const row of rows) {
    const base = rows.find((r) => r.scenario === 'baseline' && r.round === row.round);
    row.ratio_to_baseline = base && base.requests_per_sec > 0 ? row.requests_per_sec / base.requests_per_sec : null;
  }
  const summary = ROUNDS > 1 ? summarize(rows, COMPARE_TO) : [];

  const startedAt = new Date();
  const meta = {
    date: startedAt.toISOString(),
    commit: gitCommit(serviceRoot),
    node: process.version,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    load_average_1m: Number(os.loadavg()[0]?.toFixed(2)),
    duration_sec: DURATION_SEC,
    warmup_sec: WARMUP_SEC,
    connections: CONNECTIONS,
    database: databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres',
    redis: Boolean(process.env.REDIS_URL),
    log_level: LOG_LEVEL,
    traced: otlp !== null,
    invoicing_processes: process.env.INVOICING_PROCESSES ?? 'auto',
    rounds: ROUNDS,
    compare_to: ROUNDS > 1 ? COMPARE_TO : null,
    /** Processes of the service at start: with several API processes, the primary too. */
    service_processes: serviceProcesses,
  };
  const table = markdownTable(rows, ROUNDS > 1);
  const summaryTable = ROUNDS > 1 ? summaryMarkdown(summary, ROUNDS, COMPARE_TO) : '';
  process.stdout.write(`\n${table}\n${summaryTable ? `\n${summaryTable}\n` : ''}`);
  if (rows.some((r) => r.non_2xx > 0 || r.errors > 0)) {
    process.stdout.write('\nWARNING: some requests failed (non-2xx or errors): those numbers do not measure the happy path.\n');
  }

  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const markdown = [
    `# Benchmark ${meta.date}`,
    '',
    `Commit ${meta.commit ?? 'unknown'}, Node ${meta.node}, ${meta.cores} × ${meta.cpu}, 1-minute load average ${meta.load_average_1m} at the end.`,
    `${meta.duration_sec} s per scenario after a ${meta.warmup_sec} s warm-up, ${meta.connections} connections (autocannon in the same machine),`,
    `database ${meta.database}${meta.redis ? ' with Redis rate-limit counters' : ''}, LOG_LEVEL=${meta.log_level}, ` +
      `INVOICING_PROCESSES=${meta.invoicing_processes} (${meta.service_processes} processes; CPU and RSS are summed over them).`,
    'The baseline is a bare node:http server in its own process answering the bytes of one document (GET detail): the physical limit of this machine.',
    '',
    table,
    '',
    ...(summaryTable ? [summaryTable, ''] : []),
    ...rows.filter((r) => r.rss_samples_mb).map((r) => `RSS of the service every ${SAMPLE_SEC} s during ${r.scenario} (MB): ${r.rss_samples_mb?.join(', ')}\n`),
    ...rows.filter((r) => r.memory_samples).map((r) => memoryTable(r.scenario, r.memory_samples ?? [])),
    ...rows.filter((r) => r.extra).map((r) => `${r.scenario}: ${Object.entries(r.extra ?? {}).map(([k, v]) => `${k} ${String(v)}`).join(', ')}\n`),
  ].join('\n');
  fs.writeFileSync(path.join(RESULTS_DIR, `${stamp}.md`), markdown);
  fs.writeFileSync(path.join(RESULTS_DIR, `${stamp}.json`), `${JSON.stringify({ meta, results: rows, ...(ROUNDS > 1 ? { summary } : {}) }, null, 2)}\n`);
  process.stdout.write(`\nWritten bench/results/${stamp}.md and .json\n`);

  await stopProcesses();
  if (otlp) {
    process.stdout.write(`BENCH_OTEL: the service sent ${otlp.received()} OTLP export requests\n`);
    await otlp.close();
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killProcesses();
    // E.g. the scale-out run's database (bench/cleanup.ts).
    void runCleanups().finally(() => process.exit(130));
  });
}

main().catch(async (err: unknown) => {
  process.stderr.write(`bench: ${(err as Error).message}\n`);
  await stopProcesses();
  await runCleanups();
  process.exit(1);
});
