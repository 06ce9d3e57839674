/**
 * List, search, read and create scenarios over a seeded volume: the bench team gets
 * BENCH_DOCS documents (default 100000) straight into the database before the first of these
 * scenarios runs, with a progress bar on stderr.
 *
 *   BENCH_DOCS=1000000 npm run bench                      # the 1M-document volume
 *   BENCH_DOCS=1000000 DATABASE_URL=postgres://… npm run bench
 *   BENCH_DOCS=0 …                                        # skip seeding
 *
 * Paths that depend on the seeded data (one document's id) are filled in by `setup`.
 */
import { sql } from 'kysely';
import { loadConfig } from '../src/config/config.js';
import { openDatabase } from '../src/db/database.js';
import type { BenchContext, Scenario } from './run.js';
import { progressBar, readTemplate, seedDocuments, seedNumber, type SeedResult } from './seed.js';

const DOCS = nonNegativeInt('BENCH_DOCS', 100_000);

function nonNegativeInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer (got ${JSON.stringify(raw)})`);
  return value;
}

/** A document as an integrator sends it; VAT 22 % is the standard rate, the seller the bench team's. */
function documentBody(sellerInn: string, number: string): Record<string, unknown> {
  return {
    number,
    date: '2026-03-02',
    currency: 'RUB',
    seller: { inn: sellerInn },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
    ],
  };
}

let seeding: Promise<{ seed: SeedResult; templateId: string }> | null = null;

/** Seeds once, whichever of these scenarios runs first. */
function ensureSeeded(ctx: BenchContext): Promise<{ seed: SeedResult; templateId: string }> {
  seeding ??= (async () => {
    const res = await fetch(`${ctx.serviceUrl}/api/v1/invoices`, {
      method: 'POST',
      headers: { 'x-api-key': ctx.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(documentBody(ctx.sellerInn, 'TEMPLATE-1')),
    });
    if (res.status !== 200) throw new Error(`creating the template document answered ${res.status}: ${await res.text()}`);
    const templateId = ((await res.json()) as { public_id: string }).public_id;
    const handle = openDatabase(loadConfig({ DATABASE_URL: ctx.databaseUrl }).database);
    try {
      const template = await readTemplate(handle.db, ctx.teamId, templateId);
      const seed = await seedDocuments(handle.db, {
        teamId: ctx.teamId,
        template,
        count: DOCS,
        onProgress: progressBar(`seeding ${DOCS} documents`),
      });
      // The steady state after a bulk load: PostgreSQL's autovacuum soon sets the visibility map
      // (index-only scans for count) and gathers statistics. SQLite stays as the service keeps
      // it, without planner statistics (its queries are written not to need them).
      if (handle.dialect === 'postgres') await sql`vacuum analyze invoices`.execute(handle.db);
      process.stdout.write(
        `  seeded ${seed.count} documents in ${(seed.ms / 1000).toFixed(1)} s (${Math.round(seed.count / Math.max(seed.ms / 1000, 0.001))}/s)\n`,
      );
      return { seed, templateId };
    } finally {
      await handle.close();
    }
  })();
  return seeding;
}

const rareQuery = seedNumber(Math.floor(DOCS / 2)).slice(0, -1);

function listScenario(name: string, query: string): Scenario {
  const scenario: Scenario = {
    name,
    target: 'service',
    method: 'GET',
    path: `/api/v1/invoices?${query}`,
    setup: async (ctx) => {
      await ensureSeeded(ctx);
      scenario.headers = { 'x-api-key': ctx.apiKey };
    },
  };
  return scenario;
}

const getOne: Scenario = {
  name: 'invoice-get',
  target: 'service',
  method: 'GET',
  path: '/api/v1/invoices/{id}',
  setup: async (ctx) => {
    const { templateId } = await ensureSeeded(ctx);
    getOne.path = `/api/v1/invoices/${templateId}`;
    getOne.headers = { 'x-api-key': ctx.apiKey };
  },
};

/** POSTs a new document every request (no public_id), with `extra` fields. */
function createScenario(name: string, number: string, extra: Record<string, unknown> = {}): Scenario {
  const scenario: Scenario = {
    name,
    target: 'service',
    method: 'POST',
    path: '/api/v1/invoices',
    setup: async (ctx) => {
      await ensureSeeded(ctx);
      scenario.headers = { 'x-api-key': ctx.apiKey };
      scenario.body = JSON.stringify({ ...documentBody(ctx.sellerInn, number), ...extra });
    },
  };
  return scenario;
}

/** Appended to `scenarios` in run.ts, in this order; the create scenario last, as it grows the volume. */
export const listScenarios: Scenario[] = [
  listScenario('list-first-page', 'limit=50'),
  listScenario('list-offset-5000', 'limit=50&offset=5000'),
  // Ten seeded numbers share this prefix ("СЧ-050000" of 1M): a search that matches few.
  listScenario('list-search-few', `q=${encodeURIComponent(rareQuery)}`),
  // About one month of the four seeded years.
  listScenario('list-date-range', 'date_from=2024-03-01&date_to=2024-03-31'),
  getOne,
  createScenario('invoice-create', 'BENCH-POST'),
  // Starts EDO sync: the job is written in the document's transaction, and the service's
  // in-process worker sends it (sandbox operator, PDF rendered) while the scenario runs.
  createScenario('invoice-create-edo', 'BENCH-EDO', { buyer_edo_id: '2BM-7736207543-2012052808301121' }),
];
