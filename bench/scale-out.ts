/**
 * Scale-out benchmark (`BENCH_TOPOLOGY=two-nodes npm run bench`): one `invoicing worker` and
 * API nodes (`dist/src/server.js`, INVOICING_IN_PROCESS_WORKER=false) on one PostgreSQL
 * database and one Redis. Each scenario runs against one node with all connections, one node
 * with half of them, then two nodes with half each (equal load per node), and reports what
 * shows scaling on a machine too small for two nodes to be faster than one:
 *
 * - CPU milliseconds per request of the API nodes (utime + stime from /proc/<pid>/stat,
 *   worker threads included, summed over a node's processes: its primary and API processes,
 *   INVOICING_PROCESSES, which passes through, default auto) and of the worker (measured until it
 *   has worked off the jobs the window queued);
 * - PostgreSQL round trips per request: each node (and the worker) reaches PostgreSQL through
 *   a counting TCP proxy in this process, which counts the client's Sync ('S') and simple
 *   Query ('Q') messages (one per round trip: node-postgres sends Parse/Bind/Execute/Sync per
 *   query, Bind/Execute/Sync for a named statement it prepared before), the statements run (one
 *   per Bind or Query, by the text their name was parsed with: bench/pg-messages.ts) and the
 *   connections opened;
 * - Redis commands per request (`INFO commandstats` before and after) and Redis clients.
 *
 * Needs DATABASE_URL=postgres://… (a server where a database may be created: a new one,
 * `invoicing_scale_<time>`, is created and dropped, also when the run fails or is interrupted). Redis: a private `redis-server` on a free
 * port when the binary is on PATH (so no one else's commands are counted), else REDIS_URL.
 * BENCH_DURATION (default 10 s per phase), BENCH_CONNECTIONS (default 50), BENCH_SCENARIOS
 * (invoice-create, invoice-get, invoice-create-edo).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuMs, freePort, gitCommit, processTree, RESULTS_DIR, REPO_ROOT, startProcess, stopProcesses, waitForHealthy } from './processes.js';
import { Redis } from 'ioredis';
import pg from 'pg';
import { documentBody } from './list-scenarios.js';
import { CountingPgProxy, statementCounts } from './counting-pg-proxy.js';
import { onExit } from './cleanup.js';

const KEY = 'ak_bench_0000000000000000000000000001';
const INN = '7707083893';

const env = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got ${JSON.stringify(raw)})`);
  return value;
};
const DURATION = env('BENCH_DURATION', 10);
const CONNECTIONS = env('BENCH_CONNECTIONS', 50);
const WARMUP = Math.min(2, DURATION);

/** CPU ms of a process the bench is measuring; it must be running. */
function liveCpuMs(pid: number | undefined): number {
  const ms = cpuMs(pid);
  if (ms === null) throw new Error(`process ${pid} is not running: no CPU time to read`);
  return ms;
}

async function redisCalls(redis: Redis): Promise<{ total: number; byCommand: Record<string, number>; clients: number }> {
  const stats = await redis.info('commandstats');
  const byCommand: Record<string, number> = {};
  for (const m of stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) byCommand[m[1]!] = Number(m[2]);
  const clients = Number(/connected_clients:(\d+)/.exec(await redis.info('clients'))?.[1] ?? 0);
  // INFO itself is counted too: the two INFO calls of each snapshot are subtracted by the caller.
  return { total: Object.values(byCommand).reduce((a, b) => a + b, 0), byCommand, clients };
}

