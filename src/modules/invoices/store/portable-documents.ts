/**
 * The documents' Kysely queries that run unchanged on both databases: one document, its links
 * and revisions, the optimistic update, the team's counters read, and the share-link writes.
 * The per-database stores (sqlite.ts, postgres.ts) are built on these.
 */
import { type Insertable } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { TeamListState } from '../../../db/document-counts.js';
import { insertRows, preparedQuery, preparedStatement } from '../../../db/prepared-query.js';
import type { InvoiceItemsTable, InvoiceRevisionRow, InvoiceRow, InvoicesTable, ShareLinkRow, ShareLinksTable } from '../../../db/types.js';
import type { RevisionSummaryRow } from './index.js';

// The two reads of every GET detail, compiled once (src/db/prepared-query.ts).
const invoiceById = preparedQuery<'teamId' | 'publicId', InvoiceRow>((db, p) =>
  db.selectFrom('invoices').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')),
);
const shareLinksOf = preparedQuery<'teamId' | 'publicId', ShareLinkRow>((db, p) =>
  db.selectFrom('share_links').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')).orderBy('sort_order'),
);

export async function findInvoice(db: Executor, teamId: string, publicId: string): Promise<InvoiceRow | undefined> {
  return (await invoiceById(db, { teamId, publicId }))[0];
}

export async function listShareLinks(db: Executor, teamId: string, publicId: string): Promise<ShareLinkRow[]> {
  return shareLinksOf(db, { teamId, publicId });
}

export async function publicIdTaken(db: Executor, publicId: string): Promise<boolean> {
  const row = await db.selectFrom('invoices').select('public_id').where('public_id', '=', publicId).executeTakeFirst();
  return row !== undefined;
}

export async function findDocumentTeam(db: Executor, publicId: string): Promise<string | undefined> {
  const row = await db.selectFrom('invoices').select('team_id').where('public_id', '=', publicId).executeTakeFirst();
  return row?.team_id;
}

// Read by every list request and every write: compiled once (prepared-query.ts).
const listStateOf = preparedQuery<'teamId', { n: number | string | null; v: number | string | null; b: number | string | null }>((db, p) =>
  db
    .selectFrom('team_document_counts')
    .select((eb) => [
      eb.fn.sum<number | string | null>('documents').as('n'),
      eb.fn.sum<number | string | null>('changes').as('v'),
      eb.fn.sum<number | string | null>('stored_bytes').as('b'),
    ])
    .where('team_id', '=', p('teamId')),
);

/**
 * The team's counters (migrations 2026-11-26T1300, 1400, 2026-11-29T0900): its documents (the
 * unfiltered list's exact total), its list version (the sum of `changes`, moved by the
 * documents' triggers) and its stored bytes, summed over the shards, in one read.
 */
export async function listState(db: Executor, teamId: string): Promise<TeamListState> {
  const row = (await listStateOf(db, { teamId }))[0];
  return { documents: Number(row?.n ?? 0), version: Number(row?.v ?? 0), storedBytes: Number(row?.b ?? 0) };
}

/**
 * The optimistic UPDATE, compiled once per set of columns (a write sets the same columns every
 * time; a handful of sets at most, bounded all the same).
 */
const updateStatements = new Map<string, ReturnType<typeof updateStatementFor>>();
const UPDATE_SHAPES_MAX = 16;

function updateStatementFor(columns: string[]) {
  return preparedStatement<string, never>((db, p) =>
    db
      .updateTable('invoices')
      .set(Object.fromEntries(columns.map((c) => [c, p(`set:${c}`)])))
      .where('team_id', '=', p('teamId'))
      .where('public_id', '=', p('publicId'))
      .where('revision', '=', p('expectedRevision')),
  );
}

