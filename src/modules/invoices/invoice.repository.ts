/** SQL of the documents module. Every function takes the executor first and the team. */
import type { Insertable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { containsText } from '../../db/text-search.js';
import type {
  InvoiceItemsTable,
  InvoiceRevisionRow,
  InvoiceRow,
  InvoicesTable,
  ShareLinkRow,
  ShareLinksTable,
} from '../../db/types.js';

export async function findInvoice(db: Executor, teamId: string, publicId: string): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .executeTakeFirst();
}

/** Whether any team holds the id (client-supplied ids are unique across teams). */
export async function publicIdTaken(db: Executor, publicId: string): Promise<boolean> {
  const row = await db.selectFrom('invoices').select('public_id').where('public_id', '=', publicId).executeTakeFirst();
  return row !== undefined;
}

export async function insertInvoice(db: Executor, row: Insertable<InvoicesTable>): Promise<void> {
  await db.insertInto('invoices').values(row).execute();
}

/** Optimistic update: applies only when the stored revision is still `expectedRevision`. */
export async function updateInvoice(
  db: Executor,
  teamId: string,
  publicId: string,
  expectedRevision: number,
  row: Partial<Insertable<InvoicesTable>>,
): Promise<boolean> {
  const result = await db
    .updateTable('invoices')
    .set(row)
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('revision', '=', expectedRevision)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function replaceItems(
  db: Executor,
  teamId: string,
  publicId: string,
  items: Array<Insertable<InvoiceItemsTable>>,
): Promise<void> {
  await db.deleteFrom('invoice_items').where('team_id', '=', teamId).where('public_id', '=', publicId).execute();
  // Chunks keep each statement under SQLite's bound-parameter limit.
  for (let i = 0; i < items.length; i += 200) {
    await db.insertInto('invoice_items').values(items.slice(i, i + 200)).execute();
  }
}

export async function listShareLinks(db: Executor, teamId: string, publicId: string): Promise<ShareLinkRow[]> {
  return db
    .selectFrom('share_links')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .orderBy('sort_order')
    .execute();
}

export async function insertShareLinks(db: Executor, links: Array<Insertable<ShareLinksTable>>): Promise<void> {
  if (links.length > 0) await db.insertInto('share_links').values(links).execute();
}

export async function deleteShareLinks(db: Executor, teamId: string, publicId: string, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  await db
    .deleteFrom('share_links')
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('token', 'in', tokens)
    .execute();
}

export async function updateShareLinkOrder(
  db: Executor,
  teamId: string,
  token: string,
  values: { sort_order: number; name: string | null; position: string | null },
): Promise<void> {
  await db.updateTable('share_links').set(values).where('team_id', '=', teamId).where('token', '=', token).execute();
}

export async function insertRevision(db: Executor, row: InvoiceRevisionRow): Promise<void> {
  await db.insertInto('invoice_revisions').values(row).execute();
}

export async function listRevisions(db: Executor, teamId: string, publicId: string): Promise<InvoiceRevisionRow[]> {
  return db
    .selectFrom('invoice_revisions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .orderBy('revision', 'desc')
    .execute();
}

export interface ListFilters {
  q?: string | undefined;
  dateFrom?: string | undefined;
  dateTo?: string | undefined;
  updatedSince?: string | undefined;
  limit: number;
  offset: number;
}

export type InvoiceListRow = Pick<
  InvoiceRow,
  | 'public_id'
  | 'number'
  | 'date'
  | 'currency'
  | 'direction'
  | 'seller_name'
  | 'seller_inn'
  | 'buyer_name'
  | 'buyer_inn'
  | 'subtotal'
  | 'vat_total'
  | 'total'
  | 'seller_status'
  | 'buyer_status'
  | 'service_status'
  | 'service_status_reason'
  | 'editor_mode'
  | 'created_at'
  | 'last_modified_at'
> & { buyer_token: string | null };

function filtered(db: Executor, teamId: string, f: ListFilters) {
  let query = db.selectFrom('invoices').where('invoices.team_id', '=', teamId);
  if (f.dateFrom) query = query.where('invoices.date', '>=', f.dateFrom);
  if (f.dateTo) query = query.where('invoices.date', '<=', f.dateTo);
  if (f.updatedSince) query = query.where('invoices.last_modified_at', '>=', f.updatedSince);
  if (f.q) query = query.where(containsText('invoices.search_text', f.q));
  return query;
}

/** One page in the list order (date desc, creation desc) and the count of all matches. */
export async function listInvoices(
  db: Executor,
  teamId: string,
  f: ListFilters,
): Promise<{ rows: InvoiceListRow[]; total: number }> {
  const rows = await filtered(db, teamId, f)
    .select([
      'invoices.public_id',
      'invoices.number',
      'invoices.date',
      'invoices.currency',
      'invoices.direction',
      'invoices.seller_name',
      'invoices.seller_inn',
      'invoices.buyer_name',
      'invoices.buyer_inn',
      'invoices.subtotal',
      'invoices.vat_total',
      'invoices.total',
      'invoices.seller_status',
      'invoices.buyer_status',
      'invoices.service_status',
      'invoices.service_status_reason',
      'invoices.editor_mode',
      'invoices.created_at',
      'invoices.last_modified_at',
    ])
    .select((eb) =>
      eb
        .selectFrom('share_links')
        .select('share_links.token')
        .whereRef('share_links.team_id', '=', 'invoices.team_id')
        .whereRef('share_links.public_id', '=', 'invoices.public_id')
        .where('share_links.kind', '=', 'buyer')
        .limit(1)
        .as('buyer_token'),
    )
    .orderBy('invoices.date', 'desc')
    .orderBy('invoices.created_at', 'desc')
    .orderBy('invoices.public_id', 'desc')
    .limit(f.limit)
    .offset(f.offset)
    .execute();
  const count = await filtered(db, teamId, f)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}
