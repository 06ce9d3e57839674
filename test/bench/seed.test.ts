/**
 * The bench's bulk seeder (bench/seed.ts) must leave the database exactly as the service's
 * own writes would: the same rows, the team's document count and list version, the month
 * counters, the search index (SQLite's FTS5 table; PostgreSQL's GIN index is an index), the
 * share links and the creation events, and the row triggers in place afterwards. Checked
 * against the reference path (rows inserted with every trigger firing) seeded with the same
 * documents into another database, and against what the API answers.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentBody } from '../../bench/list-scenarios.js';
import { POLAR_WORD, readTemplate, seedDocuments } from '../../bench/seed.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/db.js';
import { ACME, ORG1_INN } from '../modules/invoices/write-helpers.js';

const COUNT = 2_500;

interface Seeded {
  t: TestApp;
  templateId: string;
}

async function seeded(mode: 'bulk' | 'as-service'): Promise<Seeded> {
  const t = await buildTestApp();
  const res = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: ACME, payload: documentBody(ORG1_INN, 'TEMPLATE-1') });
  expect(res.statusCode).toBe(200);
  const templateId = res.json().public_id as string;
  // Several transactions, the last one short: the bulk path's per-transaction work is exercised.
  await seedDocuments(t.db.db, { teamId: 'acme', template: await readTemplate(t.db.db, 'acme', templateId), count: COUNT, chunk: 1_000, mode });
  return { t, templateId };
}

/** Every row of a table with the random parts (ids, tokens) replaced by the document's number. */
async function rowsOf(s: Seeded, table: 'invoices' | 'invoice_items' | 'share_links' | 'events'): Promise<unknown[]> {
  const numbers = new Map(
    (await s.t.db.db.selectFrom('invoices').select(['public_id', 'number']).execute()).map((r) => [r.public_id, r.number]),
  );
  const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(s.t.db.db)).rows;
  const out = rows.map((row) => {
    const publicId = String(row.public_id);
    const number = numbers.get(publicId) ?? '?';
    const copy: Record<string, unknown> = { ...row, public_id: number };
    for (const column of ['package_public_id', 'token', 'seq', 'tx_id']) if (column in copy) copy[column] = '*';
    for (const column of ['document', 'data']) {
      if (typeof copy[column] === 'string') copy[column] = (copy[column] as string).split(publicId).join(number);
    }
    // The template itself was created through the API at another instant.
    if (number === 'TEMPLATE-1') for (const column of ['created_at', 'last_modified_at', 'api_created_at', 'changed_at']) copy[column] = '*';
    return copy;
  });
  return out.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

async function counters(s: Seeded): Promise<unknown> {
  const db = s.t.db.db;
  const documents = await db
    .selectFrom('team_document_counts')
    .select((eb) => ['team_id', eb.fn.sum<number>('documents').as('documents'), eb.fn.sum<number>('changes').as('changes')])
    .groupBy('team_id')
    .orderBy('team_id')
    .execute();
  const months = await db
    .selectFrom('team_month_counts')
    .select((eb) => ['team_id', 'month', eb.fn.sum<number>('documents').as('documents')])
    .groupBy(['team_id', 'month'])
    .orderBy('team_id')
    .orderBy('month')
    .execute();
  const normalize = (rows: Array<Record<string, unknown>>) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v])));
  return { documents: normalize(documents), months: normalize(months) };
}

