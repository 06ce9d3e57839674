/**
 * A create with an e-mail or an EDO send on a node whose workers send: the document carries
 * its EDO send and e-mails recorded in its own row (`edo_pending_job`, `email_pending`); the
 * workers write their jobs and outbox rows from it (docs/edo.md, "Recorded sends";
 * docs/notifications.md, "Recorded e-mails"). What they write is checked row by row on both
 * databases. On PostgreSQL such a create is the document's one statement when the node holds
 * the team's e-mails for the day (held-quota.ts), and a transaction (the quota reserved on its
 * rows, then the document) for a team whose daily quota is too small to hold blocks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/modules/notifications/store/portable.js';
import { SHARDS } from '../../../src/modules/notifications/store/postgres-shards.js';
import { reserveEmails } from '../../helpers/quota.js';
import type { TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { bootstrapFixture } from '../../helpers/fixtures.js';
import { statementsDuring } from '../../helpers/statements.js';
import { buildWorkerNode, doc, post, recipients, reserved } from '../notifications/api-helpers.js';
import { startSmtpServer, waitFor, type TestSmtpServer } from '../notifications/smtp-helpers.js';
import { storedRow } from './write-helpers.js';

const BUYER_EDO = '2BM-7728168971-2012052808301121';
const SIXTEEN_KEY = 'ak_sixteen_main_0001';
const ROOMY_KEY = 'ak_roomy_main_0001';
const TIGHT_KEY = 'ak_tight_main_0001';

/**
 * The fixture plus three teams: one whose tariff lets 16 e-mails a day through (one per quota
 * shard on PostgreSQL), one 32 (two per shard), one whose quota no test here comes near.
 */
function bootstrap() {
  const base = bootstrapFixture();
  const team = (id: string, keyId: number, secret: string) => ({
    id,
    name: id,
    tariff: id,
    api_keys: [{ id: keyId, name: 'main', secret, active: true }],
    organizations: [{ id: `${id}-org`, name: `ООО «${id}»`, inn: '7707083893', edo_id: '2BM-7707083893-2012052808301120', active: true }],
  });
  return {
    ...base,
    tariffs: {
      ...base.tariffs,
      sixteen: { emails_per_day: SHARDS, external_share: true },
      roomy: { emails_per_day: 1_000_000, external_share: true },
      tight: { emails_per_day: 2 * SHARDS, external_share: true },
    },
    teams: [...base.teams, team('sixteen', 601, SIXTEEN_KEY), team('roomy', 701, ROOMY_KEY), team('tight', 801, TIGHT_KEY)],
  };
}

let server: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  server = await startSmtpServer();
  // An API node whose e-mails the workers send: the create attempts nothing after its commit.
  t = await buildWorkerNode(server.url, { bootstrap: bootstrap() });
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

async function rowsOf(publicId: string) {
  const db = t.db.db;
  return {
    outbox: await db.selectFrom('outbox').selectAll().where('public_id', '=', publicId).orderBy('kind').orderBy('position').execute(),
    jobs: await db.selectFrom('edo_jobs').selectAll().where('public_id', '=', publicId).execute(),
    events: await db.selectFrom('events').select(['type', 'revision']).where('public_id', '=', publicId).orderBy('tx_id').orderBy('seq').execute(),
    items: await db.selectFrom('invoice_items').select('line_no').where('public_id', '=', publicId).execute(),
    links: await db.selectFrom('share_links').select('kind').where('public_id', '=', publicId).orderBy('sort_order').execute(),
  };
}

