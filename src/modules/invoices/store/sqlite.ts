/**
 * The invoices store on SQLite (the interface and its reasons: index.ts). Every write is a
 * write of the group commit (src/db/group-commit.ts: the writes arriving together share one
 * transaction and one fsync; a create 2.6× in-process, docs/performance.md), where the
 * statements compiled once run straight on better-sqlite3 (src/db/direct-execution.ts: a
 * create −14 % CPU). A new document's statements are bound before its transaction, so the
 * batch, which holds the write lock, only runs them. Searches and deep pages run on the
 * reading threads (src/db/read-threads.ts), off the event loop.
 */
import { sql, type CompiledQuery, type Insertable } from 'kysely';
import type { DatabaseHandle, Executor } from '../../../db/database.js';
import { executeCompiled } from '../../../db/direct-execution.js';
import { groupCommitFor } from '../../../db/group-commit.js';
import { insertRowsQuery, preparedQuery, preparedStatement } from '../../../db/prepared-query.js';
import type { InvoiceItemsTable } from '../../../db/types.js';
import { documentEventQuery } from '../../events/index.js';
import type { InvoiceStore, ListFilters, NewDocumentRows, PreparedNewDocument } from './index.js';
import * as documents from './portable-documents.js';
import * as keys from './portable-keys.js';
import { listInvoices } from './portable-list.js';
import { flushSearchIndex, sqliteListPlanner } from './sqlite-search.js';

/** Pages at most this deep are read on the event loop (the list index walked to 1,000 takes well under a millisecond). */
const HEAVY_OFFSET = 1_000;

/** SQLite has one writer at a time: a team's count is one row, shard 0. Written with every create: compiled once. */
const addDocumentsStatement = preparedStatement<'teamId' | 'n', never>((db, p) =>
  db
    .insertInto('team_document_counts')
    .values({ team_id: p('teamId'), shard: 0, documents: p('n') })
    .onConflict((oc) => oc.columns(['team_id', 'shard']).doUpdateSet({ documents: sql<number>`team_document_counts.documents + ${p('n')}` })),
);

/** A new document's statements, bound: the invoice, its team's count, items, links, events. */
interface BoundNewDocument extends PreparedNewDocument {
  statements: CompiledQuery[];
}

/**
 * A new document's statements, bound but not run, in the order they are written. Its items
 * go in chunks of ITEMS_PER_INSERT (under SQLite's bound-parameter limit).
 */
function newDocumentStatements(db: Executor, doc: NewDocumentRows): CompiledQuery[] {
  const statements: CompiledQuery[] = [];
  const add = (query: CompiledQuery | null) => {
    if (query !== null) statements.push(query);
  };
  add(insertRowsQuery(db, 'invoices', [doc.row]));
  statements.push(addDocumentsStatement.bind(db, { teamId: doc.row.team_id, n: 1 }));
  const per = documents.ITEMS_PER_INSERT;
  for (let i = 0; i < doc.items.length; i += per) add(insertRowsQuery(db, 'invoice_items', doc.items.slice(i, i + per)));
  add(insertRowsQuery(db, 'share_links', doc.links));
  for (const event of doc.events) statements.push(documentEventQuery(db, event));
  return statements;
}

const itemsOf = preparedQuery<'teamId' | 'publicId', InvoiceItemsTable>((db, p) =>
  db.selectFrom('invoice_items').selectAll().where('team_id', '=', p('teamId')).where('public_id', '=', p('publicId')).orderBy('line_no'),
);

function sameRows(stored: readonly object[], wanted: readonly object[]): boolean {
  if (stored.length !== wanted.length) return false;
  for (let i = 0; i < stored.length; i++) {
    const a = stored[i] as Record<string, unknown>;
    const b = wanted[i] as Record<string, unknown>;
    const keys = Object.keys(b);
    if (Object.keys(a).length !== keys.length) return false;
    for (const key of keys) if (a[key] !== b[key]) return false;
  }
  return true;
}

