/**
 * Seeds a team with many documents for the list and search scenarios, directly through
 * Kysely: batched multi-row inserts, one transaction per chunk, the database's own triggers
 * firing as they do for the service, and the SQLite FTS5 search index filled per chunk
 * (`flushSearchIndex`) as the service's group commit fills it per batch.
 *
 * Every seeded document is a copy of one real template document (created through the API),
 * with its own public id, number, date, buyer, creation time and share tokens, so GET, list
 * and search see rows exactly as the service writes them.
 */
import type { Insertable } from 'kysely';
import type { Db } from '../src/db/database.js';
import { addDocuments } from '../src/db/document-counts.js';
import { flushSearchIndex, normalizeSearchText } from '../src/db/text-search.js';
import type { InvoiceItemsTable, InvoiceRow, InvoicesTable, ShareLinkRow, ShareLinksTable } from '../src/db/types.js';
import { randomToken } from '../src/shared/tokens.js';

export interface SeedTemplate {
  row: InvoiceRow;
  items: Array<Insertable<InvoiceItemsTable>>;
  links: ShareLinkRow[];
}

export interface SeedOptions {
  teamId: string;
  template: SeedTemplate;
  count: number;
  /** Documents per transaction. */
  chunk?: number;
  /** Called after every committed chunk. */
  onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
  count: number;
  ms: number;
  /** The q of the "matches few" scenario and how many seeded documents it matches. */
  rareQuery: string;
  rareMatches: number;
  /** The first and last seeded date. */
  dateRange: { from: string; to: string };
}

/** Reads a stored document with its items and links, to be cloned. */
export async function readTemplate(db: Db, teamId: string, publicId: string): Promise<SeedTemplate> {
  const row = await db
    .selectFrom('invoices')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .executeTakeFirstOrThrow();
  const items = await db.selectFrom('invoice_items').selectAll().where('team_id', '=', teamId).where('public_id', '=', publicId).execute();
  const links = await db.selectFrom('share_links').selectAll().where('team_id', '=', teamId).where('public_id', '=', publicId).execute();
  return { row, items, links };
}

const FORMS = ['ООО', 'АО', 'ИП', 'ПАО', 'ЗАО'];
const WORDS = [
  'Альфа', 'Вектор', 'Гранит', 'Дельта', 'Заря', 'Исток', 'Кварц', 'Лотос', 'Меридиан', 'Нева',
  'Орион', 'Полюс', 'Радуга', 'Сигма', 'Техно', 'Урал', 'Феникс', 'Хронос', 'Цитадель', 'Экспресс',
  'Юпитер', 'Янтарь', 'Байкал', 'Волга', 'Север', 'Восток', 'Запад', 'Юг', 'Атлант', 'Спектр',
];
/** The buyer word of every hundredth seeded document (a search matching 1 %). */
export const POLAR_WORD = 'Полярная';
/** Dates spread evenly over four years, newest last. */
const FIRST_DAY = Date.UTC(2023, 0, 1);
const DAYS = 4 * 365;

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A deterministic 10-digit INN-shaped number (checksums do not matter for stored rows). */
function innOf(i: number): string {
  return String(7700000000 + ((i * 7919) % 99999999)).padStart(10, '0');
}

/** The number of the i-th seeded document: "СЧ-0012345"; its prefix without the last digit matches ten. */
export function seedNumber(i: number): string {
  return `СЧ-${String(i).padStart(7, '0')}`;
}

export async function seedDocuments(db: Db, options: SeedOptions): Promise<SeedResult> {
  const { teamId, template, count } = options;
  const chunk = options.chunk ?? 5000;
  const started = Date.now();
  const baseDoc = JSON.parse(template.row.document) as Record<string, unknown>;
  for (let from = 0; from < count; from += chunk) {
    const to = Math.min(count, from + chunk);
    const invoices: Array<Insertable<InvoicesTable>> = [];
    const items: Array<Insertable<InvoiceItemsTable>> = [];
    const links: Array<Insertable<ShareLinksTable>> = [];
    for (let i = from; i < to; i++) {
      const publicId = randomToken(16);
      const dayMs = FIRST_DAY + Math.floor((i * DAYS) / Math.max(count, 1)) * 86_400_000;
      const date = isoDay(dayMs);
      // Creation times fall inside the document's day, so both sort keys vary.
      const createdAt = new Date(dayMs + 8 * 3_600_000 + (i % 36_000) * 1000).toISOString();
      const number = seedNumber(i);
      // Every hundredth buyer is «Полярная …»: the `q` of the "matches 1 %" scenario.
      const firstWord = i % 100 === 0 ? POLAR_WORD : WORDS[i % WORDS.length];
      const buyerName = `${FORMS[i % FORMS.length]} «${firstWord} ${WORDS[Math.floor(i / WORDS.length) % WORDS.length]}»`;
      const buyerInn = innOf(i);
      const doc = { ...baseDoc, public_id: publicId, number, date, buyer: { ...(baseDoc.buyer as object), name: buyerName, inn: buyerInn } };
      invoices.push({
        ...template.row,
        public_id: publicId,
        package_public_id: randomToken(16),
        number,
        date,
        buyer_name: buyerName,
        buyer_inn: buyerInn,
        search_text: normalizeSearchText(number, template.row.seller_name, template.row.seller_inn, buyerName, buyerInn),
        document: JSON.stringify(doc),
        created_at: createdAt,
        last_modified_at: createdAt,
        api_created_at: createdAt,
      });
      for (const item of template.items) items.push({ ...item, public_id: publicId });
      for (const link of template.links) links.push({ ...link, public_id: publicId, token: randomToken(16), created_at: createdAt });
    }
    await db.transaction().execute(async (trx) => {
      // Statements stay well under the bound-parameter limits (SQLite 32766, PostgreSQL 65535).
      for (let i = 0; i < invoices.length; i += 500) await trx.insertInto('invoices').values(invoices.slice(i, i + 500)).execute();
      // The unfiltered list's total comes from the team's document counter (as the service keeps it).
      await addDocuments(trx, teamId, invoices.length);
      for (let i = 0; i < items.length; i += 1500) await trx.insertInto('invoice_items').values(items.slice(i, i + 1500)).execute();
      for (let i = 0; i < links.length; i += 2000) await trx.insertInto('share_links').values(links.slice(i, i + 2000)).execute();
      // SQLite: the chunk's documents into the trigram index, as the service's group commit does.
      await flushSearchIndex(trx);
    });
    options.onProgress?.(to, count);
  }
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