interface Phase {
  scenario: string;
  nodes: 1 | 2;
  connections_per_node: number;
  requests: number;
  non2xx: number;
  errors: number;
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  node_cpu_ms_per_request: number;
  worker_cpu_ms_per_request: number;
  pg_round_trips_per_request: number;
  worker_pg_round_trips_per_request: number;
  pg_connections_per_node: number[];
  /** The most frequent statements of the API nodes, per request. */
  pg_statements_per_request: Record<string, number>;
  /** Calls from the nodes (EVALSHA of the rate-limit script and any plain command). */
  redis_round_trips_per_request: number;
  /** Every command Redis executed, those run inside the script (GET, INCR, PEXPIRE) included. */
  redis_commands_per_request: number;
  redis_commands: Record<string, number>;
  redis_clients: number;
}

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export async function runScaleOut(): Promise<void> {
  const admin = process.env.DATABASE_URL ?? '';
  if (!/^postgres(ql)?:\/\//.test(admin)) throw new Error('BENCH_TOPOLOGY=two-nodes needs DATABASE_URL=postgres://… (PostgreSQL + Redis)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-scale-bench-'));
  const dbName = `invoicing_scale_${Date.now()}`;
  const adminClient = new pg.Client({ connectionString: admin });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE ${dbName}`);
  await adminClient.end();
  // Dropped at the end, and also when the run fails or is interrupted (bench/cleanup.ts).
  const dropDatabase = onExit(async () => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });
  const serverUrl = new URL(admin);
  const target = { host: serverUrl.hostname, port: Number(serverUrl.port || 5432) };

  // Redis: private when possible, so only this run's commands are counted.
  let redisUrl = process.env.REDIS_URL ?? '';
  let privateRedis = false;
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    const port = await freePort();
    startProcess('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env, path.join(tmp, 'redis.log'));
    redisUrl = `redis://127.0.0.1:${port}`;
    privateRedis = true;
    await new Promise((r) => setTimeout(r, 300));
  } catch {
    if (!redisUrl) throw new Error('no redis-server on PATH and no REDIS_URL');
  }
  const redis = new Redis(redisUrl);
  redis.on('error', () => undefined);

  const bootstrap = path.join(tmp, 'bootstrap.json');
  const huge = { per_sec: 2_000_000_000, per_min: 2_000_000_000, per_day: 2_000_000_000 };
  fs.writeFileSync(
    bootstrap,
    JSON.stringify({
      tariffs: { bench: { max_organizations: 10, max_api_keys: 10, key_rate: huge, team_rate: huge, emails_per_day: 2_000_000_000, external_share: true, max_storage_mb: 16_777_216 } },
      teams: [
        {
          id: 'bench',
          name: 'Benchmark team',
          tariff: 'bench',
          api_keys: [{ id: 990001, name: 'bench', secret: KEY, active: true }],
          organizations: [{ id: 'bench-org', name: 'ООО «Ромашка»', inn: INN, kpp: '773601001', edo_id: '2BM-7707083893-2012052808301120', active: true }],
          bank_accounts: [
            { id: 'bench-ba', organization_id: 'bench-org', bank_name: 'ПАО Сбербанк', bik: '044525225', account: '40702810938000000001', corr_account: '30101810400000000225', is_default: true },
          ],
        },
      ],
    }),
  );

  const proxies = { a: await new CountingPgProxy(target).start(), b: await new CountingPgProxy(target).start(), w: await new CountingPgProxy(target).start() };
  const dbUrlVia = (proxy: CountingPgProxy) => {
    const u = new URL(admin);
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  const baseEnv = (proxy: CountingPgProxy): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: dbUrlVia(proxy),
    REDIS_URL: redisUrl,
    INVOICING_BOOTSTRAP_FILE: bootstrap,
    INVOICING_SECRET: 'bench-secret-0123456789abcdef0123456789abcdef',
    INVOICING_IP_RATE_PER_SEC: '1000000',
    INVOICING_IN_PROCESS_WORKER: 'false',
    INVOICING_DATA_DIR: path.join(tmp, 'data'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    // API processes per node (default auto); the worker ignores it.
    ...(process.env.INVOICING_PROCESSES ? { INVOICING_PROCESSES: process.env.INVOICING_PROCESSES } : {}),
  });
  const server = path.join(REPO_ROOT, 'dist', 'src', 'server.js');
  const cli = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
  const nodes: Array<{ url: string; child: ChildProcess }> = [];
  for (const proxy of [proxies.a, proxies.b]) {
    const port = await freePort();
    const log = path.join(tmp, `node-${port}.log`);
    const child = startProcess(process.execPath, [server], { ...baseEnv(proxy), PORT: String(port) }, log);
    const url = `http://127.0.0.1:${port}`;
    await waitForHealthy(`${url}/readyz`, child, log, 60_000); // one after the other: the first applies the migrations
    nodes.push({ url, child });
  }
  const worker = startProcess(process.execPath, [cli, 'worker'], baseEnv(proxies.w), path.join(tmp, 'worker.log'));
  const apiProcesses = nodes.map(({ child }) => {
    const tree = child.pid === undefined ? 1 : processTree(child.pid).length;
    return tree > 1 ? tree - 1 : 1;
  });

  // Background jobs still to do (EDO sends): counted straight in the database, not through a proxy.
  const direct = new URL(admin);
  direct.pathname = `/${dbName}`;
  const watcher = new pg.Client({ connectionString: direct.toString() });
  // Ended by the database's drop when the run is interrupted: nothing left to watch then.
  watcher.on('error', () => undefined);
  await watcher.connect();
  const drained = async () => {
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline) {
      // Sends recorded in their documents' rows count until the worker has written them (docs/edo.md).
      const { rows } = await watcher.query<{ n: string }>(
        "select (select count(*) from outbox where state in ('pending', 'sending')) + (select count(*) from invoices where edo_pending_job is not null or email_pending is not null) as n",
      );
      if (Number(rows[0]?.n ?? 0) === 0) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error('the worker did not work off the queue within 5 minutes');
  };

  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const seed = await fetch(`${nodes[0]!.url}/api/v1/invoices`, { method: 'POST', headers, body: JSON.stringify(documentBody(INN, 'SCALE-GET')) });
  if (seed.status !== 200) throw new Error(`seeding answered ${seed.status}: ${await seed.text()}`);
  const seededId = ((await seed.json()) as { public_id: string }).public_id;

  const all: Scenario[] = [
    { name: 'invoice-create', method: 'POST', path: '/api/v1/invoices', body: JSON.stringify(documentBody(INN, 'SCALE-POST')) },
    { name: 'invoice-get', method: 'GET', path: `/api/v1/invoices/${seededId}` },
    {
      name: 'invoice-create-edo',
      method: 'POST',
      path: '/api/v1/invoices',
      body: JSON.stringify({ ...documentBody(INN, 'SCALE-EDO'), buyer_edo_id: '2BM-7736207543-2012052808301121' }),
    },
  ];
  const only = process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()).filter(Boolean);
  const selected = all.filter((s) => !only || only.includes(s.name));

  const cannon = (url: string, scenario: Scenario, connections: number, duration: number) =>
    autocannon({ url: url + scenario.path, method: scenario.method, headers: { 'x-api-key': KEY, ...(scenario.body ? { 'content-type': 'application/json' } : {}) }, ...(scenario.body ? { body: scenario.body } : {}), connections, duration });

  const phases: Phase[] = [];
  process.stdout.write(`Scale-out benchmark: ${DURATION} s per phase after ${WARMUP} s warm-up, ${CONNECTIONS} connections, PostgreSQL ${target.host}:${target.port}, Redis ${privateRedis ? 'private' : redisUrl}\n`);
  for (const scenario of selected) {
    // One node with all connections, one node with half of them (the per-node load of the
    // next phase), two nodes with half each: the second and third compare equal per-node load.
    for (const [count, share] of [[1, CONNECTIONS], [1, Math.max(1, Math.floor(CONNECTIONS / 2))], [2, Math.max(1, Math.floor(CONNECTIONS / 2))]] as const) {
      const targets = nodes.slice(0, count);
      await Promise.all(targets.map((n) => cannon(n.url, scenario, share, WARMUP)));
      // Let the worker catch up with the warm-up's background jobs before counting.
      await drained();
      const cpu0 = nodes.map((n) => liveCpuMs(n.child.pid));
      const wcpu0 = liveCpuMs(worker.pid);
      const st0 = statementCounts([proxies.a, proxies.b]);
      const rt0 = [proxies.a.roundTrips, proxies.b.roundTrips, proxies.w.roundTrips];
      const r0 = await redisCalls(redis);
      const results = await Promise.all(targets.map((n) => cannon(n.url, scenario, share, DURATION)));
      const cpu1 = nodes.map((n) => liveCpuMs(n.child.pid));
      const pgOpen = [proxies.a.open, proxies.b.open];
      // The worker's share: until it has worked off every job the window queued.
      await drained();
      const wcpu1 = liveCpuMs(worker.pid);
      const st1 = statementCounts([proxies.a, proxies.b]);
      const rt1 = [proxies.a.roundTrips, proxies.b.roundTrips, proxies.w.roundTrips];
      const r1 = await redisCalls(redis);
      const ok = results.reduce((sum, r) => sum + r['2xx'], 0);
      const byCommand: Record<string, number> = {};
      for (const [cmd, calls] of Object.entries(r1.byCommand)) {
        const delta = calls - (r0.byCommand[cmd] ?? 0) - (cmd === 'info' ? 2 : 0);
        if (delta > 0) byCommand[cmd] = delta;
      }
      const redisTotal = Object.values(byCommand).reduce((a, b) => a + b, 0);
      // The rate limiter is the one Redis user, and its script the one caller of GET, INCR and
      // PEXPIRE: everything else is a call from a node.
      const inScript = new Set(['get', 'incr', 'pexpire']);
      const redisRoundTrips = Object.entries(byCommand).reduce((a, [c, n]) => a + (inScript.has(c) ? 0 : n), 0);
      const phase: Phase = {
        scenario: scenario.name,
        nodes: count,
        connections_per_node: share,
        requests: ok,
        non2xx: results.reduce((s, r) => s + r.non2xx, 0),
        errors: results.reduce((s, r) => s + r.errors, 0),
        requests_per_sec: Math.round(ok / DURATION),
        p50_ms: Math.max(...results.map((r) => r.latency.p50)),
        p99_ms: Math.max(...results.map((r) => r.latency.p99)),
        node_cpu_ms_per_request: round((cpu1.reduce((a, b) => a + b, 0) - cpu0.reduce((a, b) => a + b, 0)) / ok),
        worker_cpu_ms_per_request: round((wcpu1 - wcpu0) / ok),
        pg_round_trips_per_request: round((rt1[0]! - rt0[0]! + rt1[1]! - rt0[1]!) / ok),
        worker_pg_round_trips_per_request: round((rt1[2]! - rt0[2]!) / ok),
        pg_connections_per_node: pgOpen,
        pg_statements_per_request: Object.fromEntries(
          [...st1.entries()]
            .map(([k, n]) => [k, round((n - (st0.get(k) ?? 0)) / ok)] as const)
            .filter(([, n]) => n >= 0.05)
            .sort((x, y) => y[1] - x[1])
            .slice(0, 20),
        ),
        redis_round_trips_per_request: round(redisRoundTrips / ok),
        redis_commands_per_request: round(redisTotal / ok),
        redis_commands: byCommand,
        redis_clients: r1.clients - 1,
      };
      phases.push(phase);
      process.stdout.write(`  ${scenario.name} on ${count} node(s) × ${share} connections: ${phase.requests_per_sec} req/s, ${phase.node_cpu_ms_per_request} CPU ms/req, ${phase.pg_round_trips_per_request} PG round trips/req, ${phase.redis_round_trips_per_request} Redis round trips/req\n`);
    }
  }
  // The background jobs the EDO scenario queued: the worker sends them after the load.
  const workerRoundTrips = proxies.w.roundTrips;

  const table = [
    '| scenario | nodes × connections | req/s | p50 ms | p99 ms | non-2xx | API CPU ms/req | worker CPU ms/req | PG round trips/req (API, worker) | PG connections open (node A, B) | Redis round trips/req | Redis commands executed/req | Redis clients |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
    ...phases.map(
      (p) =>
        `| ${p.scenario} | ${p.nodes} × ${p.connections_per_node} | ${p.requests_per_sec} | ${p.p50_ms} | ${p.p99_ms} | ${p.non2xx + p.errors} | ${p.node_cpu_ms_per_request} | ${p.worker_cpu_ms_per_request} | ${p.pg_round_trips_per_request}, ${p.worker_pg_round_trips_per_request} | ${p.pg_connections_per_node.join(', ')} | ${p.redis_round_trips_per_request} | ${p.redis_commands_per_request} (${Object.entries(p.redis_commands).map(([c, n]) => `${c} ${n}`).join(', ')}) | ${p.redis_clients} |`,
    ),
  ].join('\n');
  const meta = {
    date: new Date().toISOString(),
    topology: 'two-nodes',
    commit: gitCommit(),
    node: process.version,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    load_average_1m: Number(os.loadavg()[0]?.toFixed(2)),
    duration_sec: DURATION,
    connections: CONNECTIONS,
    redis: privateRedis ? 'private redis-server' : 'REDIS_URL (shared: commands of other clients counted)',
    worker_pg_round_trips_total: workerRoundTrips,
    // As set, and what it resolved to on each node (a node of several API processes also runs a primary).
    invoicing_processes: `${process.env.INVOICING_PROCESSES ?? 'auto'} (${apiProcesses.join(' and ')} API processes)`,
  };
  process.stdout.write(`\n${table}\n`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = `${meta.date.replace(/[:.]/g, '-')}-two-nodes`;
  const markdown = [
    `# Scale-out benchmark ${meta.date}`,
    '',
    `Commit ${meta.commit ?? 'unknown'}, Node ${meta.node}, ${meta.cores} × ${meta.cpu}, 1-minute load average ${meta.load_average_1m} at the end.`,
    `Two API nodes (INVOICING_IN_PROCESS_WORKER=false, INVOICING_PROCESSES=${meta.invoicing_processes}) and one \`invoicing worker\` on one PostgreSQL database and ${meta.redis}.`,
    `Each scenario: ${CONNECTIONS} connections on one node, ${Math.floor(CONNECTIONS / 2)} on one node, then ${Math.floor(CONNECTIONS / 2)} on each of two; ${DURATION} s each after a ${WARMUP} s warm-up (autocannon in the same machine).`,
    'CPU from /proc/<pid>/stat (all threads, summed over a node\'s processes; the worker\'s until it has worked off the jobs the window queued); PostgreSQL round trips = Sync + Query messages counted by a TCP proxy per node; Redis commands from INFO commandstats.',
    '',
    table,
    '',
    ...phases
      .filter((p) => p.nodes === 1 && p.connections_per_node === CONNECTIONS)
      .flatMap((p) => [
        `Statements per request of the API nodes, ${p.scenario} (first 60 characters; each Bind or Query is a statement run, one round trip with its Sync):`,
        '',
        ...Object.entries(p.pg_statements_per_request).map(([k, n]) => `- ${n} × \`${k}\``),
        '',
      ]),
  ].join('\n');
  fs.writeFileSync(path.join(RESULTS_DIR, `${stamp}.md`), markdown);
  fs.writeFileSync(path.join(RESULTS_DIR, `${stamp}.json`), `${JSON.stringify({ meta, phases }, null, 2)}\n`);
  process.stdout.write(`\nWritten bench/results/${stamp}.md and .json\n`);

  redis.disconnect();
  await watcher.end();
  await stopProcesses();
  for (const proxy of Object.values(proxies)) proxy.close();
  await dropDatabase();
  fs.rmSync(tmp, { recursive: true, force: true });
}

function round(n: number): number {
  return Number.isFinite(n) ? Math.round(n * 100) / 100 : 0;
}