describe('a create with an e-mail and an EDO send writes its effects with the document', () => {
  it('the outbox rows, the EDO job, the quota and the events, as the answer says', async () => {
    const teamBefore = (await t.stores.invoices.listState('roomy')).documents;
    // Let through: what the rows count less what the node holds unused (PostgreSQL, held-quota.ts).
    const letThrough = async () => (await reserved(t, 'roomy')) - t.app.notifier.service.heldFor('roomy', utcDay(new Date()));
    const quotaBefore = await letThrough();
    const res = await post(
      t,
      { invoice: doc('ONE-1', { api_recipients: recipients('anna@buyer.example', 'boris@buyer.example'), buyer_edo_id: BUYER_EDO }), notify_recipients: true },
      {},
      ROOMY_KEY,
    );
    expect(res.statusCode, res.body).toBe(207);
    const body = res.json();
    // The EDO send and the e-mails recorded in the document's row (a node whose workers send).
    const written = await rowsOf(body.public_id);
    expect(written.outbox).toEqual([]);
    expect(written.jobs).toEqual([]);
    const stored = await storedRow(t, body.public_id);
    expect(stored?.edo_pending_job).toBe(body.metadata.edo.job_id);
    expect(stored?.email_pending).not.toBeNull();
    // The workers write the send's job and outbox row and the e-mails' rows from the row.
    expect(await t.app.edo.service.writeRecordedSends(100)).toBeGreaterThanOrEqual(1);
    expect(await t.app.notifier.service.writeRecordedEmails(100)).toBeGreaterThanOrEqual(1);
    const rows = await rowsOf(body.public_id);
    expect(rows.outbox.map((r) => [r.kind, r.position, r.recipient, r.state, r.attempts, r.locked_by])).toEqual([
      ['edo_send', 0, BUYER_EDO, 'pending', 0, null],
      ['email', 0, 'anna@buyer.example', 'pending', 0, null],
      ['email', 1, 'boris@buyer.example', 'pending', 0, null],
    ]);
    expect(rows.outbox.every((r) => r.revision === 1 && r.team_id === 'roomy')).toBe(true);
    // The EDO job is the outbox row's, as the answer names it.
    expect(rows.jobs.map((j) => [j.job_id, j.status, j.revision, j.buyer_edo_id])).toEqual([[body.metadata.edo.job_id, 'queued', 1, BUYER_EDO]]);
    expect(rows.outbox[0]!.id).toBe(body.metadata.edo.job_id);
    expect(body.metadata.edo).toMatchObject({ status: 'queued', revision: 1 });
    expect(body.notifications).toMatchObject({ planned_count: 2, sent_count: 0, failed_count: 2 });
    expect(rows.events).toEqual([{ type: 'invoice.created', revision: 1 }]);
    expect(rows.items).toHaveLength(1);
    expect(rows.links.map((l) => l.kind)).toEqual(['buyer', 'colleague', 'recipient', 'recipient']);
    expect((await t.stores.invoices.listState('roomy')).documents).toBe(teamBefore + 1);
    // (A block the node asked for meanwhile counts once it is there.)
    await waitFor(async () => (await letThrough()) === quotaBefore + 2, 5_000, 'the quota to count the two e-mails');
  });
});

describe('a create with one e-mail and an EDO send', () => {
  it('writes (the workers, from the row) every column of the e-mail and the EDO send rows', async () => {
    const res = await post(
      t,
      { invoice: doc('ONE-single', { api_recipients: recipients('solo@buyer.example'), buyer_edo_id: BUYER_EDO }), notify_recipients: true },
      {},
      ROOMY_KEY,
    );
    expect(res.statusCode, res.body).toBe(207);
    const body = res.json();
    // The rows are the workers' to write (from the document's row).
    await t.app.edo.service.writeRecordedSends(100);
    await t.app.notifier.service.writeRecordedEmails(100);
    const rows = await rowsOf(body.public_id);
    expect(rows.outbox).toHaveLength(2);
    const [edo, mail] = rows.outbox as [(typeof rows.outbox)[number], (typeof rows.outbox)[number]];
    for (const row of [edo, mail]) {
      expect(row).toMatchObject({ team_id: 'roomy', public_id: body.public_id, revision: 1, position: 0, state: 'pending', attempts: 0 });
      expect(row.max_attempts).toBeGreaterThan(0);
      expect(row.locked_by).toBeNull();
      expect(row.locked_until).toBeNull();
      expect(row.last_error).toBeNull();
      expect(row.sent_at).toBeNull();
      expect(row.next_attempt_at).toBe(row.created_at);
      expect(row.updated_at).toBe(row.created_at);
      expect(Number.isNaN(Date.parse(row.created_at))).toBe(false);
    }
    expect(edo).toMatchObject({ kind: 'edo_send', recipient: BUYER_EDO, idem_key: `edo:${body.public_id}:1`, message_id: edo.id });
    expect(JSON.parse(edo.payload)).toMatchObject({ v: 1, recipient: BUYER_EDO, document: { publicId: body.public_id, revision: 1 } });
    expect(mail).toMatchObject({ kind: 'email', recipient: 'solo@buyer.example', idem_key: `${body.public_id}:1:solo@buyer.example` });
    expect(mail.message_id).toMatch(/^<.+@.+>$/);
    expect(JSON.parse(mail.payload)).toMatchObject({ v: 1, view: { publicId: body.public_id, revision: 1 } });
    expect(rows.jobs.map((j) => j.job_id)).toEqual([edo.id]);
  });
});

