/**
 * Code and docs describe the system as it is (CONVENTIONS rule 17): no "Session N" or "issue N"
 * in `src/`, `test/` or `docs/` (the exceptions below aside). The files
 * of other work in progress keep the exact lines listed below; the list only shrinks: a mention
 * added anywhere, or one of these changed, fails, and so does an entry whose line is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';
import { againstAllowList, showFindings, type Finding } from './source-files.js';

const HISTORY = /\b[Ss]ession \d+|\b[Ii]ssue \d+/;
/**
 * Not read: docs/performance.md (being rewritten by topic), this file (it holds the pattern's
 * examples and the list below), and the landed migrations, which are never edited.
 */
const EXCEPTED = (file: string) =>
  file === 'docs/performance.md' || file === 'test/architecture/history-mentions.test.ts' || file.startsWith('src/db/migrations/');

/** Lines that still name a session or an issue, in files others are rewriting. */
const NOT_YET_REWRITTEN: Record<string, string[]> = {
  'docs/adr/0002-processes.md': [
    "- **Amended (Session 10): one core is left to a PostgreSQL server on the same machine.** When",
    "creates no faster (docs/performance.md, \"Session 9\" and \"Session 10\"). A remote server keeps one",
  ],
  'docs/deployment.md': [
    "(nothing written) after `deadlock_timeout`. Since session 5 a node runs a create (and any",
    "Since the release after it (Session 15), a recorded create no longer stores its e-mail outcome",
    "with `team_id` only, so every check walks the team's documents. Measured in session 5: 4.7 ms",
    "([performance.md](performance.md#postgresql-this-session), Session 5). An `ANALYZE` at the end",
    "of `invoicing migrate` would not help a fresh deployment (measured in session 6): on empty",
  ],
  'docs/edo.md': [
    "the CPU of a plain create, recorded 1.05–1.10 (docs/performance.md, \"Session 14\"). A send refused at once (no seller participant id) is",
  ],
  'docs/notifications.md': [
    "(docs/performance.md, \"Session 11\").",
    "plus the quota's reservation (on PostgreSQL no round trip more: \"Session 11\").",
    "taking the record stores it in the same statement (below). Since Session 15; the outcome in the",
    "and index entry written per create (docs/performance.md, \"Session 15\"). Before it claims due e-mails, each worker writes the rows of up to a batch of such",
    "\"Session 14\").",
    "(src/modules/notifications/quota.ts). (The savepoint since Session 15: an UPDATE that waited",
    "docs/performance.md, \"Session 15\".",
  ],
  'docs/operations.md': [
    "\"Session 9\"), and in Session 10 GET 2,207–2,725 against 1,556–1,753 at half the CPU per read,",
    "creates 290–329 against 284–293 (\"Session 10\").",
    "| `INVOICING_SQLITE_CHECKPOINT_THREAD` | `false` | SQLite: `true` copies the WAL into the database file on a thread of its own (`PRAGMA wal_checkpoint(PASSIVE)` every 100 ms), instead of in the COMMIT that takes the WAL past 1,000 pages, which holds the event loop while it copies and fsyncs; the node's own automatic checkpoint stays as a backstop at 16,000 pages. Durability is the same. See docs/performance.md, \"Session 5: PUT on SQLite\". An extension. |",
  ],
  'docs/security.md': [
    "a random page each (docs/performance.md, \"Session 6: time-ordered ids\").",
    "## Demo mode never reaches stored data (issue 10, item 1)",
    "size, so no request can stall a node or store an unbounded document (issue 10). A refused input",
    "## Webhooks and the events feed (issue 15)",
  ],
  'src/app.ts': [
    "// The first hook of every request, in one synchronous call (issue 12; it was three hooks):",
  ],
  'src/db/direct-execution.ts': [
    "* Statements run straight on better-sqlite3 inside a group commit's transaction (issue 13).",
  ],
  'src/db/pg-statements.ts': [
    "* Named prepared statements on PostgreSQL for the hot queries (issue 12).",
  ],
  'src/db/prepared-query.ts': [
    "* Queries compiled once (issue 12). Kysely builds an operation tree and compiles it to SQL on",
    "* `numAffectedRows`), and `insertRows` the same for multi-row INSERTs (issue 13): compiled once",
  ],
  'src/db/statement-cache.ts': [
    "* Prepared-statement cache for better-sqlite3 (issue 12).",
  ],
  'src/db/wal-checkpointer.ts': [
    "* SQLite WAL checkpoints off the event loop (docs/performance.md, \"Session 5: PUT on SQLite\").",
  ],
  'src/modules/edo/edo-events.ts': [
    "/** `edo.status_changed`, recorded in the transaction that moves a job's status (issue 15). */",
  ],
  'src/modules/edo/edo.repository.ts': [
    "* (measured 43 µs against 3 µs with `limit 1`; docs/performance.md, \"Session 5: PUT on SQLite\").",
  ],
  'src/modules/invoices/bounds.ts': [
    "* Bounds on every part of a document, known or not (issue 10, docs/security.md \"Input bounds\").",
  ],
  'src/modules/invoices/invoice-events.ts': [
    "* The events a document write records, inside its transaction (issue 15): created or updated,",
  ],
  'src/modules/invoices/invoice.detail-cache.ts': [
    "* The serialized GET detail response, built once per state of the document (issue 12).",
    "* + `\"`, `\"` + between + `\"`, `\"` + after id]. Kept as bytes (issue 12, session 5): a hit",
  ],
  'src/modules/invoices/invoice.reader.ts': [
    "// state need not be read (issue 12, session 5).",
    "* together from each item's bytes (issue 12, session 5: no 30 KB string joined and encoded",
  ],
  'src/modules/invoices/invoice.routes.ts': [
    "// Serialized by the route's own response serializer, so the cached text (issue 12) is",
    "// kept as UTF-8 bytes per team list version (issue 12).",
  ],
  'src/modules/invoices/invoice.service.ts': [
    "// docs/performance.md \"Session 8\"). The e-mails as the daily quota lets them through: if it",
    "// One statement that commits alone, one round trip (docs/performance.md \"Session 11\").",
    "// takes V8 11.3's slow path, ~2 µs here; docs/performance.md, \"Session 13\").",
  ],
  'src/modules/invoices/seller.ts': [
    "// fills against 0.4 µs, docs/performance.md \"Session 13\"; a `__proto__` key stays a plain key).",
  ],
  'src/modules/notifications/held-quota.ts': [
    "* quota row at all (docs/notifications.md, \"Held e-mails\"; docs/performance.md, \"Session 15\").",
  ],
  'src/modules/notifications/notification-events.ts': [
    "* outbox row (issue 15), so an event exists exactly when the outcome was recorded.",
  ],
  'src/shared/objects.ts': [
    "* \"Session 12\". Same own enumerable properties, same key order.",
  ],
  'src/shared/schema-bounds.ts': [
    "* Default bounds for every route schema (issue 10, docs/security.md \"Input bounds\"): a string",
  ],
  'test/modules/invoices/checksums.test.ts': [
    "it('accepts treasury accounts (03…) at treasury BIKs on their shape: they carry no order-515 key (issue 14)', () => {",
    "it('accepts the single treasury account (ЕКС) at a treasury BIK of the 01… numbering (issue 14)', () => {",
  ],
  'test/modules/invoices/hostile-bodies.property.test.ts': [
    "* Issue 10 \"Done when\": hostile bodies of up to 5 MB (deep, wide, long keys, many `*_url` keys,",
  ],
  'test/modules/invoices/input-bounds.test.ts': [
    "* Issue 10, items 2, 4 and 10: hostile bodies through the real app. Every pass over a body is",
    "describe('hostile bodies (issue 10)', () => {",
  ],
  'test/modules/invoices/kill-under-load.test.ts': [
    "* Durability of acknowledged creates (issue 13): a real `invoicing serve` under concurrent",
  ],
  'test/modules/invoices/list-cache.test.ts': [
    "* The list's page cache (issue 12), validated by the team's list version that database",
  ],
  'test/modules/invoices/list-total.test.ts': [
    "* transaction (issue 12): it stays exact (spec 2.6) after single creates, concurrent creates,",
  ],
  'test/modules/invoices/payment-qr.http.test.ts': [
    "* Issue 14: the payment QR and the requisites as a Russian accountant signs them off, end to",
    "describe('issue 14: payment QR', () => {",
  ],
  'test/modules/invoices/qr-payload.test.ts': [
    "// One byte more: UTF-8 is over, so the QR falls back to windows-1251 (issue 14).",
    "describe('buildPaymentQrPayload: windows-1251 fallback (issue 14)', () => {",
  ],
  'test/modules/invoices/read-cache.test.ts': [
    "* The read path's caches (issue 12): the cached GET detail is byte for byte the response a",
  ],
  'test/modules/invoices/response-build.reference.ts': [
    "* The response build as it was before the literals of session 6 (commit 917a9be,",
  ],
  'test/modules/invoices/response-build.test.ts': [
    "* The document response built from one literal per object (session 6) gives the very bytes the",
  ],
  'test/modules/invoices/revisions.test.ts': [
    "* Issue 10, item 5: revisions are paginated summaries (operating contract, section 5) and a",
  ],
  'test/modules/invoices/search-index.test.ts': [
    "* The `q` search stays exact whoever writes `search_text` (docs/performance.md, \"Session 5:",
  ],
  'test/modules/invoices/totals.test.ts': [
    "describe('minor units (issue 14: exact money strings)', () => {",
  ],
  'test/modules/invoices/validation.test.ts': [
    "it('is silent for a treasury payee: BIK 017003983, ЕКС 40102810445370000059, treasury account 03… (issue 14)', () => {",
    "it('warns about a wrong OGRN / OGRNIP control digit on seller and buyer (issue 14)', () => {",
  ],
  'test/modules/notifications/email-message.test.ts': [
    "// Credentials: STARTTLS is required unless the URL says otherwise (issue 10, item 11).",
  ],
  'test/modules/notifications/outbox-size.test.ts': [
    "* Issue 10, item 4: one write cannot queue megabytes. A document at every free-form bound with",
  ],
};

