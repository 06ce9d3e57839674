/**
 * The rows the seed writes: copies of one real template document (created through the API), each
 * with its own public id, number, date, buyer, creation time and share tokens.
 */
import crypto from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Db } from '../src/db/database.js';
import { normalizeSearchText } from '../src/modules/invoices/rules/search-text.js';
import type { InvoiceItemsTable, InvoiceRow, InvoicesTable, ShareLinkRow, ShareLinksTable } from '../src/db/types.js';

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
  /**
   * `bulk` (default): SQLite and PostgreSQL each through their fast path, the row triggers'
   * effect written once per transaction; `as-service`: row by row through Kysely with every
   * trigger firing, the reference the bulk paths are tested against.
   */
  mode?: 'bulk' | 'as-service';
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
export const FIRST_DAY = Date.UTC(2023, 0, 1);
export const DAYS = 4 * 365;

export function isoDay(ms: number): string {
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

/** One seeded document: its invoice row, items, share links and `invoice.created` event. */
interface SeedRows {
  invoice: Insertable<InvoicesTable>;
  items: Array<Insertable<InvoiceItemsTable>>;
  links: Array<Insertable<ShareLinksTable>>;
  event: { team_id: string; type: string; public_id: string; revision: number; data: string; created_at: string };
}

/**
 * The rows of seeded documents `from`…`to - 1` of `count`, as the service writes a create: the
 * invoice (its own public id, number, date, buyer, search text, creation instants), the
 * template's items, share links with their own tokens, and the `invoice.created` event.
 */
export function documentRows(template: SeedTemplate, baseDoc: Record<string, unknown>, from: number, to: number, count: number): SeedRows[] {
  // Tokens drawn in one go (16 random bytes each, base64url: what randomToken(16) returns).
  const perDoc = 2 + template.links.length;
  const random = crypto.randomBytes(16 * perDoc * (to - from));
  let at = 0;
  const token = (): string => random.toString('base64url', at, (at += 16));
  const rows: SeedRows[] = [];
  for (let i = from; i < to; i++) {
    const publicId = token();
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
    const invoice: Insertable<InvoicesTable> = {
      ...template.row,
      public_id: publicId,
      package_public_id: token(),
      number,
      date,
      buyer_name: buyerName,
      buyer_inn: buyerInn,
      search_text: normalizeSearchText(number, template.row.seller_name, template.row.seller_inn, buyerName, buyerInn),
      document: JSON.stringify(doc),
      created_at: createdAt,
      last_modified_at: createdAt,
      api_created_at: createdAt,
      changed_at: createdAt,
    };
    rows.push({
      invoice,
      items: template.items.map((item) => ({ ...item, public_id: publicId })),
      links: template.links.map((link) => ({ ...link, public_id: publicId, token: token(), created_at: createdAt })),
      event: {
        team_id: template.row.team_id,
        type: 'invoice.created',
        public_id: publicId,
        revision: 1,
        data: JSON.stringify({ public_id: publicId, revision: 1, seller_status: template.row.seller_status, number }),
        created_at: createdAt,
      },
    });
  }
  return rows;
}

