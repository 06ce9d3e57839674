// SQLite's wall time per statement inside a running service (docs/performance.md, "Issue 13 on
// this machine"): preloaded into the service by the bench, it wraps better-sqlite3's statement
// methods (run, all, get, iterate) and `exec` with a timer and, every second, writes the running
// totals of the last 8 seconds to SQLITE_STATEMENTS_OUT (default /tmp/sqlite-statements-<pid>.json):
// an array of snapshots, each [[sql (first 110 characters), calls, nanoseconds], ...].
//
//   BENCH_SCENARIOS=invoice-create INVOICING_PROCESSES=1 \
//   BENCH_SERVICE_NODE_ARGS="--import $PWD/bench/probes/sqlite-statements.mjs" npm run bench
//   node bench/probes/sqlite-statements.mjs /tmp/sqlite-statements-<pid>.json [seconds=5]
//
// The second form prints the last `seconds` of a file per document (the count of the invoice
// INSERT): µs a document and calls a document, statement by statement. Timing adds ~1 µs a
// statement; compare runs made with it, never with runs made without.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  const [file, seconds = '5'] = process.argv.slice(2);
  const snaps = JSON.parse(fs.readFileSync(file, 'utf8'));
  const last = new Map(snaps.at(-1).map(([k, n, ns]) => [k, [n, ns]]));
  const first = new Map((snaps.at(-1 - Number(seconds)) ?? []).map(([k, n, ns]) => [k, [n, ns]]));
  const rows = [...last].map(([k, [n, ns]]) => [k, n - (first.get(k)?.[0] ?? 0), ns - (first.get(k)?.[1] ?? 0)]);
  const docs = rows.find(([k]) => k.startsWith('insert into "invoices"'))?.[1] || 1;
  console.log(`${docs} documents; µs a document, calls a document, statement`);
  for (const [k, n, ns] of rows.sort((a, b) => b[2] - a[2]).filter(([, n]) => n > 0)) {
    console.log(`${(ns / 1e3 / docs).toFixed(1).padStart(8)} ${(n / docs).toFixed(2).padStart(6)}  ${k}`);
  }
} else {
  const require = createRequire(path.join(path.dirname(self), '../../package.json'));
  const Sqlite = require('better-sqlite3');
  const probe = new Sqlite(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const totals = new Map();
  const count = (key, started) => {
    const entry = totals.get(key) ?? [0, 0n];
    entry[0] += 1;
    entry[1] += process.hrtime.bigint() - started;
    totals.set(key, entry);
  };
  for (const method of ['run', 'all', 'get', 'iterate']) {
    const original = proto[method];
    proto[method] = function (...args) {
      const started = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        count(this.source.replace(/\s+/g, ' ').slice(0, 110), started);
      }
    };
  }
  const exec = Sqlite.prototype.exec;
  Sqlite.prototype.exec = function (text) {
    const started = process.hrtime.bigint();
    try {
      return exec.call(this, text);
    } finally {
      count(`EXEC ${String(text).replace(/\s+/g, ' ').slice(0, 105)}`, started);
    }
  };
  const out = process.env.SQLITE_STATEMENTS_OUT ?? `/tmp/sqlite-statements-${process.pid}.json`;
  const snaps = [];
  setInterval(() => {
    snaps.push([...totals].map(([k, [n, ns]]) => [k, n, Number(ns)]));
    if (snaps.length > 8) snaps.shift();
    fs.writeFileSync(out, JSON.stringify(snaps));
  }, 1000).unref();
}