/** Every text file under `dir` (binary files, with a NUL byte, left out). */
function textFilesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, rel), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && !fs.readFileSync(path.join(REPO_ROOT, child)).includes(0)) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

function historyMentions(text: string, file: string): Finding[] {
  return text.split('\n').flatMap((line, i) => (HISTORY.test(line) ? [{ file, line: i + 1, text: line.trim() }] : []));
}

describe('history mentions', () => {
  it('names no session or issue in src/, test/ or docs/', () => {
    const files = ['src', 'test', 'docs'].flatMap(textFilesUnder).filter((file) => !EXCEPTED(file));
    const found = files.flatMap((file) => historyMentions(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'), file));
    const { unexpected, allowed, stale } = againstAllowList(found, NOT_YET_REWRITTEN);
    console.info(`history mentions left in files being rewritten: ${allowed.length}`);
    expect(showFindings(unexpected), 'state the invariant or the reason instead (the history is in the commit messages)').toBe('');
    expect(stale, 'these allowed lines are gone: delete them from the list').toEqual([]);
  });

  it('sees "Session N" and "issue N" in either case, and nothing else', () => {
    const text = ['a (issue 12) b', 'Session 5: PUT', 'see session 14', 'Issue 10, item 1', 'the issue is 12 ms', 'sessions', 'issues 3'].join('\n');
    expect(historyMentions(text, 'x').map((f) => f.line)).toEqual([1, 2, 3, 4]);
  });
});