/** Optimistic update: applies only when the stored revision is still `expectedRevision`. */
export async function updateInvoice(
  db: Executor,
  teamId: string,
  publicId: string,
  expectedRevision: number,
  row: Partial<Insertable<InvoicesTable>>,
): Promise<boolean> {
  const values: Record<string, unknown> = { teamId, publicId, expectedRevision };
  const columns: string[] = [];
  for (const [column, value] of Object.entries(row)) {
    if (value === undefined) continue;
    columns.push(column);
    values[`set:${column}`] = value;
  }
  const key = columns.join(',');
  let statement = updateStatements.get(key);
  if (statement === undefined) {
    if (updateStatements.size >= UPDATE_SHAPES_MAX) updateStatements.clear();
    statement = updateStatementFor(columns);
    updateStatements.set(key, statement);
  }
  const result = await statement(db, values);
  return Number(result.numAffectedRows ?? 0) === 1;
}

const deleteItemsOf = preparedStatement<'teamId' | 'publicId', never>((db, p) =>
  db.deleteFrom('invoice_items').where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')),
);

/** Deletes the document's items (an update that rewrites them). */
export async function deleteItems(db: Executor, teamId: string, publicId: string): Promise<void> {
  await deleteItemsOf(db, { teamId, publicId });
}

/** Items per INSERT: the chunks keep each statement under SQLite's bound-parameter limit. */
export const ITEMS_PER_INSERT = 200;

/** A new document's items: one multi-row INSERT (in chunks of ITEMS_PER_INSERT). */
export async function insertItems(db: Executor, items: Array<Insertable<InvoiceItemsTable>>): Promise<void> {
  for (let i = 0; i < items.length; i += ITEMS_PER_INSERT) {
    await insertRows(db, 'invoice_items', items.slice(i, i + ITEMS_PER_INSERT));
  }
}

export async function insertShareLinks(db: Executor, links: Array<Insertable<ShareLinksTable>>): Promise<void> {
  await insertRows(db, 'share_links', links);
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
  await insertRows(db, 'invoice_revisions', [row]);
}

/** A page of the document's previous revisions, newest first, without their documents. */
export async function listRevisions(
  db: Executor,
  teamId: string,
  publicId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: RevisionSummaryRow[]; total: number }> {
  const scoped = db.selectFrom('invoice_revisions').where('team_id', '=', teamId).where('public_id', '=', publicId);
  const rows = await scoped
    .select(['revision', 'seller_status', 'total', 'editor_mode', 'modified_at', 'modified_by_login', 'superseded_at'])
    .orderBy('revision', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await scoped.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  return { rows, total: Number(count?.n ?? 0) };
}

/** One previous revision with its document. */
export async function findRevision(db: Executor, teamId: string, publicId: string, revision: number): Promise<InvoiceRevisionRow | undefined> {
  return db
    .selectFrom('invoice_revisions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .where('revision', '=', revision)
    .executeTakeFirst();
}

const pruneRevisionsOf = preparedStatement<'teamId' | 'publicId' | 'oldest', never>((db, p) =>
  db
    .deleteFrom('invoice_revisions')
    .where('team_id', '=', p('teamId'))
    .where('public_id', '=', p('publicId'))
    .where('revision', '<=', p('oldest')),
);

/** The retention rule: deletes the document's previous revisions older than the newest `keep`. */
export async function pruneRevisions(db: Executor, teamId: string, publicId: string, newestKept: number, keep: number): Promise<void> {
  await pruneRevisionsOf(db, { teamId, publicId, oldest: newestKept - keep });
}

/** Gives one link a new token; the old token then finds nothing. */
export async function replaceLinkToken(db: Executor, link: Pick<ShareLinkRow, 'team_id' | 'public_id' | 'token'>, token: string): Promise<void> {
  await db
    .updateTable('share_links')
    .set({ token, last_opened_at: null })
    .where('team_id', '=', link.team_id)
    .where('public_id', '=', link.public_id)
    .where('token', '=', link.token)
    .execute();
}

/** Ends every portal link of the document signed so far (`links rotate`). */
export async function advanceLinkEpoch(db: Executor, teamId: string, publicId: string): Promise<void> {
  await db
    .updateTable('invoices')
    .set((eb) => ({ link_epoch: eb('link_epoch', '+', 1) }))
    .where('team_id', '=', teamId)
    .where('public_id', '=', publicId)
    .execute();
}
