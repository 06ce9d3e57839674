/**
 * E-mail notifications through the real API (POST / PUT / GET) and a real SMTP server on
 * loopback: what arrives, what the response and the stored document say, failures (550,
 * malformed address, a server that is down) and the worker delivering them later,
 * sending_restricted, Idempotency-Key replays and updates.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { appEnv, BOUNDED_POLICY, countRows, doc, FAST_NOTIFICATIONS, get, mailTo, post, put, recipients, sleep } from './api-helpers.js';
import { freePort, startBrokenServer, startSmtpServer, waitFor, type TestSmtpServer } from './smtp-helpers.js';

describe('notifications through the API with a working SMTP server', () => {
  let server: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    server = await startSmtpServer();
    t = await buildTestApp({ env: appEnv(server.url), notifications: FAST_NOTIFICATIONS });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });
  beforeEach(() => {
    server.received.length = 0;
    server.behaviour = {};
  });

  it('attaches the invoice PDF of that revision, as the share page renders it', async () => {
    const res = await post(t, { invoice: doc('PDF-1', { api_recipients: [{ email: 'pdf@buyer.example' }] }), notify_recipients: true });
    expect(res.statusCode).toBe(200);
    const raw = server.received.find((m) => m.envelopeTo.includes('pdf@buyer.example'))?.raw ?? '';
    expect(raw).toMatch(/Content-Type: application\/pdf/i);
    const part = raw.split(/Content-Type: application\/pdf/i)[1] ?? '';
    const base64 = (part.split(/\r?\n\r?\n/)[1] ?? '').split(/\r?\n--/)[0]!.replace(/\s+/g, '');
    const attached = Buffer.from(base64, 'base64');
    expect(attached.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // Byte for byte the share page's PDF of the document, under its file name.
    const url = new URL(res.json().document_url as string);
    const page = await t.call({ method: 'GET', url: url.pathname, headers: { host: url.host } });
    expect(page.statusCode).toBe(200);
    expect(page.rawPayload.equals(attached)).toBe(true);
    // Its name (RFC 2231, in pieces): the document's, as the share page names it.
    const pieces = [...part.matchAll(/filename\*\d+\*?=([^;\r\n]+)/g)].map((m) => m[1]);
    expect(decodeURIComponent(pieces.join('').replace(/^utf-8''/i, ''))).toMatch(/^Счёт № PDF-1 от \d{2}\.\d{2}\.\d{4}\.pdf$/);
  });

  it('sends each API recipient its own link and reports 200 with the outcome (notify_recipients)', async () => {
    const res = await post(t, {
      invoice: doc('A&B-<7>', {
        api_recipients: [
          { email: 'anna@buyer.example', name: '<img src=x onerror=alert(1)> Анна', position: 'Бухгалтер' },
          { email: 'petr@buyer.example', name: 'Пётр' },
        ],
      }),
      notify_recipients: true,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.notifications).toMatchObject({
      document_public_id: body.public_id,
      document_kind: 'invoice',
      requested: true,
      revision: 1,
      planned_count: 2,
      sent_count: 2,
      failed_count: 0,
      sent_to: ['anna@buyer.example', 'petr@buyer.example'],
      failed: [],
      blocked_by_service_gate: false,
      block_reason: '',
      mail_runtime: { transport: 'smtp', retry_queue: 0 },
    });
    expect(body.metadata.notifications).toEqual(body.notifications);
    expect(body.status).toMatchObject({ buyer_status: 'sent', buyer_status_label: 'Отправлен' });

    const seller = body.invoice.seller.name as string;
    expect(seller).toBe('ООО «Ромашка»');
    const links = body.share_links.recipients as Array<{ email: string; url: string; document_url: string }>;
    expect(links).toHaveLength(2);
    const ids = new Set<string>();
    for (const link of links) {
      const mails = mailTo(server, link.email);
      expect(mails, link.email).toHaveLength(1);
      const mail = mails[0]!;
      expect(mail.headers.get('to')).toContain(link.email);
      expect(mail.headers.get('from')).toContain('invoices@billing.example');
      expect(mail.subject).toBe(`Счёт № A&B-<7> от 28.11.2026 — ${seller}`);
      // The recipient's own link, nobody else's.
      expect(mail.text).toContain(link.url);
      expect(mail.html).toContain(`href="${link.url}"`);
      expect(mail.text).toContain(link.document_url);
      for (const other of links.filter((l) => l !== link)) expect(mail.text).not.toContain(other.url);
      expect(mail.text).not.toContain(body.share_links.buyer_url);
      // User-supplied text is escaped in the HTML.
      expect(mail.html).toContain('A&amp;B-&lt;7&gt;');
      expect(mail.html).not.toMatch(/<img|<7>/);
      expect(mail.headers.get('x-invoice-public-id')).toBe(body.public_id);
      ids.add(mail.headers.get('message-id')!);
    }
    expect(mailTo(server, 'anna@buyer.example')[0]!.html).toContain('&lt;img src=x onerror=alert(1)&gt; Анна');
    expect(ids.size).toBe(2);

    const stored = await get(t, body.public_id);
    expect(stored.status.buyer_status).toBe('sent');
    expect(stored.metadata.notifications).toEqual(body.notifications);
    expect(stored.notifications).toEqual(body.notifications);
  });

  it('works the same with send_notifications', async () => {
    const res = await post(t, { invoice: doc('SN-1', { api_recipients: recipients('one@buyer.example', 'two@buyer.example') }), send_notifications: true });
    expect(res.statusCode).toBe(200);
    expect(res.json().notifications).toMatchObject({ planned_count: 2, sent_count: 2, sent_to: ['one@buyer.example', 'two@buyer.example'] });
    expect(server.received.map((m) => m.envelopeTo).sort()).toEqual([['one@buyer.example'], ['two@buyer.example']]);
  });

  it('without api_recipients sends buyer.email the buyer link', async () => {
    const res = await post(t, { invoice: doc('B-1', { buyer: { name: 'ИП Сидоров', email: 'sidorov@buyer.example' } }), notify_recipients: true });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.notifications).toMatchObject({ planned_count: 1, sent_count: 1, sent_to: ['sidorov@buyer.example'] });
    const [mail] = mailTo(server, 'sidorov@buyer.example');
    expect(mail!.text).toContain(body.share_links.buyer_url);
    expect(mail!.html).toContain(`href="${body.share_links.buyer_url}"`);
    expect(mail!.text).not.toContain(body.share_links.colleague_url);
  });

  it('sends nothing without a flag: planned 0, buyer_status not_sent', async () => {
    const before = await countRows(t, 'outbox');
    const res = await post(t, { invoice: doc('N-1', { buyer: { name: 'B', email: 'b@buyer.example' }, api_recipients: recipients('r@buyer.example') }) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.notifications).toMatchObject({ requested: false, planned_count: 0, sent_count: 0, failed_count: 0, sent_to: [], failed: [] });
    expect(body.status.buyer_status).toBe('not_sent');
    expect(await countRows(t, 'outbox')).toBe(before);
    expect(server.received).toHaveLength(0);
  });

  it('reports a recipient rejected with 550 (207) and saves the document', async () => {
    server.behaviour = { rejectRecipient: (a) => (a === 'gone@buyer.example' ? 'Mailbox unavailable' : null) };
    const res = await post(t, { invoice: doc('R-1', { api_recipients: recipients('gone@buyer.example', 'here@buyer.example') }), notify_recipients: true });
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body.ok).toBe(true);
    expect(body.notifications).toMatchObject({ planned_count: 2, sent_count: 1, failed_count: 1, sent_to: ['here@buyer.example'], blocked_by_service_gate: false });
    expect(body.notifications.failed).toEqual([
      expect.objectContaining({ email: 'gone@buyer.example', code: 'smtp_rejected', state: 'failed', attempts: 1, error: expect.stringMatching(/^550\b.*Mailbox unavailable/) }),
    ]);
    expect(body.status.buyer_status).toBe('sent');
    const stored = await get(t, body.public_id);
    expect(stored.invoice.number).toBe('R-1');
    expect(stored.metadata.notifications).toEqual(body.notifications);
    expect(mailTo(server, 'gone@buyer.example')).toHaveLength(0);
  });

  it('reports a malformed address as invalid_address (207) and sends nothing to it', async () => {
    const res = await post(t, { invoice: doc('M-1', { api_recipients: recipients('not-an-email', 'ok@buyer.example') }), notify_recipients: true });
    expect(res.statusCode).toBe(207);
    const body = res.json();
    expect(body.notifications).toMatchObject({
      planned_count: 2,
      sent_count: 1,
      failed_count: 1,
      sent_to: ['ok@buyer.example'],
      failed: [expect.objectContaining({ email: 'not-an-email', error: 'invalid_address', code: 'invalid_address', state: 'failed' })],
    });
    expect(server.received.map((m) => m.envelopeTo)).toEqual([['ok@buyer.example']]);
  });

  it('refuses notify with public_share_enabled false: 409 sending_restricted, nothing stored or sent', async () => {
    const before = await Promise.all([countRows(t, 'invoices'), countRows(t, 'outbox'), countRows(t, 'email_quota')]);
    for (const flag of ['notify_recipients', 'send_notifications']) {
      const res = await post(t, { invoice: doc('SR-1', { public_share_enabled: false, api_recipients: recipients('x@buyer.example') }), [flag]: true });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'sending_restricted' });
    }
    expect(await Promise.all([countRows(t, 'invoices'), countRows(t, 'outbox'), countRows(t, 'email_quota')])).toEqual(before);
    expect(server.received).toHaveLength(0);
  });

  it('replays a create that sent mail with the same final outcome and sends nothing again', async () => {
    server.behaviour = { rejectRecipient: (a) => (a === 'nope@buyer.example' ? 'No such user' : null) };
    const payload = { invoice: doc('I-1', { api_recipients: recipients('idem@buyer.example', 'nope@buyer.example') }), notify_recipients: true };
    const headers = { 'idempotency-key': 'order-i-1' };
    const first = await post(t, payload, headers);
    expect(first.statusCode).toBe(207);
    expect(first.json().notifications).toMatchObject({ sent_count: 1, failed_count: 1 });
    expect(server.received).toHaveLength(1);
    const outboxBefore = await countRows(t, 'outbox');

    server.behaviour = {};
    const again = await post(t, payload, headers);
    expect(again.statusCode).toBe(207);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.json().status.buyer_status).toBe('sent');
    await sleep(100);
    expect(server.received).toHaveLength(1);
    expect(await countRows(t, 'outbox')).toBe(outboxBefore);

    const ok = { invoice: doc('I-2', { api_recipients: recipients('idem2@buyer.example') }), notify_recipients: true };
    const a = await post(t, ok, { 'idempotency-key': 'order-i-2' });
    const b = await post(t, ok, { 'idempotency-key': 'order-i-2' });
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(b.json().notifications).toEqual(a.json().notifications);
    expect(b.json().notifications.sent_count).toBe(1);
    expect(mailTo(server, 'idem2@buyer.example')).toHaveLength(1);
  });

  it('tells a retry to wait while the first request is still attempting its e-mails, then replays its final answer', async () => {
    server.behaviour = { stallOnData: true }; // the first request's attempt runs into its timeout
    const payload = { invoice: doc('I-3', { api_recipients: recipients('slow@buyer.example') }), notify_recipients: true };
    const headers = { 'idempotency-key': 'order-i-3' };
    const outboxBefore = await countRows(t, 'outbox');
    const first = post(t, payload, headers);
    await waitFor(async () => (await countRows(t, 'outbox')) > outboxBefore, 2_000, 'the document to commit');
    await sleep(100);
    const during = await post(t, payload, headers);
    expect(during.statusCode).toBe(409);
    expect(during.json().error).toBe('idempotency_request_in_progress');
    expect(during.headers['retry-after']).toBe('1');
    const done = await first;
    expect(done.statusCode).toBe(207);
    const after = await post(t, payload, headers);
    expect(after.statusCode).toBe(207);
    expect(after.json()).toEqual(done.json());

    // A first request that died after commit, before its answer: after the lease the answer as
    // committed is replayed, 207 since its e-mail was not delivered (the worker has it now).
    await t.db.db
      .updateTable('idempotency_keys')
      .set({ response_status: null, response_body: JSON.stringify({ ...done.json(), notifications: { ...done.json().notifications, sent_count: 0 } }), created_at: new Date(Date.now() - 60_000).toISOString() })
      .where('team_id', '=', 'acme')
      .where('idem_key', '=', 'order-i-3')
      .execute();
    const orphan = await post(t, payload, headers);
    expect(orphan.statusCode).toBe(207);
    expect(orphan.headers['idempotent-replayed']).toBe('true');
    expect(orphan.json().public_id).toBe(done.json().public_id);
  });

  it('sends the new revision on PUT with notify, with a new Message-ID and the same links', async () => {
    const created = await post(t, { invoice: doc('U-1', { api_recipients: recipients('upd@buyer.example') }), notify_recipients: true });
    expect(created.statusCode).toBe(200);
    const first = created.json();
    const updated = await put(t, first.public_id, {
      invoice: doc('U-1', { api_recipients: recipients('upd@buyer.example'), items: [{ name: 'Работа', qty: 2, price: 1234.5 }] }),
      notify_recipients: true,
    });
    expect(updated.statusCode).toBe(200);
    const second = updated.json();
    expect(second.notifications).toMatchObject({ revision: 2, planned_count: 1, sent_count: 1, sent_to: ['upd@buyer.example'] });
    expect(second.metadata.notifications).toEqual(second.notifications);
    const mails = mailTo(server, 'upd@buyer.example');
    expect(mails).toHaveLength(2);
    expect(mails.map((m) => m.headers.get('x-invoice-revision'))).toEqual(['1', '2']);
    expect(mails[0]!.headers.get('message-id')).not.toBe(mails[1]!.headers.get('message-id'));
    expect(mails[1]!.text).toContain('2\u00a0469,00\u00a0RUB');
    expect(second.share_links.recipients[0].url).toBe(first.share_links.recipients[0].url);
    expect(mails[1]!.text).toContain(second.share_links.recipients[0].url);
    expect((await get(t, first.public_id)).metadata.notifications).toEqual(second.notifications);

    // An update without the flag sends nothing and reports that nothing was asked.
    const quiet = await put(t, first.public_id, { invoice: doc('U-1', { api_recipients: recipients('upd@buyer.example') }) });
    expect(quiet.statusCode).toBe(200);
    expect(quiet.json().notifications).toMatchObject({ requested: false, planned_count: 0 });
    expect(mailTo(server, 'upd@buyer.example')).toHaveLength(2);
  });
});

describe('notifications through the API when the SMTP server is down', () => {
  let port: number;
  let t: TestApp;
  let server: TestSmtpServer | null = null;

  beforeAll(async () => {
    port = await freePort();
    // The default SMTP timeouts (5 s and more): the request's own bound (1.5 s) is what stops it.
    t = await buildTestApp({ env: appEnv(`smtp://127.0.0.1:${port}`), notifications: { policy: BOUNDED_POLICY } });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it('answers 207 within the bounded time, and the worker delivers once the server is up', async () => {
    // A server that accepts the connection and never answers.
    const silent = await startBrokenServer('silent', port);
    let started = Date.now();
    const slow = await post(t, { invoice: doc('D-1', { api_recipients: recipients('late@buyer.example') }), notify_recipients: true });
    // At least the request's bound, and well short of SMTP's own default timeouts (5 s and
    // more): the bound stopped it. The margin is wide so a loaded machine cannot fail it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(4_500);
    await silent.close();
    expect(slow.statusCode).toBe(207);
    expect(slow.json().notifications.failed).toEqual([
      expect.objectContaining({
        email: 'late@buyer.example',
        error: expect.stringContaining('ran out of time'),
        code: 'smtp_timeout',
        state: 'retrying',
        attempts: 1,
        next_attempt_at: expect.any(String),
      }),
    ]);

    // Nothing listening at all: refused at once.
    started = Date.now();
    const down = await post(t, { invoice: doc('D-2', { buyer: { name: 'B', email: 'buyer@buyer.example' } }), notify_recipients: true });
    // Refused (code smtp_connection below), not waited for: again short of SMTP's timeouts.
    expect(Date.now() - started).toBeLessThan(4_500);
    expect(down.statusCode).toBe(207);
    const body = down.json();
    expect(body.notifications).toMatchObject({
      planned_count: 1,
      sent_count: 0,
      failed_count: 1,
      blocked_by_service_gate: false,
      mail_runtime: { transport: 'smtp', retry_queue: 1 },
      failed: [expect.objectContaining({ email: 'buyer@buyer.example', code: 'smtp_connection', state: 'retrying', attempts: 1 })],
    });
    expect(body.status.buyer_status).toBe('not_sent');
    const stored = await get(t, body.public_id);
    expect(stored.status.buyer_status).toBe('not_sent');
    expect(stored.metadata.notifications).toEqual(body.notifications);

    // The server comes up; the worker's retry (due after ~0.2 s) delivers both.
    server = await startSmtpServer({}, port);
    const ids = [slow.json().public_id as string, body.public_id as string];
    await waitFor(
      async () => {
        await t.app.notifier.worker.drain();
        const docs = await Promise.all(ids.map((id) => get(t, id)));
        return docs.every((d) => d.metadata.notifications.sent_count === 1);
      },
      10_000,
      'the worker to deliver',
    );
    for (const id of ids) {
      const after = await get(t, id);
      expect(after.status.buyer_status).toBe('sent');
      expect(after.metadata.notifications).toMatchObject({ revision: 1, planned_count: 1, sent_count: 1, failed_count: 0, failed: [] });
      expect(after.metadata.notifications.mail_runtime.retry_queue).toBe(0);
      expect(after.notifications).toEqual(after.metadata.notifications);
    }
    expect(mailTo(server, 'late@buyer.example')).toHaveLength(1);
    const [mail] = mailTo(server, 'buyer@buyer.example');
    expect(mail!.text).toContain(body.share_links.buyer_url);
  });
});
