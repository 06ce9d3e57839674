/**
 * The database is chosen once (CONVENTIONS rule 10): no code line of `src/` outside `src/db/`,
 * the per-database store files and the composition roots names a database (dialect-lines.ts
 * says what counts). The modules being moved behind their stores (invoices, notifications, edo)
 * keep the exact lines listed below until they are; the list only shrinks: a line added
 * anywhere, or one of these moved, fails, and so does an entry whose line is gone (delete it).
 */
import { describe, expect, it } from 'vitest';
import { againstAllowList, showFindings } from './source-files.js';
import { checkedFile, dialectLines, linesNamingADatabase } from './dialect-lines.js';

/** The events door's statement builders that only the invoices module's one-statement writes still use. */
const ONLY_FOR_INVOICES: Record<string, string[]> = {
  'src/modules/events/index.ts': ["export { pgDocumentEventsInsert, pgDocumentEventsInsertUnnest } from './store/postgres.js';"],
};

/** The lines of the modules not yet behind their stores, exactly as they read. */
const NOT_YET_BEHIND_A_STORE: Record<string, string[]> = {
  'src/modules/edo/edo.repository.ts': [
    "import { pgRowInsert, type PgStatementPart } from '../../db/pg-parts.js';",
    "export function pgJobInsertPart(row: EdoJobsTable): PgStatementPart {",
    "ctes: (param, condition) => `\"edo_job\" as (${pgRowInsert('edo_jobs', JOB_COLUMNS, param, condition)})`,",
  ],
  'src/modules/edo/edo.service.ts': [
    "pgSendParts(send: NewSend): PgStatementPart[] {",
    "return [outbox.pgOutboxInsertPart('edo_outbox', [send.outboxRow]), repo.pgJobInsertPart(send.job)];",
    "return outbox.claimDue(this.db, this.deps.database.dialect, claim);",
  ],
  'src/modules/invoices/idempotency.ts': [
    "import { dialectOf, type Db, type Executor } from '../../db/database.js';",
    "this.claimsInWrite = dialectOf(db) === 'sqlite';",
  ],
  'src/modules/invoices/invoice.effects.ts': [
    "import type { NewDocumentEffectsPg } from './invoice.repository.js';",
    "effects: NewDocumentEffectsPg;",
    "pgCreateParts(auth: Extract<AuthContext, { mode: 'live' }>, early: EarlyEffects): PgCreateParts | null {",
    "const mail = this.deps.notifications.pgWriteParts(early.notifications, auth.tariff.emails_per_day);",
    "if (early.edo?.send) parts.push(...this.deps.edo.pgSendParts(early.edo.send));",
  ],
  'src/modules/invoices/invoice.reader.ts': [
    "import { dialectOf, type Db } from '../../db/database.js';",
    "private readonly onPostgres: boolean;",
    "this.onPostgres = dialectOf(deps.db) === 'postgres';",
    "const { row, links } = this.onPostgres",
    "? await repo.findInvoiceWithLinksPg(this.deps.db, auth.teamId, publicId)",
  ],
  'src/modules/invoices/invoice.repository.ts': [
    "import { addDocuments, addDocumentsQuery, pgAddDocumentsQuery, pgAddOneDocumentSql, teamDocumentCount, teamListState, teamMonthDocuments, type TeamListState } from '../../db/document-counts.js';",
    "import { documentEventQuery, pgDocumentEventsInsert, pgDocumentEventsInsertUnnest, type DocumentEventInput } from '../events/index.js';",
    "import { pgUnnestInsert, type PgGatePart, type PgStatementPart } from '../../db/pg-parts.js';",
    "function documentWithLinksPg(db: Kysely<Database>, p: (name: 'teamId' | 'publicId') => any) {",
    "const invoiceWithLinksPg = preparedQuery<'teamId' | 'publicId', InvoiceRow & { share_links_json: ShareLinkRow[] }>(documentWithLinksPg);",
    "export async function findInvoiceWithLinksPg(",
    "const found = (await invoiceWithLinksPg(db, { teamId, publicId }))[0];",
    "const invoiceForUpdatePg = preparedQuery<'teamId' | 'publicId', InvoiceRow & { share_links_json: ShareLinkRow[]; has_edo_jobs: boolean }>((db, p) =>",
    "documentWithLinksPg(db, p).select(edoJobsExistSql(sql.ref('invoices.team_id'), sql.ref('invoices.public_id')).as('has_edo_jobs')),",
    "export async function findInvoiceForUpdatePg(",
    "const found = (await invoiceForUpdatePg(db, { teamId, publicId }))[0];",
    "export async function insertNewDocumentPg(db: Executor, doc: NewDocumentRows, effects?: NewDocumentEffectsPg): Promise<boolean> {",
    "export interface NewDocumentEffectsPg {",
    "function buildNewDocumentPg(gate: PgGatePart | null, parts: readonly PgStatementPart[]): string {",
    "pgUnnestInsert(table, cols, next, condition, [",
    "const events = pgDocumentEventsInsertUnnest((i) => `$${first + i + 1}`, [], condition ?? undefined);",
    "const own = `\"new_invoice\" as (${invoice}), \"counted\" as (${pgAddOneDocumentSql(team, condition)}), \"new_items\" as (${items}), \"new_links\" as (${links})`;",
    "const NEW_DOCUMENT_PG = buildNewDocumentPg(null, []);",
    "text = buildNewDocumentPg(gate, parts);",
    "values.push(...pgDocumentEventsInsertUnnest(() => '', doc.events).values);",
    "q = cte(q, 'counted', (qc) => pgAddDocumentsQuery(qc, teamId, 1));",
    "await pgDocumentEventsInsert(q, doc.events).execute();",
    "export interface DocumentUpdatePg {",
    "export async function updateDocumentPg(db: Executor, u: DocumentUpdatePg): Promise<'applied' | { revision: number | undefined }> {",
    "values.push(...pgDocumentEventsInsertUnnest(() => '', u.events).values);",
    "`${pgUnnestInsert('invoice_items', ITEM_COLUMNS, next, applied, ours)} ` +",
    "const freshLinks = pgUnnestInsert('share_links', LINK_COLUMNS, next, applied, ours);",
    "const events = pgDocumentEventsInsertUnnest((i) => `$${first + i}`, [], applied).text;",
  ],
  'src/modules/invoices/invoice.service.ts': [
    "import { dialectOf, type Db } from '../../db/database.js';",
    "private readonly onPostgres: boolean;",
    "this.onPostgres = dialectOf(deps.db) === 'postgres';",
    "const read = this.onPostgres ? await repo.findInvoiceForUpdatePg(this.deps.db, auth.teamId, publicId) : null;",
    "const statements = this.onPostgres ? null : repo.newDocumentStatements(this.deps.db, extended(doc, { events: newDocumentEvents(row, now, false) }));",
    "const oneStatement = this.onPostgres && !onCommit ? this.effects.pgCreateParts(auth, early) : null;",
    "if (this.onPostgres) {",
    "await repo.insertNewDocumentPg(trx, extended(doc, { events: newDocumentEvents(row, now, false) }));",
    "written = await repo.insertNewDocumentPg(this.deps.db, extended(doc, { events: newDocumentEvents(doc.row, now, true) }), one.effects);",
    "return this.updateQuietPg(auth, current, next, { set, superseded, prepared, info, now, linksRead: read.links });",
    "if (this.onPostgres) await repo.replaceItems(trx, auth.teamId, publicId, items);",
    "private async updateQuietPg(",
    "const result = await repo.updateDocumentPg(this.deps.db, {",
  ],
  'src/modules/notifications/notification.service.ts': [
    "import { pgReservationGate, PRUNE_BATCH, prunePastDays, reserveEmails, utcDay } from './quota.js';",
    "deps.database.dialect === 'postgres'",
    "get dialect(): 'sqlite' | 'postgres' {",
    "return this.deps.database.dialect;",
    "pgWriteParts(prepared: PreparedNotifications, limit: number): PgWriteParts | null {",
    "if (held === null) gate = pgReservationGate(allGranted.teamId, ctx.day, limit, ctx.wanted, ctx.nowIso);",
    "const parts = allGranted.rows.length > 0 && prepared.record === null ? [outbox.pgOutboxInsertPart('mail_outbox', allGranted.rows)] : [];",
    "return outbox.claimDue(this.db, this.dialect, { kind: 'email', owner, limit, now: this.deps.clock.now(), leaseMs: this.policy.leaseMs });",
  ],
  'src/modules/notifications/quota.ts': [
    "import { dialectOf, type Executor } from '../../db/database.js';",
    "if (dialectOf(db) === 'postgres') return reserveInShards(db, teamId, day, limit, count, now);",
    "export function pgReservationGate(teamId: string, day: string, limit: number, count: number, now: string): PgGatePart | null {",
    "if (dialectOf(db) !== 'postgres') return first?.reserved ?? 0;",
    "if (dialectOf(db) === 'postgres' && deleted < limit) {",
  ],
};

