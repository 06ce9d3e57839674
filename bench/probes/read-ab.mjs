// HTTP A/B of read requests, two builds side by side (docs/performance.md, "Session 5: per-request
// costs, GET, catalog and list tails"). Each build's dist/ (npm run build) runs as its own service
// process (`node dist/src/server.js`, LOG_LEVEL=info, stdout to a file as in the bench) on its own
// SQLite file, seeded with the same documents (the bench's template and seeder). Blocks of
// BLOCK_SEC seconds of autocannon (50 connections) go to one build and one scenario at a time,
// builds and scenarios interleaved (rotated order), the first round discarded; each block's
// service CPU is read from /proc/<pid>/stat, so CPU ms per request is the service's own work.
// Prints per build and scenario the medians of CPU ms/req, req/s and p99. INVOICING_PROCESSES passes on
// (default auto); the CPU is summed over the service's process tree.
// usage: node bench/probes/read-ab.mjs <rootA> [rootB] [scenarios] [blockSec] [blocks] [docs]
//   a root may end in @@<node flags>: the same build twice with different flags, e.g. `. .@@--min-semi-space-size=16`
//   scenarios: healthz,catalog,invoice-get,list-first-page,list-date-range,list-search-1pct,list-first-page-uncached
//   PROBE_NODE_ARGS="--trace-gc" adds node flags to every service; the logs are kept (path printed).
//   PROBE_DATABASE_ADMIN=postgres://postgres@127.0.0.1:5432/postgres: PostgreSQL instead, one database per
//   build (readab_a, readab_b: dropped and created here, analyzed after seeding) and REDIS_URL passed on;
//   then the CPU of the PostgreSQL backends serving each build's database is printed per request too.
import { spawn } from 'node:child_process';
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../../dist/bench/processes.js';
import { PROBE_KEY, writeProbeBootstrap } from './bootstrap.mjs';
const args = process.argv.slice(2);
// A root may carry its own node flags after `@@` (space-separated), e.g. `.@@--min-semi-space-size=16`.
const rootPath = (r) => r.split('@@')[0];
const roots = args[0] && args[1] && !args[1].includes(',') && fs.existsSync(rootPath(args[1])) ? [args[0], args[1]] : [args[0]];
const rest = args.slice(roots.length);
const names = (rest[0] ?? 'healthz,catalog,invoice-get').split(',');
const BLOCK_SEC = Number(rest[1] ?? 2); const BLOCKS = Number(rest[2] ?? 6); const DOCS = Number(rest[3] ?? 2000);
const KEY = PROBE_KEY; const INN = '7707083893';
const TICK_MS = 1000 / 100;
function statOf(pid) { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); }
/** utime + stime ticks of `pid` and every process below it (the API processes of INVOICING_PROCESSES). */
function cpuTicks(pid) {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try { const ppid = Number(statOf(entry)[1]); if (!children.has(ppid)) children.set(ppid, []); children.get(ppid).push(Number(entry)); } catch {}
  }
  let total = 0;
  const walk = (p) => { try { const f = statOf(p); total += Number(f[11]) + Number(f[12]); } catch {} for (const c of children.get(p) ?? []) walk(c); };
  walk(pid);
  return total;
}
const PG_ADMIN = process.env.PROBE_DATABASE_ADMIN;
let pgAdmin = null;
if (PG_ADMIN) {
  const { createRequire } = await import('node:module');
  const pg = createRequire(path.resolve(rootPath(roots[0]), 'package.json'))('pg');
  pgAdmin = new pg.Client(PG_ADMIN); await pgAdmin.connect();
}
/** utime + stime ticks of the PostgreSQL backends serving `dbName` (0 on SQLite). */
async function pgTicks(dbName) {
  if (!pgAdmin || !dbName) return 0;
  const { rows } = await pgAdmin.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
  let t = 0;
  for (const { pid } of rows) { try { t += cpuTicks(pid); } catch {} }
  return t;
}
let started = 0;
async function start(spec) {
  const [rootArg, flags = ''] = spec.split('@@');
  const dbName = pgAdmin ? `${process.env.PROBE_DB_PREFIX ?? 'readab'}_${'ab'[started]}` : null;
  started++;
  const root = path.resolve(rootArg);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-ab-'));
  writeProbeBootstrap(path.join(dir, 'b.json'));
  const port = await freePort();
  if (dbName) { await pgAdmin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await pgAdmin.query(`CREATE DATABASE ${dbName}`); }
  const databaseUrl = dbName ? PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`) : `sqlite:${path.join(dir, 'db.sqlite')}`;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl,
    INVOICING_BOOTSTRAP_FILE: path.join(dir, 'b.json'), INVOICING_DATA_DIR: path.join(dir, 'data'), INVOICING_IN_PROCESS_WORKER: 'false',
    LOG_LEVEL: 'info', INVOICING_IP_RATE_PER_SEC: '1000000', INVOICING_PROCESSES: process.env.INVOICING_PROCESSES ?? 'auto', ...(dbName && process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) };
  const log = fs.openSync(path.join(dir, 'service.log'), 'a');
  const nodeArgs = `${process.env.PROBE_NODE_ARGS ?? ''} ${flags}`.split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'dist/src/server.js')], { cwd: root, env, stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) { try { if ((await fetch(`${url}/healthz`)).ok) break; } catch {} if (i > 600) throw new Error(`${root} did not start (${dir})`); await new Promise((r) => setTimeout(r, 200)); }
  const { documentBody } = await import(path.join(root, 'dist/bench/list-scenarios.js'));
  const created = await fetch(`${url}/api/v1/invoices`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(documentBody(INN, 'TEMPLATE-1')) });
  const templateId = (await created.json()).public_id;
  const { loadConfig } = await import(path.join(root, 'dist/src/config/config.js'));
  const { openDatabase } = await import(path.join(root, 'dist/src/db/database.js'));
  const { readTemplate, seedDocuments } = await import(path.join(root, 'dist/bench/seed.js'));
  const handle = openDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database);
  await seedDocuments(handle.db, { teamId: 'bench', template: await readTemplate(handle.db, 'bench', templateId), count: DOCS, onProgress: () => {} });
  await handle.close();
  if (dbName) { const { createRequire } = await import('node:module'); const pg = createRequire(path.join(root, 'package.json'))('pg'); const c = new pg.Client(databaseUrl); await c.connect(); await c.query('vacuum analyze'); await c.end(); }
  return { root: spec, dir, child, url, templateId, dbName };
}
const polar = encodeURIComponent('полярная');
function requestsOf(name, s) {
  const h = { 'x-api-key': KEY };
  const one = (p, headers = h) => ({ path: p, headers });
  switch (name) {
    case 'healthz': return { path: '/healthz' };
    case 'catalog': return one('/api/v1/ref/catalog');
    case 'invoice-get': return one(`/api/v1/invoices/${s.templateId}`);
    case 'list-first-page': return one('/api/v1/invoices?limit=50');
    case 'list-date-range': return one('/api/v1/invoices?date_from=2024-03-01&date_to=2024-03-31');
    case 'list-search-1pct': return one(`/api/v1/invoices?q=${polar}`);
    case 'list-first-page-uncached': { let n = 0; return { path: '/api/v1/invoices', headers: h, requests: [{ setupRequest: (r) => { const i = n++; return { ...r, path: `/api/v1/invoices?limit=${45 + (i % 11)}&offset=${i % 37}` }; } }] }; }
    default: throw new Error(`unknown scenario ${name}`);
  }
}
const services = [];
for (const r of roots) services.push(await start(r));
const res = services.map(() => Object.fromEntries(names.map((n) => [n, []])));
const jobs = []; for (let a = 0; a < services.length; a++) for (const n of names) jobs.push([a, n]);
for (let b = 0; b < BLOCKS + 1; b++) {
  for (let j = 0; j < jobs.length; j++) {
    const [a, n] = jobs[(j + b) % jobs.length]; const s = services[a]; const spec = requestsOf(n, s);
    const c0 = cpuTicks(s.child.pid); const p0 = await pgTicks(s.dbName);
    const r = await autocannon({ url: s.url + spec.path, headers: spec.headers, ...(spec.requests ? { requests: spec.requests } : {}), connections: 50, duration: BLOCK_SEC });
    const ticks = cpuTicks(s.child.pid) - c0; const pgT = (await pgTicks(s.dbName)) - p0;
    if (r.non2xx > 0 || r.errors > 0) console.error(`${s.root} ${n}: non2xx ${r.non2xx} errors ${r.errors}`);
    if (b >= 1) res[a][n].push({ cpu: (ticks * TICK_MS) / r.requests.total, pg: (pgT * TICK_MS) / r.requests.total, rps: r.requests.average, p99: r.latency.p99 });
  }
}
const med = (x) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
for (let a = 0; a < services.length; a++) {
  console.log(`${services[a].root} (log: ${services[a].dir}/service.log)`);
  for (const n of names) {
    const xs = res[a][n];
    const pgPart = pgAdmin ? `  PostgreSQL CPU ms/req ${med(xs.map((x) => x.pg)).toFixed(4)}` : '';
    console.log(`  ${n.padEnd(26)} CPU ms/req ${med(xs.map((x) => x.cpu)).toFixed(4)} [${xs.map((x) => x.cpu.toFixed(3)).join(' ')}]${pgPart}  req/s ${Math.round(med(xs.map((x) => x.rps)))}  p99 ${med(xs.map((x) => x.p99))} ms`);
  }
}
for (const s of services) s.child.kill('SIGTERM');
if (pgAdmin) {
  await new Promise((r) => setTimeout(r, 1000));
  for (const s of services) if (s.dbName) await pgAdmin.query(`DROP DATABASE IF EXISTS ${s.dbName} WITH (FORCE)`);
  await pgAdmin.end();
}
