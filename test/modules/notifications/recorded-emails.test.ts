/**
 * On a node whose e-mails the workers send (INVOICING_IN_PROCESS_WORKER=false), a create records
 * its e-mails in the document's row (`invoices.email_pending`) and the notifications worker, or
 * the document's next update, writes their outbox rows from it (docs/notifications.md, "Recorded
 * e-mails"). On SQLite and on PostgreSQL (DATABASE_URL); real SMTP on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxWorker } from '../../../src/modules/notifications/index.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { appEnv, buildWorkerNode, doc, FAST_NOTIFICATIONS, get, mailTo, post, put, recipients, SHARE } from './api-helpers.js';
import { startSmtpServer, waitFor, type TestSmtpServer } from './smtp-helpers.js';

let server: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  server = await startSmtpServer();
  t = await buildWorkerNode(server.url);
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

const emailRows = (publicId: string) =>
  t.db.db.selectFrom('outbox').selectAll().where('public_id', '=', publicId).where('kind', '=', 'email').orderBy('revision').orderBy('position').execute();
const recordOf = async (publicId: string) =>
  (await t.db.db.selectFrom('invoices').select('email_pending').where('public_id', '=', publicId).executeTakeFirstOrThrow()).email_pending;
const storedOutcomeOf = async (publicId: string) =>
  (await t.db.db.selectFrom('invoices').select('notifications').where('public_id', '=', publicId).executeTakeFirstOrThrow()).notifications;
const linksOf = (publicId: string) => t.db.db.selectFrom('share_links').select(['kind', 'email', 'token']).where('public_id', '=', publicId).execute();
const untimed = (outcome: Record<string, unknown>) => {
  const { updated_at: _time, ...rest } = outcome;
  return rest;
};

describe('recorded e-mails', () => {
  it('a create writes no outbox row; the worker writes the rows the create would have, and they are sent once', async () => {
    const res = await post(t, { invoice: doc('MREC-1', { api_recipients: recipients('anna@rec.example', 'boris@rec.example') }), notify_recipients: true });
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(await emailRows(body.public_id)).toEqual([]);
    const record = await recordOf(body.public_id);
    expect(record).not.toBeNull();
    // The outcome is not stored twice in the row: the record gives it, and reads answer it.
    expect(await storedOutcomeOf(body.public_id)).toBeNull();
    expect(JSON.parse(record!)).toMatchObject({ to: ['anna@rec.example', 'boris@rec.example'], transport: 'smtp' });
    expect((await get(t, body.public_id)).metadata.notifications).toEqual(body.notifications);

    expect(await t.app.notifier.service.writeRecordedEmails(100)).toBe(1);
    expect(await recordOf(body.public_id)).toBeNull();
    // Taking the record stores the outcome it gave, in the same statement.
    expect(JSON.parse((await storedOutcomeOf(body.public_id))!)).toEqual(body.notifications);
    expect((await get(t, body.public_id)).metadata.notifications).toEqual(body.notifications);
    const rows = await emailRows(body.public_id);
    expect(rows.map((r) => [r.recipient, r.position, r.revision, r.state, r.attempts, r.locked_by])).toEqual([
      ['anna@rec.example', 0, 1, 'pending', 0, null],
      ['boris@rec.example', 1, 1, 'pending', 0, null],
    ]);
    const { at, id } = JSON.parse(record!) as { at: string; id: string };
    for (const row of rows) {
      expect(row.id).toBe(`${id}${row.position}`);
      expect([row.created_at, row.next_attempt_at, row.updated_at]).toEqual([at, at, at]);
      expect(row.idem_key).toBe(`${body.public_id}:1:${row.recipient}`);
    }
    // Each e-mail links to its recipient's own share link, as the create planned it.
    const links = await linksOf(body.public_id);
    const views = rows.map((r) => JSON.parse(r.payload).view);
    for (const [i, email] of ['anna@rec.example', 'boris@rec.example'].entries()) {
      const token = links.find((l) => l.kind === 'recipient' && l.email === email)!.token;
      expect(views[i]).toMatchObject({ publicId: body.public_id, revision: 1, number: 'MREC-1', locale: 'ru', link: `${SHARE}/${token}`, total: '1234.50' });
    }
    // The outcome computed from the written rows is the one the create answered and stored.
    const { team_id: teamId } = await t.db.db.selectFrom('invoices').select('team_id').where('public_id', '=', body.public_id).executeTakeFirstOrThrow();
    const outcome = await t.app.notifier.service.refreshOutcome(teamId, body.public_id, 1, 0, t.app.notifier.service.policy.requestTimeoutMs);
    expect(untimed(outcome)).toEqual(untimed(body.notifications));

    await t.app.notifier.worker.drain();
    await waitFor(() => mailTo(server, 'anna@rec.example').length === 1 && mailTo(server, 'boris@rec.example').length === 1, 10_000, 'both e-mails');
    expect((await get(t, body.public_id)).notifications).toMatchObject({ sent_count: 2, failed_count: 0 });
    await t.app.notifier.worker.drain();
    expect(mailTo(server, 'anna@rec.example')).toHaveLength(1);
  });

  it('an update before the worker writes the recorded e-mails of the first revision first', async () => {
    const res = await post(t, { invoice: doc('MREC-2', { api_recipients: recipients('carl@rec.example') }), notify_recipients: true });
    const publicId = res.json().public_id;
    const changed = await put(t, publicId, { invoice: doc('MREC-2', { api_recipients: recipients('carl@rec.example'), comment: 'исправлено' }) });
    expect(changed.statusCode).toBe(200);
    expect(await recordOf(publicId)).toBeNull();
    // The first revision's outcome stays the document's (the update sent nothing).
    expect((await get(t, publicId)).metadata.notifications).toEqual(res.json().notifications);
    const rows = await emailRows(publicId);
    expect(rows.map((r) => [r.recipient, r.revision, r.state])).toEqual([['carl@rec.example', 1, 'pending']]);
    expect(JSON.parse(rows[0]!.payload).view).toMatchObject({ revision: 1, number: 'MREC-2' });
    expect(await t.app.notifier.service.writeRecordedEmails(100)).toBe(0);
  });

  it('two workers at once write each recorded e-mail once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push((await post(t, { invoice: doc(`MREC-C${i}`, { api_recipients: recipients(`c${i}@rec.example`) }), notify_recipients: true })).json().public_id);
    }
    const a = new OutboxWorker(t.app.notifier.service);
    const b = new OutboxWorker(t.app.notifier.service);
    const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(ra.recorded + rb.recorded).toBe(6);
    const rows = await t.db.db.selectFrom('outbox').select(['public_id']).where('public_id', 'in', ids).execute();
    expect(rows).toHaveLength(6);
    await t.app.notifier.worker.drain();
    await waitFor(() => ids.every((_, i) => mailTo(server, `c${i}@rec.example`).length === 1), 10_000, 'six e-mails');
    await t.app.notifier.worker.drain();
    expect(ids.map((_, i) => mailTo(server, `c${i}@rec.example`).length)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('a record left on a later revision (a previous-release update) is rebuilt from the first revision kept', async () => {
    const res = await post(t, { invoice: doc('MREC-3', { api_recipients: recipients('dora@rec.example') }), notify_recipients: true });
    const publicId = res.json().public_id;
    const row = await t.db.db.selectFrom('invoices').selectAll().where('public_id', '=', publicId).executeTakeFirstOrThrow();
    // What a node that does not know the column leaves: revision 1 kept, revision 2 in the row, the record untouched.
    await t.db.db
      .insertInto('invoice_revisions')
      .values({
        team_id: row.team_id, public_id: publicId, revision: 1, document: row.document, seller_status: row.seller_status, total: row.total,
        editor_mode: row.editor_mode, modified_at: row.last_modified_at, modified_by_login: row.last_modified_by_login, api_key_id: row.api_key_id, superseded_at: row.last_modified_at,
      })
      .execute();
    const changed = JSON.stringify({ ...JSON.parse(row.document), number: 'MREC-3-B' });
    await t.db.db.updateTable('invoices').set({ revision: 2, document: changed, number: 'MREC-3-B' }).where('public_id', '=', publicId).execute();
    expect(await t.app.notifier.service.writeRecordedEmails(100)).toBe(1);
    const rows = await emailRows(publicId);
    expect(rows.map((r) => [r.recipient, r.revision])).toEqual([['dora@rec.example', 1]]);
    expect(JSON.parse(rows[0]!.payload).view).toMatchObject({ revision: 1, number: 'MREC-3' });
  });

  it('drops a record whose first revision is no longer kept', async () => {
    const res = await post(t, { invoice: doc('MREC-4', { api_recipients: recipients('emil@rec.example') }), notify_recipients: true });
    const publicId = res.json().public_id;
    await t.db.db.updateTable('invoices').set({ revision: 2 }).where('public_id', '=', publicId).execute();
    expect(await t.app.notifier.service.writeRecordedEmails(100)).toBe(0);
    expect(await recordOf(publicId)).toBeNull();
    expect(await emailRows(publicId)).toEqual([]);
  });

  it('records nothing when an e-mail is stopped by a gate (the rows are written with the document)', async () => {
    const res = await post(t, { invoice: doc('MREC-5', { api_recipients: [{ email: 'not-an-address', name: 'X' }, ...recipients('fred@rec.example')] }), notify_recipients: true });
    const publicId = res.json().public_id;
    expect(await recordOf(publicId)).toBeNull();
    expect((await emailRows(publicId)).map((r) => [r.recipient, r.state])).toEqual([
      ['not-an-address', 'failed'],
      ['fred@rec.example', 'pending'],
    ]);
  });
});

describe('a node that attempts e-mail in the request', () => {
  it('records nothing: the rows are leased to the request', async () => {
    const node = await buildTestApp({ env: appEnv(server.url), notifications: FAST_NOTIFICATIONS });
    try {
      const res = await post(node, { invoice: doc('MREC-6', { api_recipients: recipients('gina@rec.example') }), notify_recipients: true });
      expect(res.statusCode).toBe(200);
      const publicId = res.json().public_id;
      const stored = await node.db.db.selectFrom('invoices').select('email_pending').where('public_id', '=', publicId).executeTakeFirstOrThrow();
      expect(stored.email_pending).toBeNull();
      expect(await node.db.db.selectFrom('outbox').select('state').where('public_id', '=', publicId).execute()).toEqual([{ state: 'sent' }]);
    } finally {
      await node.close();
    }
  });
});

describe('a recorded e-mail that cannot be written', () => {
  it('is undone alone, logged and set aside for 10 minutes; the other records are written and their e-mails sent', async () => {
    const errors: Array<{ obj: Record<string, unknown>; msg: string }> = [];
    const logger = { info: () => undefined, warn: () => undefined, error: (obj: object, msg: string) => void errors.push({ obj: obj as Record<string, unknown>, msg }) };
    let offsetMs = 0;
    const clock = { now: () => new Date(Date.now() + offsetMs) };
    const node = await buildTestApp({
      env: { ...appEnv(server.url), INVOICING_IN_PROCESS_WORKER: 'false' },
      notifications: { ...FAST_NOTIFICATIONS, clock, logger },
    });
    const setRecord = (publicId: string, record: string) => node.db.db.updateTable('invoices').set({ email_pending: record }).where('public_id', '=', publicId).execute();
    const recorded = async (publicId: string) =>
      (await node.db.db.selectFrom('invoices').select('email_pending').where('public_id', '=', publicId).executeTakeFirstOrThrow()).email_pending;
    const create = async (number: string, email: string) =>
      (await post(node, { invoice: doc(number, { api_recipients: recipients(email) }), notify_recipients: true })).json().public_id as string;
    try {
      // A record whose rows are written already: writing them again fails in the database (the
      // outbox's primary key), after the record was taken in the same transaction.
      const written = await create('MBAD-1', 'hana@bad.example');
      const record = (await recorded(written))!;
      expect(await node.app.notifier.service.writeRecordedEmails(100)).toBe(1);
      await setRecord(written, record);
      // A record that cannot be read at all.
      const unreadable = await create('MBAD-2', 'ivan@bad.example');
      await setRecord(unreadable, '{"v":1,"id":');
      const good = await create('MBAD-3', 'jana@bad.example');

      const batch = await node.app.notifier.worker.runOnce();
      expect(batch.recorded).toBe(1);
      await node.app.notifier.worker.drain();
      await waitFor(() => mailTo(server, 'jana@bad.example').length === 1, 10_000, 'the good record’s e-mail');
      expect((await get(node, good)).notifications).toMatchObject({ sent_count: 1, failed_count: 0 });
      // The two bad records are left as they were, each logged once with its document.
      expect(await recorded(written)).toBe(record);
      expect(await recorded(unreadable)).toBe('{"v":1,"id":');
      const logged = () => errors.filter((e) => e.msg.startsWith('recorded e-mails could not be written')).map((e) => e.obj.public_id).sort();
      expect(logged()).toEqual([written, unreadable].sort());

      // Set aside: the next batches neither retry them nor fail.
      await node.app.notifier.worker.runOnce();
      expect(logged()).toHaveLength(2);
      // After 10 minutes they are tried again (and logged again).
      offsetMs = 10 * 60_000 + 1_000;
      expect(await node.app.notifier.service.writeRecordedEmails(100)).toBe(0);
      expect(logged()).toHaveLength(4);
    } finally {
      await node.close();
    }
  }, 30_000);
});
