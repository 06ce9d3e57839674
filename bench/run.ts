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
import { heapFromMetrics, markdownTable, memoryTable, type MemorySample, type Row } from './result-tables.js';
import type { BenchContext, Scenario } from './scenario.js';

export type { BenchContext, Scenario };

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

const authHeaders = { 'x-api-key': BENCH_KEY };

/** In the order they run. Ratios are to the `baseline` scenario. */
export const scenarios: Scenario[] = [
  { name: 'baseline', target: 'baseline', method: 'GET', path: '/api/v1/invoices/baseline' },
  { name: 'healthz', target: 'service', method: 'GET', path: '/healthz' },
  { name: 'catalog', target: 'service', method: 'GET', path: '/api/v1/ref/catalog', headers: authHeaders },
  // List, search, read and create over BENCH_DOCS seeded documents (bench/list-scenarios.ts).
  ...listScenarios,
  // The worst hostile bodies near 5 MB: their p99 is the event loop one holds.
  ...hostileScenarios,
  // Bounds under abuse and faults (bench/bounds-scenarios.ts), when named.
  ...boundsScenarios,
];

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
    tariffs: { bench: { max_organizations: 10, max_api_keys: 10, key_rate: huge, team_rate: huge, emails_per_day: 2_000_000_000, external_share: true, max_storage_mb: 16_777_216 } },
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