describe('dialect lines', () => {
  it('names a database nowhere outside src/db/, the per-database stores and the composition roots', () => {
    const { unexpected, allowed, stale } = againstAllowList(dialectLines(), { ...NOT_YET_BEHIND_A_STORE, ...ONLY_FOR_INVOICES });
    console.info(`dialect lines left to move behind a store: ${allowed.length}`);
    expect(showFindings(unexpected), 'these lines name a database: move them into store/sqlite*.ts or store/postgres*.ts').toBe('');
    expect(stale, 'these allowed lines are gone: delete them from the list').toEqual([]);
  });

  it('sees every way of naming a database in code, and none in comments', () => {
    const text = [
      "import { dialectOf } from '../../db/database.js';",
      "if (dialectOf(db) === 'postgres') return;",
      'const sqlite = deps.database.dialect;',
      "const kind = \"sqlite\";",
      'sql`select pg_current_xact_id()`;',
      'await repo.findInvoiceWithLinksPg(db);',
      'const store = pgStore ?? sqliteFallback;',
      'private readonly onPostgres = true;',
      'export type Parts = PartsSqlite;',
      '// dialectOf(db) === \'postgres\': PostgreSQL only (pg_current_xact_id())',
      "/* 'sqlite' */ const plain = 1;",
      "const url = 'postgres://x'; const jpg_file = page; const apiKeyPgpPart = 1;",
    ].join('\n');
    expect(linesNamingADatabase('x.ts', text).map((f) => f.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('checks modules and infrastructure above src/db/, not the places that choose the database', () => {
    expect(checkedFile('src/modules/invoices/invoice.service.ts')).toBe(true);
    expect(checkedFile('src/http/auth.ts')).toBe(true);
    expect(checkedFile('src/modules/events/store/portable.ts')).toBe(true);
    expect(checkedFile('src/modules/events/store/postgres.ts')).toBe(false);
    expect(checkedFile('src/modules/invoices/store/sqlite-list.ts')).toBe(false);
    expect(checkedFile('src/db/outbox-claim.ts')).toBe(false);
    expect(checkedFile('src/stores.ts')).toBe(false);
    expect(checkedFile('src/cli/main.ts')).toBe(false);
  });
});
