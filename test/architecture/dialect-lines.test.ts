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
const ONLY_FOR_INVOICES: Record<string, string[]> = {};

/** The lines of the modules not yet behind their stores, exactly as they read. */
const NOT_YET_BEHIND_A_STORE: Record<string, string[]> = {};

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
