/**
 * An API node without the in-process worker (INVOICING_IN_PROCESS_WORKER=false) makes no
 * e-mail attempt in the request: the create answers at once, 207 with each e-mail queued
 * (`retrying`, no attempt yet), renders no PDF and talks no SMTP; a worker then sends each
 * e-mail exactly once and the document follows (sent_count, buyer_status `sent`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { buildWorkerNode, doc, get, mailTo, post, recipients, sleep } from './api-helpers.js';
import { startSmtpServer, waitFor, type TestSmtpServer } from './smtp-helpers.js';

describe('notifications on an API node whose background work runs in `invoicing worker`', () => {
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

  it('queues the e-mails for the workers instead of attempting them in the request', async () => {
    const res = await post(t, { invoice: doc('NODE-1', { api_recipients: recipients('a@buyer.example', 'b@buyer.example') }), notify_recipients: true });
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body.notifications).toMatchObject({ requested: true, planned_count: 2, sent_count: 0, failed_count: 2 });
    expect(body.notifications.failed.map((f: { state: string; attempts: number }) => [f.state, f.attempts])).toEqual([
      ['retrying', 0],
      ['retrying', 0],
    ]);
    expect(body.notifications.mail_runtime.retry_queue).toBe(2);
    // Nothing was sent by the request, and nothing leased to it.
    await sleep(300);
    expect(server.received).toHaveLength(0);
    // Recorded in the document's row (docs/notifications.md, "Recorded e-mails"): the worker
    // writes the outbox rows from it, due at once, leased to no one.
    expect(await t.db.db.selectFrom('outbox').selectAll().where('public_id', '=', body.public_id).execute()).toEqual([]);
    expect((await t.db.db.selectFrom('invoices').select('email_pending').where('public_id', '=', body.public_id).executeTakeFirstOrThrow()).email_pending).not.toBeNull();
    expect(await t.app.notifier.service.writeRecordedEmails(100)).toBe(1);
    const rows = await t.db.db.selectFrom('outbox').selectAll().where('public_id', '=', body.public_id).execute();
    expect(rows.map((r) => [r.state, r.attempts, r.locked_by])).toEqual([
      ['pending', 0, null],
      ['pending', 0, null],
    ]);
    // The outcome as answered is stored with the document (written with its row).
    const queued = await get(t, body.public_id);
    expect(queued.metadata.notifications).toEqual(body.notifications);
    expect(queued.status).toMatchObject({ buyer_status: 'not_sent', service_status: 'active' });

    // A worker (here the node's own loop, started by hand as `invoicing worker` would run it) sends each once.
    await t.app.notifier.worker.drain();
    await waitFor(() => mailTo(server, 'a@buyer.example').length === 1 && mailTo(server, 'b@buyer.example').length === 1, 10_000, 'both e-mails');
    const stored = await get(t, body.public_id);
    expect(stored.notifications).toMatchObject({ sent_count: 2, failed_count: 0 });
    expect(stored.status.buyer_status).toBe('sent');
    await t.app.notifier.worker.drain();
    expect(server.received).toHaveLength(2);
  });
});
