/**
 * The invoices store on PostgreSQL (the interface and its reasons: index.ts). A plain create
 * and an update that sends nothing are one statement each, outside any transaction
 * (postgres-statements.ts); every other write is a transaction, run again after a deadlock or
 * serialization failure. `q` is a plain LIKE served by the pg_trgm GIN index: the planner
 * chooses from its statistics, so the list's filters are plain predicates.
 */
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle, Executor } from '../../../db/database.js';
import { preparedQuery } from '../../../db/prepared-query.js';
import { retryPgConflicts } from '../../../db/pg-retry.js';
import type { Database, InvoiceRow, ShareLinkRow } from '../../../db/types.js';
import { edoJobsExistSql } from '../../edo/index.js';
import type { InvoiceStore, PreparedNewDocument } from './index.js';
import * as documents from './portable-documents.js';
import * as keys from './portable-keys.js';
import { containsText, listInvoices, type ListPlanner } from './portable-list.js';
import { addDocuments, insertNewDocument, rewriteItems, updateDocument, useDocumentEventsInsert } from './postgres-statements.js';
import type { PostgresEventStore } from '../../events/index.js';

/**
 * The document and its share links in one statement (one round trip, one connection, where
 * the two reads at once take two): the links come as a JSON array in `sort_order`. Every
 * share_links column is text or integer, so JSON gives back exactly the values `select *` does
 * (a timestamp or numeric column added there would need converting here).
 */
function documentWithLinks(db: Kysely<Database>, p: (name: 'teamId' | 'publicId') => any) {
  return db
    .selectFrom('invoices')
    .selectAll('invoices')
    .select(
      sql<ShareLinkRow[]>`coalesce((select json_agg(l order by l.sort_order) from share_links l where l.team_id = invoices.team_id and l.public_id = invoices.public_id), '[]'::json)`.as(
        'share_links_json',
      ),
    )
    .where('team_id', '=', p('teamId'))
    .where('public_id', '=', p('publicId'));
}

const invoiceWithLinks = preparedQuery<'teamId' | 'publicId', InvoiceRow & { share_links_json: ShareLinkRow[] }>(documentWithLinks);

/**
 * Before an update: the document, its share links and whether it has any EDO job (the edo
 * module's condition), in one statement. An update that sends nothing and has no EDO state to
 * keep is then written in one statement without reading the links or the EDO state again.
 */
const invoiceForUpdate = preparedQuery<'teamId' | 'publicId', InvoiceRow & { share_links_json: ShareLinkRow[]; has_edo_jobs: boolean }>((db, p) =>
  documentWithLinks(db, p).select(edoJobsExistSql(sql.ref('invoices.team_id'), sql.ref('invoices.public_id')).as('has_edo_jobs')),
);

/**
 * PostgreSQL: the claim in one statement that commits alone (one round trip where a transaction
 * of a sweep and an insert took four): the team's other expired keys swept, and the key inserted
 * `pending`, or an expired record of it replaced. Nothing back when the key has a live record
 * (another request's: its answer, or its claim). A claim being inserted by a concurrent
 * transaction is waited for, then seen.
 */
const claimStatement = preparedQuery<'teamId' | 'key' | 'hash' | 'now' | 'expiresAt', { created_at: string }>((db, p) =>
  db
    .with('swept', (w) =>
      w.deleteFrom('idempotency_keys').where('team_id', '=', p('teamId')).where('expires_at', '<', p('now')).where('idem_key', '<>', p('key')),
    )
    .insertInto('idempotency_keys')
    .values({
      team_id: p('teamId'),
      idem_key: p('key'),
      request_hash: p('hash'),
      state: 'pending',
      response_status: null,
      response_body: null,
      created_at: p('now'),
      expires_at: p('expiresAt'),
    })
    .onConflict((oc) =>
      oc
        .columns(['team_id', 'idem_key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          state: eb.ref('excluded.state'),
          response_status: null,
          response_body: null,
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('idempotency_keys.expires_at', '<', p('now')),
    )
    .returning('created_at'),
);

/** `claimStatement`: true when the key is this request's now. */
async function claimKey(db: Executor, teamId: string, key: string, hash: string, claimedAt: string, expiresAt: string): Promise<boolean> {
  return (await claimStatement(db, { teamId, key, hash, now: claimedAt, expiresAt })).length > 0;
}

/** The list's filters as plain predicates: PostgreSQL's planner picks the plan from its statistics. */
const postgresListPlanner: ListPlanner = {
  searchPlan: async () => 'index',
  collectsText: () => false,
  teamScope: (teamId) => sql<boolean>`invoices.team_id = ${teamId}`,
  modifiedSince: (_teamId, since) => sql<boolean>`invoices.last_modified_at >= ${since}`,
  matches: (q) => containsText(q),
};

/** `events`: the events module's PostgreSQL store, whose insert the one-statement writes compose. */
export function createPostgresInvoiceStore(handle: Pick<DatabaseHandle, 'db'>, events: Pick<PostgresEventStore, 'documentEventsInsert'>): InvoiceStore {
  const { db } = handle;
  useDocumentEventsInsert(events.documentEventsInsert);
  return {
    db,
    transaction: (work) => retryPgConflicts(() => db.transaction().execute(work)),
    findInvoice: documents.findInvoice,
    listShareLinks: documents.listShareLinks,
    async findWithLinks(teamId, publicId) {
      const found = (await invoiceWithLinks(db, { teamId, publicId }))[0];
      if (!found) return { row: undefined, links: [] };
      const { share_links_json: links, ...row } = found;
      return { row, links };
    },
    async findForUpdate(teamId, publicId) {
      const found = (await invoiceForUpdate(db, { teamId, publicId }))[0];
      if (!found) return { row: undefined, alone: null };
      const { share_links_json: links, has_edo_jobs: hasEdoJobs, ...row } = found;
      return { row, alone: { links, hasEdoJobs } };
    },
    publicIdTaken: (publicId) => documents.publicIdTaken(db, publicId),
    findDocumentTeam: (publicId) => documents.findDocumentTeam(db, publicId),
    listState: (teamId) => documents.listState(db, teamId),
    listInvoices: (teamId, filters, known) => listInvoices(db, postgresListPlanner, teamId, filters, known),
    listRevisions: (teamId, publicId, page) => documents.listRevisions(db, teamId, publicId, page),
    findRevision: (teamId, publicId, revision) => documents.findRevision(db, teamId, publicId, revision),
    addDocuments,
    prepareNewDocument: (rows): PreparedNewDocument => ({ rows }),
    insertNewDocument: (trx: Executor, prepared) => insertNewDocument(trx, prepared.rows),
    insertNewDocumentAlone: (build) => insertNewDocument(db, build()),
    updateInvoice: documents.updateInvoice,
    insertRevision: documents.insertRevision,
    pruneRevisions: documents.pruneRevisions,
    rewriteItems,
    insertShareLinks: documents.insertShareLinks,
    deleteShareLinks: documents.deleteShareLinks,
    updateShareLinkOrder: documents.updateShareLinkOrder,
    updateDocumentAlone: (u) => updateDocument(db, u),
    keys: {
      claimAlone: (teamId, key, hash, claimedAt, expiresAt) => claimKey(db, teamId, key, hash, claimedAt, expiresAt),
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