/**
 * An update's items, rewritten (DELETE and INSERT) only when they differ from the stored rows
 * (every column, in line order): unchanged items rewrote two b-tree pages per document for
 * nothing, and a read of the rows costs less (a PUT's WAL 138.6 → 75.7 pages per 50 PUTs).
 */
async function rewriteItems(trx: Executor, teamId: string, publicId: string, items: Array<Insertable<InvoiceItemsTable>>): Promise<void> {
  if (sameRows(await itemsOf(trx, { teamId, publicId }), items)) return;
  await documents.deleteItems(trx, teamId, publicId);
  await documents.insertItems(trx, items);
}

export function createSqliteInvoiceStore(handle: Pick<DatabaseHandle, 'db' | 'readThreads'>): InvoiceStore {
  const { db } = handle;
  const commits = groupCommitFor(db);
  // The batch's new documents into the search index at once, before its COMMIT.
  commits.atBatchEnd(flushSearchIndex);
  const threads = handle.readThreads ?? null;
  /** A search or a deep page may walk many rows: on the reading threads, within the team's share of them. */
  const heavy = (filters: ListFilters) => threads !== null && (filters.q !== undefined || filters.offset > HEAVY_OFFSET);
  return {
    db,
    transaction: (work) => commits.run(work),
    findInvoice: documents.findInvoice,
    listShareLinks: documents.listShareLinks,
    // Both reads at once: no round trips to save on SQLite.
    async findWithLinks(teamId, publicId) {
      const [row, links] = await Promise.all([documents.findInvoice(db, teamId, publicId), documents.listShareLinks(db, teamId, publicId)]);
      return { row, links };
    },
    async findForUpdate(teamId, publicId) {
      return { row: await documents.findInvoice(db, teamId, publicId), alone: null };
    },
    publicIdTaken: (publicId) => documents.publicIdTaken(db, publicId),
    findDocumentTeam: (publicId) => documents.findDocumentTeam(db, publicId),
    listState: (teamId) => documents.listState(db, teamId),
    listInvoices(teamId, filters, known) {
      if (threads !== null && heavy(filters)) return threads.forTeam(teamId, (reader) => listInvoices(reader, sqliteListPlanner, teamId, filters, known));
      return listInvoices(db, sqliteListPlanner, teamId, filters, known);
    },
    listRevisions: (teamId, publicId, page) => documents.listRevisions(db, teamId, publicId, page),
    findRevision: (teamId, publicId, revision) => documents.findRevision(db, teamId, publicId, revision),
    async addDocuments(trx, teamId, n) {
      if (n > 0) await addDocumentsStatement(trx, { teamId, n });
    },
    prepareNewDocument: (rows): BoundNewDocument => ({ rows, statements: newDocumentStatements(db, rows) }),
    async insertNewDocument(trx, prepared) {
      for (const statement of (prepared as BoundNewDocument).statements) await executeCompiled(trx, statement);
    },
    insertNewDocumentAlone: () => null,
    updateInvoice: documents.updateInvoice,
    insertRevision: documents.insertRevision,
    pruneRevisions: documents.pruneRevisions,
    rewriteItems,
    insertShareLinks: documents.insertShareLinks,
    deleteShareLinks: documents.deleteShareLinks,
    updateShareLinkOrder: documents.updateShareLinkOrder,
    updateDocumentAlone() {
      throw new Error('SQLite writes updates in the group commit only (findForUpdate answers no `alone`)');
    },
    keys: {
      // The claim rides in the document's own group-commit write (one COMMIT per keyed create, not two).
      claimAlone: async () => null,
      findKey: keys.findKey,
      deleteExpiredKeys: keys.deleteExpiredKeys,
      insertClaim: keys.insertClaim,
      takeOverLapsedClaim: keys.takeOverLapsedClaim,
      recordCommitted: keys.recordCommitted,
      releaseClaim: keys.releaseClaim,
      recordFinal: keys.recordFinal,
    },
  };
}
