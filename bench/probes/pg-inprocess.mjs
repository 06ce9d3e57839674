// In-process CPU per request on PostgreSQL + Redis, two builds side by side (docs/performance.md,
// "PostgreSQL (this session)", Session 5). Each build's dist/ (npm run build) is started in this one
// process on its own fresh PostgreSQL database (PGPROBE_DB_PREFIX + a|b, dropped and created here)
// and the REDIS_URL given, INVOICING_IN_PROCESS_WORKER=false. Kinds: create (five items, through
// app.inject; create-email and create-edo: the same e-mailed to one buyer or sent through EDO), put (a full update with If-Match, on a pool of 60 documents), get (one document), list (first page of 50, cached), catalog. 50 requests in flight,
// blocks of blockN, both builds and all kinds interleaved (rotated order), the first two rounds
// discarded. Per block: the node's CPU (process.cpuUsage), the PostgreSQL backends' CPU of that
// build's database (utime+stime of /proc/<pid>/stat of the pids pg_stat_activity lists for it),
// and statements sent (pg.Client.prototype.query calls); medians per kind.
// usage: DATABASE_ADMIN=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
//   node bench/probes/pg-inprocess.mjs <rootA> <rootB> [kinds] [blockN] [blocks] [seedDocs]
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path'; import { createRequire } from 'node:module';
import { PROBE_KEY, writeProbeBootstrap } from './bootstrap.mjs';
const roots = [process.argv[2], process.argv[3]];
const kinds = (process.argv[4] ?? 'create,get,list,catalog').split(',');
const N = Number(process.argv[5] ?? 200); const BLOCKS = Number(process.argv[6] ?? 10); const SEED = Number(process.argv[7] ?? 1000);
const ADMIN = process.env.DATABASE_ADMIN ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PREFIX = process.env.PGPROBE_DB_PREFIX ?? 'pgprobe_';
const KEY = PROBE_KEY;
const require = createRequire(path.join(roots[0], 'package.json'));
const pg = require('pg');
let statements = 0;
// PGPROBE_SQL=1: the statements of each kind by their first words (per request, last round).
let texts = new Map();
const firstWords = (t) => String(typeof t === 'object' && t !== null ? t.text : t).replace(/\s+/g, ' ').slice(0, 70);
for (const root of roots) {
  const P = createRequire(path.join(root, 'package.json'))('pg');
  if (P.Client.prototype.__counted) continue;
  const q = P.Client.prototype.query;
  P.Client.prototype.query = function (...a) {
    statements++;
    if (process.env.PGPROBE_SQL) { const k = firstWords(a[0]); texts.set(k, (texts.get(k) ?? 0) + 1); }
    return q.apply(this, a);
  };
  P.Client.prototype.__counted = true;
}
const admin = new pg.Client(ADMIN); await admin.connect();
async function start(root, i) {
  const dbName = `${PREFIX}${'ab'[i]}`;
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.query(`CREATE DATABASE ${dbName}`);
  const { loadConfig } = await import(path.join(root, 'dist/src/config/config.js'));
  const { startRuntime } = await import(path.join(root, 'dist/src/runtime.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-probe-'));
  writeProbeBootstrap(path.join(dir, 'b.json'));
  // DATABASE_ADMIN_B: another way to the same server for build B (e.g. its Unix socket), to compare.
  const base = (i === 1 && process.env.DATABASE_ADMIN_B) || ADMIN;
  const env = { ...process.env, DATABASE_URL: base.replace(/\/[^/]*$/, `/${dbName}`), INVOICING_BOOTSTRAP_FILE: path.join(dir, 'b.json'),
    INVOICING_DATA_DIR: dir, INVOICING_IN_PROCESS_WORKER: 'false', LOG_LEVEL: 'warn', INVOICING_IP_RATE_PER_SEC: '1000000' };
  // PGPROBE_ENV_A / PGPROBE_ENV_B: extra environment for that build, e.g. 'INVOICING_PG_POOL_SIZE=5' (comma-separated).
  for (const kv of (process.env[`PGPROBE_ENV_${'AB'[i]}`] ?? '').split(',').filter(Boolean)) { const at = kv.indexOf('='); env[kv.slice(0, at)] = kv.slice(at + 1); }
  const rt = await startRuntime(loadConfig(env)); await rt.app.ready();
  // PGPROBE_SQL_A / PGPROBE_SQL_B: SQL run on that build's database after its start (experiments only).
  const extraSql = process.env[`PGPROBE_SQL_${'AB'[i]}`];
  if (extraSql) { const c = new pg.Client(env.DATABASE_URL); await c.connect(); await c.query(extraSql); await c.end(); }
  return { rt, dir, dbName };
}
const apps = [];
for (let i = 0; i < roots.length; i++) apps.push(await start(roots[i], i));
const body = (n) => ({ number: n, date: '2026-03-02', currency: 'RUB', seller: { inn: '7707083893' },
  buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тверская, д. 1', email: 'buyer@example.com' },
  items: [ { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 }, { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
    { name: 'Внедрение', qty: 2, unit: 'дн', price: 24000, vat_pct: 22 }, { name: 'Обучение персонала', qty: 8, unit: 'ч', price: 2500.5, vat_pct: 22 },
    { name: 'Техническая поддержка, месяц', qty: 12, unit: 'мес', price: 3333.33, vat_pct: 22 } ] });
const createPayload = JSON.stringify(body('P-1'));
const H = { 'x-api-key': KEY, 'content-type': 'application/json' };
for (const a of apps) {
  let id;
  for (let i = 0; i < SEED; i += 50) {
    const rs = await Promise.all(Array.from({ length: 50 }, () => a.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers: H, payload: createPayload })));
    for (const r of rs) if (r.statusCode >= 300) { console.log(r.statusCode, r.body); process.exit(1); }
    id = JSON.parse(rs[0].body).public_id;
  }
  if (!id) { const r = await a.rt.app.inject({ method: 'GET', url: '/api/v1/invoices?limit=1', headers: H }); id = JSON.parse(r.body).items?.[0]?.public_id ?? JSON.parse(r.body).invoices?.[0]?.public_id; }
  // put: documents of their own (a lane never PUTs one another lane is updating), If-Match of the last answer.
  a.pool = [];
  for (let i = 0; i < 60; i++) {
    const r = await a.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers: H, payload: JSON.stringify(body(`PUT-${i}`)) });
    a.pool.push({ id: JSON.parse(r.body).public_id, etag: r.headers.etag });
  }
  a.req = { create: { method: 'POST', url: '/api/v1/invoices', headers: H, payload: createPayload },
    // The bench's invoice-create-email-buyer and invoice-create-edo documents (207: the worker's e-mail).
    'create-email': { method: 'POST', url: '/api/v1/invoices', headers: H, payload: JSON.stringify({ ...body('P-1'), notify_recipients: true }) },
    'create-edo': { method: 'POST', url: '/api/v1/invoices', headers: H, payload: JSON.stringify({ ...body('P-1'), buyer_edo_id: '2BM-7736207543-2012052808301121' }) },
    get: { method: 'GET', url: `/api/v1/invoices/${id}`, headers: H },
    list: { method: 'GET', url: '/api/v1/invoices?limit=50', headers: H }, catalog: { method: 'GET', url: '/api/v1/ref/catalog', headers: H } };
}
// As bench/list-scenarios.ts does after seeding: statistics, so the foreign-key checks' plans use
// the key (unanalyzed, they may pick another index of team_id and scan the team's documents).
for (const a of apps) { const c = new pg.Client(ADMIN.replace(/\/[^/]*$/, `/${a.dbName}`)); await c.connect(); await c.query('vacuum analyze'); await c.end(); }
const TICK = 1000 / 100; const types = new Map();
async function backendCpu(dbName) {
  const { rows } = await admin.query("select pid, backend_type from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [dbName]);
  const m = new Map();
  for (const { pid, backend_type } of rows) { if (process.env.PGPROBE_DEBUG) types.set(pid, backend_type); try { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); m.set(pid, (Number(f[11]) + Number(f[12])) * TICK); } catch {} }
  return m;
}
async function run(a, kind) {
  let done = 0; const before = await backendCpu(a.dbName); const s0 = statements; const c0 = process.cpuUsage();
  texts = new Map();
  async function lane() {
    while (done < N) {
      done++;
      let doc; let req = a.req[kind];
      if (kind === 'put') {
        doc = a.pool.shift();
        req = { method: 'PUT', url: `/api/v1/invoices/${doc.id}`, headers: { ...H, 'if-match': doc.etag }, payload: JSON.stringify({ invoice: { ...body('PUT'), comment: `Обновлено ${done}` } }) };
      }
      const r = await a.rt.app.inject(req);
      if (r.statusCode >= 300 && !(kind === 'create-email' && r.statusCode === 207)) { console.log(kind, r.statusCode, r.body); process.exit(1); }
      if (doc) { doc.etag = r.headers.etag; a.pool.push(doc); }
    }
  }
  await Promise.all(Array.from({ length: 50 }, lane));
  const c = process.cpuUsage(c0); const st = statements - s0; const after = await backendCpu(a.dbName);
  let pgMs = 0; const byType = {}; for (const [pid, v] of after) { pgMs += v - (before.get(pid) ?? 0); const t = types.get(pid); byType[t] = (byType[t] ?? 0) + v - (before.get(pid) ?? 0); }
  if (process.env.PGPROBE_DEBUG) console.log(kind, JSON.stringify(byType), [...after.keys()].filter((p) => !before.has(p)).length, 'new pids');
  if (process.env.PGPROBE_SQL) a.texts = { ...a.texts, [kind]: [...texts].map(([t, n]) => `    ${(n / N).toFixed(2)}  ${t}`).join('\n') };
  return { node: (c.user + c.system) / 1000 / N, sys: c.system / 1000 / N, pg: pgMs / N, st: st / N };
}
const res = apps.map(() => Object.fromEntries(kinds.map((k) => [k, []])));
const jobs = []; for (let a = 0; a < apps.length; a++) for (const k of kinds) jobs.push([a, k]);
for (let b = 0; b < BLOCKS + 2; b++) {
  for (let j = 0; j < jobs.length; j++) { const [a, k] = jobs[(j + b) % jobs.length]; const v = await run(apps[a], k); if (b >= 2) res[a][k].push(v); }
}
const med = (x) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
for (let a = 0; a < apps.length; a++) {
  console.log(`${roots[a]}:`);
  for (const k of kinds) {
    const r = res[a][k];
    console.log(`  ${k.padEnd(8)} node ${med(r.map((x) => x.node)).toFixed(3)} ms (system ${med(r.map((x) => x.sys)).toFixed(3)})  pg ${med(r.map((x) => x.pg)).toFixed(3)} ms  statements ${med(r.map((x) => x.st)).toFixed(2)}`);
    if (apps[a].texts?.[k]) console.log(apps[a].texts[k]);
  }
}
for (const x of apps) { await x.rt.close(); fs.rmSync(x.dir, { recursive: true, force: true }); await admin.query(`DROP DATABASE IF EXISTS ${x.dbName} WITH (FORCE)`); }
await admin.end();
