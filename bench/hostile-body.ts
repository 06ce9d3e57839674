/**
 * Event-loop cost of the worst hostile bodies (bench/hostile-scenarios.ts), in-process: the
 * synchronous passes one request makes over its body (nesting scan and JSON.parse, envelope,
 * depth check, hash, validation), timed per body, worst of a few runs. Run on its own, after `npm run build`:
 *
 *   node dist/bench/hostile-body.js
 *
 * The old prohibited-field walk took seconds on `long-key-urls`; every pass is now linear, so
 * each body should cost tens of milliseconds, about what JSON.parse of 5 MB costs.
 */
import { jsonShapeProblem } from '../src/http/input-guard.js';
import { findTooDeepPath } from '../src/modules/invoices/rules/prohibited.js';
import { parseWriteEnvelope } from '../src/modules/invoices/rules/envelope.js';
import { requestHash } from '../src/shared/request-hash.js';
import { INVOICE_LIMITS, validateInvoice } from '../src/modules/invoices/rules/validation.js';
import { hostileBodies } from './hostile-scenarios.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

function once(text: string): Record<string, number> {
  const t = (): number => performance.now();
  const t0 = t();
  // The body parser refuses absurd shapes before JSON.parse (src/http/input-guard.ts).
  if (jsonShapeProblem(text) !== null) return { parse: t() - t0, envelope_depth: 0, hash: 0, validate: 0, total: t() - t0 };
  const body = JSON.parse(text) as unknown;
  const t1 = t();
  const envelope = parseWriteEnvelope(body, 'POST');
  const deep = findTooDeepPath(body, INVOICE_LIMITS.maxDepth + 1);
  const t2 = t();
  // The service validates first and hashes (for Idempotency-Key) only a valid, shallow body.
  const valid = validateInvoice(envelope.document).ok;
  const t3 = t();
  if (valid && deep === null) requestHash(body);
  const t4 = t();
  return { parse: t1 - t0, envelope_depth: t2 - t1, validate: t3 - t2, hash: t4 - t3, total: t4 - t0 };
}

const rows: string[] = ['| body | bytes | scan + JSON.parse ms | envelope + depth ms | validation ms | hash ms | total ms (worst) |', '|---|---|---|---|---|---|---|'];
for (const [name, text] of Object.entries(hostileBodies())) {
  let worst: Record<string, number> = { total: -1 };
  for (let i = 0; i < RUNS; i++) {
    const r = once(text);
    if (r.total! > worst.total!) worst = r;
  }
  const f = (n: number | undefined) => (n ?? 0).toFixed(1);
  rows.push(`| ${name} | ${Buffer.byteLength(text)} | ${f(worst.parse)} | ${f(worst.envelope_depth)} | ${f(worst.validate)} | ${f(worst.hash)} | ${f(worst.total)} |`);
}
process.stdout.write(`${rows.join('\n')}\n`);
