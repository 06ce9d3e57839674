/**
 * Seeds a team with many documents for the list and search scenarios, directly through
 * Kysely: batched multi-row inserts, one transaction per chunk, the database's own triggers
 * (the SQLite FTS5 search index) firing as they do for the service.
 *
 * Every seeded document is a copy of one real template document (created through the API),
 * with its own public id, number, date, buyer, creation time and share tokens, so GET, list
 * and search see rows exactly as the service writes them.
 */
import { sql } from 'kysely';
import { dialectOf, type Db } from '../src/db/database.js';
import { flushSearchIndex } from '../src/modules/invoices/store/sqlite-search.js';
import { createStores } from '../src/stores.js';
import { seedPostgresBulk, seedSqliteBulk } from './seed-bulk.js';
import { DAYS, documentRows, FIRST_DAY, isoDay, seedNumber, type SeedOptions, type SeedResult } from './seed-rows.js';

export { POLAR_WORD, readTemplate, seedNumber, type SeedOptions, type SeedResult, type SeedTemplate } from './seed-rows.js';

export async function seedDocuments(db: Db, options: SeedOptions): Promise<SeedResult> {
  const { count } = options;
  const started = Date.now();
  const file = options.mode === 'as-service' ? null : await sqliteFileOf(db);
  if (file !== null) seedSqliteBulk(file, options);
  else if (options.mode === 'as-service' || dialectOf(db) !== 'postgres' || !(await seedPostgresBulk(db, options))) await seedThroughTriggers(db, options);
  const rareQuery = count >= 100 ? seedNumber(Math.floor(count / 2)).slice(0, -1).toLowerCase() : seedNumber(0).toLowerCase();
  const rareMatches = count >= 100 ? 10 : 1;
  return {
    count,
    ms: Date.now() - started,
    rareQuery,
    rareMatches,
    dateRange: { from: isoDay(FIRST_DAY), to: isoDay(FIRST_DAY + Math.floor(((count - 1) * DAYS) / Math.max(count, 1)) * 86_400_000) },
  };
}

/** The file of a SQLite database (null for PostgreSQL or an in-memory database). */
async function sqliteFileOf(db: Db): Promise<string | null> {
  if (dialectOf(db) !== 'sqlite') return null;
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(db);
  const file = rows.find((r) => r.name === 'main')?.file ?? '';
  return file === '' ? null : file;
}

/**
 * The reference path: the rows inserted with the database's triggers firing for each row, as
 * the service's creates do (the FTS5 index, the list version, the month counters) and
 * `addDocuments` per transaction. Slow (~2,500 documents/s at best); the bulk paths must
 * leave the database exactly as this one does (test/bench/seed.test.ts).
 */
async function seedThroughTriggers(db: Db, options: SeedOptions): Promise<void> {
  const { teamId, template, count } = options;
  const chunk = options.chunk ?? 5000;
  const baseDoc = JSON.parse(template.row.document) as Record<string, unknown>;
  for (let from = 0; from < count; from += chunk) {
    const to = Math.min(count, from + chunk);
    const rows = documentRows(template, baseDoc, from, to, count);
    const invoices = rows.map((r) => r.invoice);
    const items = rows.flatMap((r) => r.items);
    const links = rows.flatMap((r) => r.links);
    await db.transaction().execute(async (trx) => {
      // Statements stay well under the bound-parameter limits (SQLite 32766, PostgreSQL 65535).
      for (let i = 0; i < invoices.length; i += 500) await trx.insertInto('invoices').values(invoices.slice(i, i + 500)).execute();
      await createStores({ db, dialect: dialectOf(db) }).invoices.addDocuments(trx, teamId, invoices.length);
      for (let i = 0; i < items.length; i += 1500) await trx.insertInto('invoice_items').values(items.slice(i, i + 1500)).execute();
      for (let i = 0; i < links.length; i += 2000) await trx.insertInto('share_links').values(links.slice(i, i + 2000)).execute();
      for (let i = 0; i < rows.length; i += 2000) {
        await trx
          .insertInto('events')
          .values(rows.slice(i, i + 2000).map((r) => r.event))
          .execute();
      }
      // SQLite: the chunk's documents into the trigram index, as the service's group commit does.
      if (dialectOf(trx) === 'sqlite') await flushSearchIndex(trx);
    });
    options.onProgress?.(to, count);
  }
}

/** A one-line progress bar on stderr, redrawn in place on a terminal, every 10% otherwise. */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): (done: number, total: number) => void {
  const started = Date.now();
  let lastDecile = -1;
  return (done, total) => {
    const fraction = total === 0 ? 1 : done / total;
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 ? (total - done) / rate : 0;
    const width = 30;
    const filled = Math.round(fraction * width);
    const line =
      `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
      `${done}/${total} ${Math.round(rate)}/s ETA ${eta.toFixed(0)}s`;
    if (stream.isTTY) {
      stream.write(`\r${line}`);
      if (done >= total) stream.write('\n');
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile !== lastDecile || done >= total) {
      lastDecile = decile;
      stream.write(`${line}\n`);
    }
  };
}
