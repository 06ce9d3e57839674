// In-process CPU per create, two or more builds side by side (docs/performance.md, "E-mail and EDO creates").
// Each build's dist/ (npm run build) is started in this one process on its own SQLite file,
// INVOICING_IN_PROCESS_WORKER=false; creates of each kind (plain, recip = the same with one
// api_recipient, edo, email = recip + notify_recipients) go through app.inject, 50 at a time,
// in blocks of blockN, the blocks of both builds and all kinds interleaved (rotated order), the
// first two rounds discarded; CPU from process.cpuUsage() per block, the median per kind.
// usage: node bench/probes/enqueue-inprocess.mjs <rootA> <rootB> [<rootC> …] [kinds] [blockN] [blocks]
// (the roots: every leading argument that is a directory)
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { PROBE_KEY, writeProbeBootstrap } from './bootstrap.mjs';
const args = process.argv.slice(2);
const roots = [];
while (args.length > 0 && fs.existsSync(args[0]) && fs.statSync(args[0]).isDirectory()) roots.push(args.shift());
const kinds = (args[0] ?? 'plain,edo,email').split(',');
const N = Number(args[1] ?? 100); const BLOCKS = Number(args[2] ?? 20);
const KEY = PROBE_KEY;
async function start(root) {
  const { loadConfig } = await import(path.join(root, 'dist/src/config/config.js'));
  const { startRuntime } = await import(path.join(root, 'dist/src/runtime.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'enq-probe-'));
  writeProbeBootstrap(path.join(dir, 'b.json'));
  const env = { ...process.env, DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`, INVOICING_BOOTSTRAP_FILE: path.join(dir, 'b.json'),
    INVOICING_DATA_DIR: dir, INVOICING_IN_PROCESS_WORKER: 'false', LOG_LEVEL: 'warn', INVOICING_IP_RATE_PER_SEC: '1000000' };
  const rt = await startRuntime(loadConfig(env)); await rt.app.ready(); return { rt, dir };
}
const apps = [];
for (const r of roots) apps.push(await start(r));
const body = (n) => ({ number: n, date: '2026-03-02', currency: 'RUB', seller: { inn: '7707083893' },
  buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тверская, д. 1', email: 'buyer@example.com' },
  items: [ { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 }, { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
    { name: 'Внедрение', qty: 2, unit: 'дн', price: 24000, vat_pct: 22 }, { name: 'Обучение персонала', qty: 8, unit: 'ч', price: 2500.5, vat_pct: 22 },
    { name: 'Техническая поддержка, месяц', qty: 12, unit: 'мес', price: 3333.33, vat_pct: 22 } ] });
const extra = { plain: {}, edo: { buyer_edo_id: '2BM-7736207543-2012052808301121' },
  recip: { api_recipients: [{ email: 'buyer@example.com', name: 'Покупатель' }] },
  email: { api_recipients: [{ email: 'buyer@example.com', name: 'Покупатель' }], notify_recipients: true } };
const payloads = Object.fromEntries(kinds.map((k) => [k, JSON.stringify({ ...body('P-' + k), ...extra[k] })]));
async function run(app, kind) {
  let done = 0; const c0 = process.cpuUsage();
  async function lane() { while (done < N) { done++; const r = await app.inject({ method: 'POST', url: '/api/v1/invoices', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, payload: payloads[kind] }); if (r.statusCode >= 300 && r.statusCode !== 207) { console.log(r.body); process.exit(1); } } }
  await Promise.all(Array.from({ length: 50 }, lane));
  const c = process.cpuUsage(c0); return (c.user + c.system) / 1000 / N;
}
const res = apps.map(() => Object.fromEntries(kinds.map((k) => [k, []])));
const jobs = []; for (let a = 0; a < apps.length; a++) for (const k of kinds) jobs.push([a, k]);
for (let b = 0; b < BLOCKS + 2; b++) {
  for (let j = 0; j < jobs.length; j++) { const [a, k] = jobs[(j + b) % jobs.length]; const v = await run(apps[a].rt.app, k); if (b >= 2) res[a][k].push(v); }
}
const med = (x) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
const mean = (x) => x.reduce((p, q) => p + q, 0) / x.length;
for (let a = 0; a < apps.length; a++) {
  const base = med(res[a][kinds[0]]);
  console.log(`${roots[a]}: ` + kinds.map((k) => `${k} ${med(res[a][k]).toFixed(3)} ms (×${(med(res[a][k]) / base).toFixed(3)}; mean ${mean(res[a][k]).toFixed(3)})`).join(' | '));
}
for (const x of apps) { await x.rt.close(); fs.rmSync(x.dir, { recursive: true, force: true }); }
