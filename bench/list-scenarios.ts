/**
 * List, search, read and create scenarios over a seeded volume: the bench team gets
 * BENCH_DOCS documents (default 100000) straight into the database before the first of these
 * scenarios runs, with a progress bar on stderr.
 *
 *   BENCH_DOCS=1000000 npm run bench                      # the 1M-document volume
 *   BENCH_DOCS=1000000 DATABASE_URL=postgres://… npm run bench
 *   BENCH_DOCS=0 …                                        # skip seeding
 *   BENCH_DOCS=1000000 DATABASE_URL=sqlite:/path/bench.sqlite …  # seeded by an earlier run: reused
 *
 * Paths that depend on the seeded data (one document's id) are filled in by `setup`.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/config.js';
import { openDatabase } from '../src/db/database.js';
import { createStores } from '../src/stores.js';
import type { BenchContext, Scenario } from './scenario.js';
import { POLAR_WORD, progressBar, readTemplate, seedDocuments, seedNumber } from './seed.js';

const DOCS = nonNegativeInt('BENCH_DOCS', 100_000);

function nonNegativeInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer (got ${JSON.stringify(raw)})`);
  return value;
}

/**
 * A document as an integrator sends it: five items (a realistic invoice has 3–8), VAT 22 %
 * (the standard rate), the seller the bench team's.
 */
export function documentBody(sellerInn: string, number: string): Record<string, unknown> {
  return {
    number,
    date: '2026-03-02',
    currency: 'RUB',
    seller: { inn: sellerInn },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тверская, д. 1', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
      { name: 'Внедрение', qty: 2, unit: 'дн', price: 24000, vat_pct: 22 },
      { name: 'Обучение персонала', qty: 8, unit: 'ч', price: 2500.5, vat_pct: 22 },
      { name: 'Техническая поддержка, месяц', qty: 12, unit: 'мес', price: 3333.33, vat_pct: 22 },
    ],
  };
}

let template: Promise<string> | null = null;

