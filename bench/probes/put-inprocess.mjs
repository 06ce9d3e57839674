// In-process CPU per full update (PUT with If-Match), one or two builds side by side
// (docs/performance.md, "Session 5: PUT on SQLite"). Each build's dist/ (npm run build) is started in
// this one process on its own SQLite file (synchronous=FULL, INVOICING_IN_PROCESS_WORKER=false);
// a pool of POOL documents is created as the bench's invoice-put scenario does (bench/list-scenarios.ts:
// the same document, its number BENCH-PUT-i), then PUTs go through app.inject, 50 at a time, each on
// a document no other lane is updating, with the ETag of its last answer in If-Match and another
// comment each time (a real new revision). Blocks of N PUTs, the builds' blocks interleaved, the first
// two rounds discarded; CPU from process.cpuUsage() per block, the median per build.
// With SQL=1 every statement's wall time is summed by its SQL text (better-sqlite3's run/all/get
// wrapped) and printed per PUT; the group-commit batches and the WAL file size are printed too.
// MODE=create: creates instead of PUTs (the same document), for the ratio of a PUT to a create;
// MODE=create-email: the same creates e-mailed to one buyer (bench scenario invoice-create-email-buyer);
// MODE=create-edo: the same creates sent through EDO (bench scenario invoice-create-edo).
// MODE=create-keyed: the same creates, each with an Idempotency-Key of its own (bench scenario invoice-create-keyed).
// usage: node bench/probes/put-inprocess.mjs <rootA> [rootB] [N=200] [blocks=20]   (a root may end in :thread, see start())
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path'; import { createRequire } from 'node:module';
const args = process.argv.slice(2);
const roots = args.filter((a) => !/^\d+$/.test(a));
const nums = args.filter((a) => /^\d+$/.test(a)).map(Number);
const N = nums[0] ?? 200; const BLOCKS = nums[1] ?? 20; const POOL = 200; const LANES = 50;
const KEY = PROBE_KEY;
let keyCount = 0;
const sqlTimes = new Map(); const commits = []; const works = []; const holds = new Map();
if (process.env.SQL === '1') {
  const require = createRequire(path.join(path.resolve(roots[0].replace(/:thread$/, '')), 'package.json'));
  const Sqlite = require('better-sqlite3');
  const proto = Object.getPrototypeOf(new Sqlite(':memory:').prepare('select 1'));
  for (const m of ['run', 'all', 'get']) {
    const orig = proto[m];
    proto[m] = function (...a) {
      const t = process.hrtime.bigint(); const c = process.cpuUsage();
      // The write lock's hold: BEGIN's start to COMMIT's start (the batch's work) per file.
      if (this.source === 'begin') holds.set(this.database.name, t);
      if (this.source === 'commit' && holds.has(this.database.name)) { works.push({ file: this.database.name, ms: Number(t - holds.get(this.database.name)) / 1e6 }); holds.delete(this.database.name); }
      try { return orig.apply(this, a); } finally {
        const u = process.cpuUsage(c);
        if (this.source === 'commit') commits.push({ file: this.database.name, ms: Number(process.hrtime.bigint() - t) / 1e6 });
        const e = sqlTimes.get(this.source) ?? { n: 0, ns: 0n, cpu: 0 }; e.n++; e.ns += process.hrtime.bigint() - t; e.cpu += u.user + u.system; sqlTimes.set(this.source, e);
      }
    };
  }
}
async function start(spec) {
  // "<root>:thread": that build with INVOICING_SQLITE_CHECKPOINT_THREAD=true (src/db/wal-checkpointer.ts).
  const thread = spec.endsWith(':thread'); const root = thread ? spec.slice(0, -':thread'.length) : spec;
  const { loadConfig } = await import(path.join(path.resolve(root), 'dist/src/config/config.js'));
  const { startRuntime } = await import(path.join(path.resolve(root), 'dist/src/runtime.js'));
  const { groupCommitFor } = await import(path.join(path.resolve(root), 'dist/src/db/group-commit.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'put-probe-'));
  writeProbeBootstrap(path.join(dir, 'b.json'));
  const file = path.join(dir, 'db.sqlite');
  const env = { ...process.env, DATABASE_URL: `sqlite:${file}`, INVOICING_BOOTSTRAP_FILE: path.join(dir, 'b.json'),
    INVOICING_DATA_DIR: dir, INVOICING_IN_PROCESS_WORKER: 'false', LOG_LEVEL: 'warn', INVOICING_IP_RATE_PER_SEC: '1000000',
    INVOICING_SQLITE_CHECKPOINT_THREAD: thread ? 'true' : 'false' };
  const rt = await startRuntime(loadConfig(env)); await rt.app.ready();
  return { rt, dir, file, root: spec, base: root, group: groupCommitFor(rt.database.db), pool: [] };
}
const doc = { number: 'BENCH-PUT', date: '2026-03-02', currency: 'RUB', seller: { inn: '7707083893' },
  buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тверская, д. 1', email: 'buyer@example.com' },
  items: [ { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 }, { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
    { name: 'Внедрение', qty: 2, unit: 'дн', price: 24000, vat_pct: 22 }, { name: 'Обучение персонала', qty: 8, unit: 'ч', price: 2500.5, vat_pct: 22 },
    { name: 'Техническая поддержка, месяц', qty: 12, unit: 'мес', price: 3333.33, vat_pct: 22 } ] };
const putBody = JSON.stringify({ invoice: { ...doc, comment: 'Обновлено' } });
const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
async function seed(x) {
  // SEED=n: n documents bulk-loaded as the bench seeds them (bench/seed.ts), WAL checkpointed after.
  const n = Number(process.env.SEED ?? 0); if (n === 0) return;
  const { readTemplate, seedDocuments } = await import(path.join(path.resolve(x.base), 'dist/bench/seed.js'));
  const r = await x.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers, payload: JSON.stringify({ ...doc, number: 'TEMPLATE-1' }) });
  const template = await readTemplate(x.rt.database.db, 'bench', JSON.parse(r.body).public_id);
  await seedDocuments(x.rt.database.db, { teamId: 'bench', template, count: n });
  const { sql } = await import(path.join(path.resolve(x.base), 'node_modules/kysely/dist/esm/index.js'));
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(x.rt.database.db);
}
async function backlog(x) {
  // BACKLOG=n: n creates with an e-mail to their recipient first, as the bench's invoice-create-email
  // scenario leaves them: with no worker running, every e-mail stays pending in the outbox.
  const n = Number(process.env.BACKLOG ?? 0); let done = 0;
  const payload = JSON.stringify({ ...doc, number: 'MAIL', api_recipients: [{ email: 'buyer@example.com', name: 'Покупатель' }], notify_recipients: true });
  async function lane() { while (done < n) { done++; const r = await x.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers, payload }); if (r.statusCode !== 200 && r.statusCode !== 207) throw new Error(r.body); } }
  await Promise.all(Array.from({ length: LANES }, lane));
}
async function fill(x) {
  await seed(x);
  await backlog(x);
  if (process.env.AUTOCKPT) { const { sql } = await import(path.join(path.resolve(x.base), 'node_modules/kysely/dist/esm/index.js')); await sql.raw(`pragma wal_autocheckpoint=${Number(process.env.AUTOCKPT)}`).execute(x.rt.database.db); }
  for (let i = 0; i < POOL; i++) {
    const r = await x.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers, payload: JSON.stringify({ ...doc, number: `BENCH-PUT-${i}` }) });
    if (r.statusCode !== 200) throw new Error(r.body);
    x.pool.push({ id: JSON.parse(r.body).public_id, etag: r.headers.etag });
  }
}
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { PROBE_KEY, writeProbeBootstrap } from './bootstrap.mjs';
async function run(x) {
  const eld = monitorEventLoopDelay({ resolution: 5 }); eld.enable();
  let done = 0; const lat = x.lat ??= []; const c0 = process.cpuUsage(); const t0 = performance.now();
  async function lane() {
    while (done < N) {
      done++;
      const d = x.pool.shift();
      if (process.env.MODE === 'create' || process.env.MODE === 'create-email' || process.env.MODE === 'create-edo' || process.env.MODE === 'create-keyed') {
        const mail = process.env.MODE === 'create-email' ? { api_recipients: [{ email: 'buyer@example.com', name: 'Покупатель' }], notify_recipients: true }
          : process.env.MODE === 'create-edo' ? { buyer_edo_id: '2BM-7736207543-2012052808301121' } : {};
        const keyed = process.env.MODE === 'create-keyed' ? { 'idempotency-key': `probe-${process.pid}-${x.root}-${keyCount++}` } : {};
        const r = await x.rt.app.inject({ method: 'POST', url: '/api/v1/invoices', headers: { ...headers, ...keyed }, payload: JSON.stringify({ ...doc, number: `C-${done}`, ...mail }) });
        // 207: the e-mail is still on its way (the worker's; INVOICING_IN_PROCESS_WORKER=false).
        if (r.statusCode !== 200 && !(mail.notify_recipients && r.statusCode === 207)) { console.log(r.statusCode, r.body); process.exit(1); }
        x.pool.push(d); continue;
      }
      const t0 = performance.now();
      const r = await x.rt.app.inject({ method: 'PUT', url: `/api/v1/invoices/${d.id}`, headers: { ...headers, 'if-match': d.etag },
        payload: putBody.replace('"Обновлено"', JSON.stringify(`Обновлено ${d.etag}`)) });
      if (r.statusCode !== 200) { console.log(r.statusCode, r.body); process.exit(1); }
      lat.push(performance.now() - t0);
      d.etag = r.headers.etag; x.pool.push(d);
    }
  }
  await Promise.all(Array.from({ length: LANES }, lane));
  const c = process.cpuUsage(c0); eld.disable();
  x.loopMax = Math.max(x.loopMax ?? 0, x.measuring ? eld.max / 1e6 : 0);
  return { cpu: (c.user + c.system) / 1000 / N, sys: c.system / 1000 / N, wall: performance.now() - t0 };
}
const apps = [];
for (const r of roots) { const x = await start(r); await fill(x); apps.push(x); }
const res = apps.map(() => []);
let walMax = apps.map(() => 0);
for (let b = 0; b < BLOCKS + 2; b++) {
  if (b === 2) { sqlTimes.clear(); commits.length = 0; works.length = 0; for (const x of apps) { x.lat = []; x.measuring = true; } for (const x of apps) Object.assign(x.group.stats, { batches: 0, writes: 0, largest: 0 }); }
  for (let j = 0; j < apps.length; j++) {
    const a = (j + b) % apps.length; const v = await run(apps[a]);
    if (b >= 2) res[a].push(v);
    try { walMax[a] = Math.max(walMax[a], fs.statSync(apps[a].file + '-wal').size); } catch {}
  }
}
// WALCOPY=dir: the first build's WAL file copied there after the last block (with AUTOCKPT=0: every frame the PUTs wrote).
if (process.env.WALCOPY) fs.copyFileSync(apps[0].file + '-wal', path.join(process.env.WALCOPY, 'copy.sqlite-wal'));
const med = (x) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
for (let a = 0; a < apps.length; a++) {
  const r = res[a]; const g = apps[a].group.stats;
  console.log(`${apps[a].root}: CPU ms/PUT median ${med(r.map((v) => v.cpu)).toFixed(3)} (system ${med(r.map((v) => v.sys)).toFixed(3)}), ` +
    `PUT/s median ${(N / med(r.map((v) => v.wall)) * 1000).toFixed(0)}; batches ${g.batches}, writes ${g.writes} (${(g.writes / Math.max(1, g.batches)).toFixed(1)}/batch, largest ${g.largest}); WAL max ${(walMax[a] / 1e6).toFixed(1)} MB`);
}
const pct = (x, p) => { const s = [...x].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0; };
for (const x of apps) if (x.lat?.length) console.log(`${x.root}: PUT latency p50 ${pct(x.lat, 0.5).toFixed(0)} ms, p99 ${pct(x.lat, 0.99).toFixed(0)} ms, max ${pct(x.lat, 1).toFixed(0)} ms; longest event-loop delay ${x.loopMax.toFixed(0)} ms`);
for (const x of apps) {
  const c = commits.filter((v) => v.file === x.file).map((v) => v.ms);
  const w = works.filter((v) => v.file === x.file).map((v) => v.ms); const docs = N * BLOCKS;
  if (w.length) console.log(`${x.root}: per document in the transaction (SQL=1 adds its timing): work ${(w.reduce((p, q) => p + q, 0) * 1000 / docs).toFixed(1)} µs, COMMIT ${(c.reduce((p, q) => p + q, 0) * 1000 / docs).toFixed(1)} µs`);
  if (c.length) console.log(`${x.root}: COMMIT ms p50 ${pct(c, 0.5).toFixed(1)}, p90 ${pct(c, 0.9).toFixed(1)}, max ${pct(c, 1).toFixed(1)}; the 5 longest ${[...c].sort((a, b) => b - a).slice(0, 5).map((v) => v.toFixed(0)).join(', ')}`);
}
if (sqlTimes.size > 0) {
  const puts = N * BLOCKS * apps.length;
  const rows = [...sqlTimes.entries()].sort((p, q) => Number(q[1].ns - p[1].ns));
  let total = 0n; let cpu = 0; for (const [, e] of rows) { total += e.ns; cpu += e.cpu; }
  console.log(`SQL per PUT: wall ${(Number(total) / 1e3 / puts).toFixed(1)} µs, CPU ${(cpu / puts).toFixed(1)} µs`);
  for (const [s, e] of rows.slice(0, 30)) console.log(`${(Number(e.ns) / 1e3 / puts).toFixed(1).padStart(8)} µs/PUT wall ${(e.cpu / puts).toFixed(1).padStart(7)} CPU ${(e.n / puts).toFixed(2).padStart(6)}×  ${s.replace(/\s+/g, ' ').slice(0, 150)}`);
}
for (const x of apps) if (x.rt.database.checkpointer) console.log(`${x.root}: checkpoint thread`, JSON.stringify(await x.rt.database.checkpointer.stats()));
for (const x of apps) { await x.rt.close(); if (process.env.KEEP === "1") console.log("kept", x.file); else fs.rmSync(x.dir, { recursive: true, force: true }); }
