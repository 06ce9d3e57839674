// Per create, one at a time on one connection (INVOICING_PG_POOL_SIZE=1), two builds side by side
// (docs/performance.md, "Session 15"): the API process's CPU (process.cpuUsage), the PostgreSQL
// backend's CPU (utime+stime of /proc/<pid>/stat), and the WAL written (pg_current_wal_lsn()).
// Nothing waits on a lock or on another request, so these are a create's own costs, with less of the
// machine's noise than under load. Each build's dist/ on its own fresh database (PGSEQ_DB_PREFIX
// + a|b), INVOICING_IN_PROCESS_WORKER=false; kinds as in pg-inprocess.mjs (create, create-email,
// create-edo); blocks of N creates, builds and kinds interleaved (rotated), the first two discarded;
// medians per build and kind. PGSEQ_WALSTATS=1 adds the WAL by record type (pg_walinspect, created in
// the admin database).
// usage: node bench/probes/pg-sequential.mjs <rootA> <rootB> [kinds] [N=500] [blocks=8]
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path'; import { createRequire } from 'node:module';
import { PROBE_KEY, writeProbeBootstrap } from './bootstrap.mjs';
const roots = [process.argv[2], process.argv[3]].filter(Boolean).map((r) => path.resolve(r));
const kinds = (process.argv[4] ?? 'create,create-email').split(',');
const N = Number(process.argv[5] ?? 500); const BLOCKS = Number(process.argv[6] ?? 8);
const ADMIN = process.env.DATABASE_ADMIN ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PREFIX = process.env.PGSEQ_DB_PREFIX ?? 'pgseq_';
const pg = createRequire(path.join(roots[0], 'package.json'))('pg');
const admin = new pg.Client(ADMIN); await admin.connect();
if (process.env.PGSEQ_WALSTATS) await admin.query('create extension if not exists pg_walinspect');
const body = (n, extra = {}) => JSON.stringify({ number: n, date: '2026-03-02', currency: 'RUB', seller: { inn: '7707083893' },
  buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тверская, д. 1', email: 'buyer@example.com' },
  items: [ { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 }, { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
    { name: 'Внедрение', qty: 2, unit: 'дн', price: 24000, vat_pct: 22 }, { name: 'Обучение персонала', qty: 8, unit: 'ч', price: 2500.5, vat_pct: 22 },
    { name: 'Техническая поддержка, месяц', qty: 12, unit: 'мес', price: 3333.33, vat_pct: 22 } ], ...extra });
const payloads = { create: body('S-1'), // The bench's invoice-create-email-buyer: the plain create's document, e-mailed to its buyer.
  'create-email': body('S-1', { notify_recipients: true }),
  'create-edo': body('S-1', { buyer_edo_id: '2BM-7736207543-2012052808301121' }) };
const H = { 'x-api-key': PROBE_KEY, 'content-type': 'application/json' };
async function start(root, i) {
  const dbName = `${PREFIX}${'ab'[i]}`;
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.query(`CREATE DATABASE ${dbName}`);
  const { loadConfig } = await import(path.join(root, 'dist/src/config/config.js'));
  const { startRuntime } = await import(path.join(root, 'dist/src/runtime.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-seq-'));
  writeProbeBootstrap(path.join(dir, 'b.json'));
  const env = { ...process.env, DATABASE_URL: ADMIN.replace(/\/[^/]*$/, `/${dbName}`), INVOICING_BOOTSTRAP_FILE: path.join(dir, 'b.json'),
    INVOICING_DATA_DIR: dir, INVOICING_IN_PROCESS_WORKER: 'false', LOG_LEVEL: 'warn', INVOICING_IP_RATE_PER_SEC: '1000000', INVOICING_PG_POOL_SIZE: '1' };
  const rt = await startRuntime(loadConfig(env)); await rt.app.ready();
  // PGSEQ_SQL_A / PGSEQ_SQL_B: SQL run on that build's database after its start (experiments only).
  const extra = process.env[`PGSEQ_SQL_${'AB'[i]}`];
  if (extra) { const c = new pg.Client(env.DATABASE_URL); await c.connect(); await c.query(extra); await c.end(); }
  return { rt, dir, dbName, root: `${root}${extra ? ` (${extra})` : ''}` };
}
// The CPU (ms) of each client backend of the database (autovacuum and the like left out), by pid.
async function backendCpu(dbName) {
  const { rows } = await admin.query("select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid()", [dbName]);
  const m = new Map();
  for (const { pid } of rows) { try { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); m.set(pid, (Number(f[11]) + Number(f[12])) * 10); } catch {} }
  return m;
}
/** CPU spent between two readings; a backend started in between counts from its start. */
const spent = (before, after) => { let ms = 0; for (const [pid, v] of after) ms += v - (before.get(pid) ?? 0); if (process.env.PGSEQ_DEBUG) console.log([...after.keys()].filter((p) => !before.has(p)).length, 'new backends'); return ms; };
const lsn = async () => (await admin.query('select pg_current_wal_lsn() as l')).rows[0].l;
const walBytes = async (from, to) => Number((await admin.query('select pg_wal_lsn_diff($1, $2) as d', [to, from])).rows[0].d);
const apps = []; for (let i = 0; i < roots.length; i++) apps.push(await start(roots[i], i));
for (const a of apps) for (let i = 0; i < 600; i++) await a.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers: H, payload: payloads[kinds[i % kinds.length]] });
// Statistics, as pg-inprocess.mjs and the bench do after seeding (unanalyzed, the foreign-key checks may scan).
for (const a of apps) { const c = new pg.Client(ADMIN.replace(/\/[^/]*$/, `/${a.dbName}`)); await c.connect(); await c.query('vacuum analyze'); await c.end(); }
async function run(a, kind) {
  const b0 = await backendCpu(a.dbName); const l0 = await lsn(); const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const r = await a.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers: H, payload: payloads[kind] });
    if (r.statusCode >= 300 && !(kind === 'create-email' && r.statusCode === 207)) { console.log(kind, r.statusCode, r.body); process.exit(1); }
  }
  const c = process.cpuUsage(c0); const l1 = await lsn();
  // PGSEQ_WALSTATS=1: the block's WAL by record type (pg_walinspect), per create; the last block of each build and kind.
  if (process.env.PGSEQ_WALSTATS) {
    const { rows } = await admin.query("select \"resource_manager/record_type\" as t, count, combined_size, fpi_size from pg_get_wal_stats($1, $2, true) where count > 0 order by combined_size desc limit 14", [l0, l1]);
    (a.walStats ??= {})[kind] = rows.map((r) => `    ${(Number(r.combined_size) / N).toFixed(0).padStart(6)} B (FPI ${(Number(r.fpi_size) / N).toFixed(0).padStart(5)})  ${(Number(r.count) / N).toFixed(2).padStart(6)}×  ${r.t}`).join('\n');
  }
  return { node: (c.user + c.system) / 1000 / N, pg: spent(b0, await backendCpu(a.dbName)) / N, wal: (await walBytes(l0, l1)) / N };
}
const res = apps.map(() => Object.fromEntries(kinds.map((k) => [k, []])));
const jobs = []; for (let a = 0; a < apps.length; a++) for (const k of kinds) jobs.push([a, k]);
for (let b = 0; b < BLOCKS + 2; b++) for (let j = 0; j < jobs.length; j++) { const [a, k] = jobs[(j + b) % jobs.length]; const v = await run(apps[a], k); if (b >= 2) res[a][k].push(v); }
const med = (x) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
for (let a = 0; a < apps.length; a++) {
  console.log(`${apps[a].root}:`);
  for (const k of kinds) {
    const r = res[a][k]; console.log(`  ${k.padEnd(13)} node ${(med(r.map((x) => x.node)) * 1000).toFixed(0)} µs  pg ${(med(r.map((x) => x.pg)) * 1000).toFixed(0)} µs  WAL ${med(r.map((x) => x.wal)).toFixed(0)} B`);
    if (apps[a].walStats?.[k]) console.log(apps[a].walStats[k]);
  }
}
for (const x of apps) { await x.rt.close(); fs.rmSync(x.dir, { recursive: true, force: true }); await admin.query(`DROP DATABASE IF EXISTS ${x.dbName} WITH (FORCE)`); }
await admin.end();