describe('concurrent creates at the daily quota', () => {
  it('let exactly the quota through, each document stored once, whichever way each one was written', async () => {
    const limit = 2 * SHARDS;
    const writes = Array.from({ length: limit + 8 }, (_, i) =>
      post(t, { invoice: doc(`TIGHT-${i}`, { api_recipients: recipients(`t${i}@buyer.example`) }), notify_recipients: true }, {}, TIGHT_KEY),
    );
    const responses = await Promise.all(writes);
    expect(responses.map((r) => r.statusCode).every((s) => s === 207)).toBe(true);
    const blocked = responses.filter((r) => r.json().notifications.block_reason === 'emails_per_day_exceeded');
    expect(blocked).toHaveLength(8);
    for (const r of blocked) expect(r.json().status.service_status).toBe('restricted');
    expect(await reserved(t, 'tight')).toBe(limit);
    expect((await t.stores.invoices.listState('tight')).documents).toBe(limit + 8);
    const db = t.db.db;
    // The e-mails let through were recorded in their documents' rows (the blocked ones written).
    expect(await t.app.notifier.service.writeRecordedEmails(1000)).toBe(limit);
    const outbox = await db.selectFrom('outbox').select(['state', 'public_id']).where('team_id', '=', 'tight').execute();
    expect(outbox.filter((r) => r.state === 'pending')).toHaveLength(limit);
    expect(outbox.filter((r) => r.state === 'blocked')).toHaveLength(8);
    expect(new Set(outbox.map((r) => r.public_id)).size).toBe(limit + 8);
    const created = await db.selectFrom('events').select('public_id').where('team_id', '=', 'tight').where('type', '=', 'invoice.created').execute();
    expect(new Set(created.map((e) => e.public_id)).size).toBe(created.length);
    expect(created).toHaveLength(limit + 8);
  });
});

describe.runIf(usingPostgres())('PostgreSQL: one statement', () => {
  it('a create with e-mails, with an EDO send, or both is two round trips: authentication and the write', async () => {
    // The first create of the team reads the seller's reference rows into the node's cache.
    await post(t, { invoice: doc('ONE-warm') }, {}, ROOMY_KEY);
    const cases = [
      { api_recipients: recipients('c@buyer.example') },
      { buyer_edo_id: BUYER_EDO },
      { api_recipients: recipients('d@buyer.example', 'e@buyer.example'), buyer_edo_id: BUYER_EDO },
    ];
    for (const [i, extra] of cases.entries()) {
      let status = 0;
      const texts = await statementsDuring(async () => {
        status = (await post(t, { invoice: doc(`ONE-rt-${i}`, extra), notify_recipients: 'api_recipients' in extra }, {}, ROOMY_KEY)).statusCode;
      });
      expect(status).toBeGreaterThanOrEqual(200);
      expect(texts, JSON.stringify(texts.map((s) => s.slice(0, 60)))).toHaveLength(2);
      expect(texts.some((s) => /^begin/i.test(s))).toBe(false);
    }
  });

  it('a team whose quota holds no blocks: the transaction reserves on the rows, then writes the document once', async () => {
    // 16 a day: no block (held-quota.ts `blockSize`), so an e-mailed create reserves in its
    // transaction. Every shard of the day full: the e-mail is blocked, the document restricted.
    const day = new Date().toISOString().slice(0, 10);
    expect(await reserveEmails(t.db.db, 'sixteen', day, SHARDS, SHARDS, new Date().toISOString())).toBe(SHARDS);
    const before = (await t.stores.invoices.listState('sixteen')).documents;
    let res: Awaited<ReturnType<typeof post>> | undefined;
    const texts = await statementsDuring(async () => {
      res = await post(t, { invoice: doc('ONE-full', { api_recipients: recipients('f@buyer.example') }), notify_recipients: true }, {}, SIXTEEN_KEY);
    });
    expect(res!.statusCode, res!.body).toBe(207);
    const body = res!.json();
    expect(body.notifications).toMatchObject({ planned_count: 1, sent_count: 0, block_reason: 'emails_per_day_exceeded' });
    expect(body.status.service_status).toBe('restricted');
    expect(texts.filter((s) => /^begin/i.test(s))).toHaveLength(1);
    const rows = await rowsOf(body.public_id);
    expect(rows.outbox.map((r) => [r.recipient, r.state, r.last_error])).toEqual([['f@buyer.example', 'blocked', 'emails_per_day_exceeded']]);
    expect(rows.events).toEqual([
      { type: 'invoice.created', revision: 1 },
      { type: 'invoice.restricted', revision: 1 },
    ]);
    expect(rows.items).toHaveLength(1);
    expect((await t.stores.invoices.listState('sixteen')).documents).toBe(before + 1);
    expect(await reserved(t, 'sixteen')).toBe(SHARDS);
  });
});