async function triggers(s: Seeded): Promise<string[]> {
  if (usingPostgres()) {
    const { rows } = await sql<{ name: string }>`SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'O' ORDER BY tgname`.execute(s.t.db.db);
    return rows.map((r) => r.name);
  }
  const { rows } = await sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name`.execute(s.t.db.db);
  return rows.map((r) => `${r.name}: ${r.sql}`);
}

async function list(s: Seeded, query: string): Promise<{ total: number; numbers: string[] }> {
  const res = await s.t.call({ method: 'GET', url: `/api/v1/invoices?${query}`, headers: ACME });
  expect(res.statusCode).toBe(200);
  const body = res.json();
  return { total: body.total, numbers: body.items.map((i: { number: string }) => i.number) };
}

describe('the bench seeder: bulk equals row by row', () => {
  let bulk: Seeded;
  let reference: Seeded;

  beforeAll(async () => {
    bulk = await seeded('bulk');
    reference = await seeded('as-service');
  }, 120_000);
  afterAll(async () => {
    await bulk?.t.close();
    await reference?.t.close();
  });

  it('writes the same rows', async () => {
    for (const table of ['invoices', 'invoice_items', 'share_links', 'events'] as const) {
      const [a, b] = [await rowsOf(bulk, table), await rowsOf(reference, table)];
      expect(a.length, table).toBe(b.length);
      expect(a, table).toEqual(b);
    }
    expect((await rowsOf(bulk, 'invoices')).length).toBe(COUNT + 1);
  });

  it('leaves the counters as the triggers and addDocuments would, and the triggers in place', async () => {
    const c = (await counters(bulk)) as { documents: Array<{ team_id: string; documents: number; changes: number }> };
    expect(c).toEqual(await counters(reference));
    const acme = c.documents.find((r) => r.team_id === 'acme');
    // Every document and every share link (two each) moved the list version once.
    expect(acme?.documents).toBe(COUNT + 1);
    expect(acme?.changes).toBe(3 * (COUNT + 1));
    expect(await triggers(bulk)).toEqual(await triggers(reference));
  });

  it.skipIf(usingPostgres())('SQLite: the search index holds exactly the rows (FTS5 integrity-check against the content)', async () => {
    await sql`INSERT INTO invoices_fts(invoices_fts, rank) VALUES ('integrity-check', 1)`.execute(bulk.t.db.db);
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM invoices_fts WHERE invoices_fts MATCH ${`"${POLAR_WORD.toLowerCase()}"`}`.execute(bulk.t.db.db);
    expect(Number(rows[0]?.n)).toBe(COUNT / 100);
  });

  it('answers the same lists as the reference, with exact totals', async () => {
    const queries = [
      'limit=50',
      'limit=50&offset=1200',
      `q=${encodeURIComponent(POLAR_WORD.toLowerCase())}`,
      `q=${encodeURIComponent(POLAR_WORD.toLowerCase())}&limit=7&offset=20`,
      'q=%D1%81%D1%87-000123',
      'date_from=2024-03-01&date_to=2024-03-31',
      'date_from=2024-03-10&date_to=2025-01-20',
    ];
    const expectedTotals = [COUNT + 1, COUNT + 1, COUNT / 100, COUNT / 100, 10];
    for (const [i, query] of queries.entries()) {
      const [a, b] = [await list(bulk, query), await list(reference, query)];
      expect(a, query).toEqual(b);
      if (i < expectedTotals.length) expect(a.total, query).toBe(expectedTotals[i]);
    }
    const month = await bulk.t.db.db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('date', '>=', '2024-03-01')
      .where('date', '<=', '2024-03-31')
      .executeTakeFirstOrThrow();
    expect((await list(bulk, queries[5] as string)).total).toBe(Number(month.n));
  });

  it('a create through the API after the seed counts, is found and moves the month (triggers back)', async () => {
    for (const s of [bulk, reference]) {
      const before = (await list(s, 'date_from=2026-03-01&date_to=2026-03-31')).total;
      const res = await s.t.call({ method: 'POST', url: '/api/v1/invoices', headers: ACME, payload: documentBody(ORG1_INN, 'AFTER-SEED-1') });
      expect(res.statusCode).toBe(200);
      expect((await list(s, 'limit=1')).total).toBe(COUNT + 2);
      expect((await list(s, 'q=after-seed')).numbers).toEqual(['AFTER-SEED-1']);
      expect((await list(s, 'date_from=2026-03-01&date_to=2026-03-31')).total).toBe(before + 1);
    }
    expect(await counters(bulk)).toEqual(await counters(reference));
  });
});