/** Creates the template document through the API once; every scenario and the baseline use it. */
export function ensureTemplate(ctx: Pick<BenchContext, 'serviceUrl' | 'apiKey' | 'sellerInn'>): Promise<string> {
  template ??= (async () => {
    const res = await fetch(`${ctx.serviceUrl}/api/v1/invoices`, {
      method: 'POST',
      headers: { 'x-api-key': ctx.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(documentBody(ctx.sellerInn, 'TEMPLATE-1')),
    });
    if (res.status !== 200) throw new Error(`creating the template document answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { public_id: string }).public_id;
  })();
  return template;
}

let seeding: Promise<{ templateId: string }> | null = null;

/**
 * Seeds once, whichever of these scenarios runs first; or not at all when the bench team
 * already holds more than BENCH_DOCS documents (a database seeded by an earlier run, given
 * as DATABASE_URL, reused: bench/seed.ts writes the same documents for the same BENCH_DOCS).
 */
export function ensureSeededVolume(ctx: BenchContext): Promise<{ templateId: string }> {
  seeding ??= (async () => {
    const templateId = await ensureTemplate(ctx);
    const handle = openDatabase(loadConfig({ DATABASE_URL: ctx.databaseUrl }).database);
    try {
      // This run's template is one of them.
      const present = (await createStores(handle).invoices.listState(ctx.teamId)).documents;
      if (present > DOCS) {
        process.stdout.write(`  the bench team already holds ${present} documents (BENCH_DOCS=${DOCS}): reusing them, not seeding\n`);
        return { templateId };
      }
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
      // Every seeded table: without statistics on share_links PostgreSQL reads all of a team's
      // links (a bitmap scan, 9 ms at 20,000 documents) for the page's buyer tokens.
      if (handle.dialect === 'postgres') await sql`vacuum analyze invoices, share_links, invoice_items, events`.execute(handle.db);
      // SQLite: the bulk load's WAL is copied into the database now, not by the first measured
      // writes (a checkpoint of thousands of pages, fsynced, used to stall the first write scenario).
      else await sql`pragma wal_checkpoint(TRUNCATE)`.execute(handle.db);
      process.stdout.write(
        `  seeded ${seed.count} documents in ${(seed.ms / 1000).toFixed(1)} s (${Math.round(seed.count / Math.max(seed.ms / 1000, 0.001))}/s)\n`,
      );
      return { templateId };
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
      await ensureSeededVolume(ctx);
      scenario.headers = { 'x-api-key': ctx.apiKey };
    },
  };
  return scenario;
}

/**
 * The same list request, but each one a page no node has kept: `limit` cycles over 45…55 and
 * `offset` over 0…36 (407 distinct pages, more than the page cache's 256, visited in turn so
 * an LRU never hits). Each page costs what the first page of that query costs (at most ~90
 * rows walked): the uncached cost of the scenario of the same query.
 */
function uncachedListScenario(name: string, query: string): Scenario {
  let n = 0;
  const prefix = `/api/v1/invoices?${query ? `${query}&` : ''}`;
  const scenario: Scenario = {
    name,
    target: 'service',
    method: 'GET',
    path: `${prefix}limit=45..55&offset=0..36`,
    setup: async (ctx) => {
      await ensureSeededVolume(ctx);
      scenario.headers = { 'x-api-key': ctx.apiKey };
    },
    requests: () => [
      {
        setupRequest: (request) => {
          const i = n++;
          return { ...request, method: 'GET', headers: { ...request.headers, ...scenario.headers }, path: `${prefix}limit=${45 + (i % 11)}&offset=${i % 37}` };
        },
      },
    ],
  };
  return scenario;
}

const getOne: Scenario = {
  name: 'invoice-get',
  target: 'service',
  method: 'GET',
  path: '/api/v1/invoices/{id}',
  setup: async (ctx) => {
    const { templateId } = await ensureSeededVolume(ctx);
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
      await ensureSeededVolume(ctx);
      scenario.headers = { 'x-api-key': ctx.apiKey };
      scenario.body = JSON.stringify({ ...documentBody(ctx.sellerInn, number), ...extra });
    },
  };
  return scenario;
}

/**
 * Creates as an integrator that retries safely sends them: the plain create's document, each
 * request with an Idempotency-Key of its own (a first request every time, never a replay), so the
 * key's claim and record are written with every document.
 */
function keyedCreateScenario(name: string, number: string): Scenario {
  let sent = 0;
  const run = randomUUID();
  const scenario = createScenario(name, number);
  scenario.requests = () => [
    {
      setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': `${run}-${++sent}` } }),
    },
  ];
  return scenario;
}

/**
 * Full updates (PUT with If-Match), each of a document of its own: a pool of documents is
 * created first, a request takes one that no other request is updating, sends its ETag and
 * keeps the new ETag from the answer. Every request so succeeds (200) instead of racing.
 */
function updateScenario(name: string, poolSize: number): Scenario {
  const pool: Array<{ id: string; etag: string }> = [];
  /** Every document of the pool, also those whose last request a run's end cut off (not back in `pool`). */
  const all: Array<{ id: string; etag: string }> = [];
  let body = '';
  const scenario: Scenario = {
    name,
    target: 'service',
    method: 'PUT',
    path: '/api/v1/invoices/{id}',
    setup: async (ctx) => {
      await ensureSeededVolume(ctx);
      scenario.headers = { 'x-api-key': ctx.apiKey };
      if (all.length > 0) {
        // A later round (BENCH_ROUNDS): the documents whose answer never came (the run ended
        // first) come back with the ETag they have now, so every round has the whole pool.
        const lost = all.filter((d) => !pool.includes(d));
        for (const doc of lost) {
          const res = await fetch(`${ctx.serviceUrl}/api/v1/invoices/${doc.id}`, { headers: { 'x-api-key': ctx.apiKey } });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`reading a document to update answered ${res.status}`);
          doc.etag = res.headers.get('etag') ?? '';
          pool.push(doc);
        }
        return;
      }
      const doc = documentBody(ctx.sellerInn, 'BENCH-PUT');
      for (let i = 0; i < poolSize; i++) {
        const res = await fetch(`${ctx.serviceUrl}/api/v1/invoices`, {
          method: 'POST',
          headers: { 'x-api-key': ctx.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ ...doc, number: `BENCH-PUT-${i}` }),
        });
        if (res.status !== 200) throw new Error(`creating a document to update answered ${res.status}: ${await res.text()}`);
        const created = { id: ((await res.json()) as { public_id: string }).public_id, etag: res.headers.get('etag') ?? '' };
        pool.push(created);
        all.push(created);
      }
      // The same content each time, with another comment: each PUT is a real new revision.
      body = JSON.stringify({ invoice: { ...doc, comment: 'Обновлено' } });
    },
    requests: () => [
      {
        setupRequest: (request, context) => {
          const doc = pool.shift();
          if (!doc) throw new Error('the update pool is empty: more connections than documents');
          (context as { doc?: typeof doc }).doc = doc;
          return {
            ...request,
            method: 'PUT',
            path: `/api/v1/invoices/${doc.id}`,
            headers: { ...request.headers, 'content-type': 'application/json', 'if-match': doc.etag },
            body: body.replace('"Обновлено"', JSON.stringify(`Обновлено ${doc.etag}`)),
          };
        },
        onResponse: (_status, _body, context, headers) => {
          const doc = (context as { doc: { id: string; etag: string } }).doc;
          const etag = headers?.etag ?? headers?.ETag;
          if (typeof etag === 'string') doc.etag = etag;
          pool.push(doc);
        },
      },
    ],
  };
  return scenario;
}

/**
 * A read soak (BENCH_SCENARIOS=read-soak; BENCH_SOAK_SEC, default 600): detail, list pages,
 * a search and the catalog in turn, for the service's memory over time (RSS before → after).
 */
const readSoak: Scenario = {
  name: 'read-soak',
  target: 'service',
  method: 'GET',
  path: '/api/v1/ref/catalog',
  onlyWhenNamed: true,
  durationSec: nonNegativeInt('BENCH_SOAK_SEC', 600),
  setup: async (ctx) => {
    const { templateId } = await ensureSeededVolume(ctx);
    const headers = { 'x-api-key': ctx.apiKey };
    const paths = [
      `/api/v1/invoices/${templateId}`,
      '/api/v1/invoices?limit=50',
      '/api/v1/invoices?date_from=2024-03-01&date_to=2024-03-31',
      `/api/v1/invoices?q=${encodeURIComponent(POLAR_WORD.toLowerCase())}`,
      '/api/v1/ref/catalog',
    ];
    readSoak.requests = () => paths.map((path) => ({ method: 'GET' as const, path, headers }));
  },
};

/** Appended to `scenarios` in run.ts, in this order; the create scenario last, as it grows the volume. */
export const listScenarios: Scenario[] = [
  listScenario('list-first-page', 'limit=50'),
  listScenario('list-offset-5000', 'limit=50&offset=5000'),
  // Ten seeded numbers share this prefix ("СЧ-050000" of 1M): a search that matches few.
  listScenario('list-search-few', `q=${encodeURIComponent(rareQuery)}`),
  // Every hundredth seeded buyer is «Полярная …»: a search matching 1 % of the team.
  listScenario('list-search-1pct', `q=${encodeURIComponent(POLAR_WORD.toLowerCase())}`),
  // About one month of the four seeded years.
  listScenario('list-date-range', 'date_from=2024-03-01&date_to=2024-03-31'),
  // The three above with the page cache defeated (a different page each request).
  uncachedListScenario('list-first-page-uncached', ''),
  uncachedListScenario('list-search-1pct-uncached', `q=${encodeURIComponent(POLAR_WORD.toLowerCase())}`),
  uncachedListScenario('list-date-range-uncached', 'date_from=2024-03-01&date_to=2024-03-31'),
  getOne,
  createScenario('invoice-create', 'BENCH-POST'),
  // Starts EDO sync: the job is written in the document's transaction, and the service's
  // in-process worker sends it (sandbox operator, PDF rendered) while the scenario runs.
  createScenario('invoice-create-edo', 'BENCH-EDO', { buyer_edo_id: '2BM-7736207543-2012052808301121' }),
  // Each create queues an e-mail to the buyer (written as .eml files when SMTP_URL is unset).
  createScenario('invoice-create-email', 'BENCH-MAIL', {
    api_recipients: [{ email: 'buyer@example.com', name: 'Покупатель' }],
    notify_recipients: true,
  }),
  // The plain create's very document, e-mailed: to its buyer (buyer.email), through the buyer's
  // link, so nothing but the notification differs from invoice-create (the scenario above adds
  // an API recipient, i.e. a recipient link as well).
  createScenario('invoice-create-email-buyer', 'BENCH-MAILB', { notify_recipients: true }),
  keyedCreateScenario('invoice-create-keyed', 'BENCH-KEYED'),
  updateScenario('invoice-put', 200),
  readSoak,
];
