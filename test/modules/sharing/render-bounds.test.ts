/**
 * PDF renders are bounded (docs/security.md, "PDF renders"). A share PDF whose render runs past
 * INVOICING_PDF_RENDER_TIMEOUT_MS is stopped and answered 503 `render_timeout`, and the pool
 * serves the next request. The PDFs of e-mails and EDO sends render in a lane of their own (src/modules/rendering/
 * render-lanes.ts): public share-page requests that fill the public render queue never make an
 * attachment fail, and a background render that meets a full lane postpones its job without
 * counting an attempt. One PDF thread whose renders of `slow:` documents hold it 1.5 s
 * (test/modules/rendering/slow-pdf-worker.ts); real SMTP on loopback; SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { appEnv, doc, FAST_NOTIFICATIONS, mailTo, post, recipients, SHARE } from '../notifications/api-helpers.js';
import { startSmtpServer, waitFor, type TestSmtpServer } from '../notifications/smtp-helpers.js';

const SLOW_TASK = new URL('../rendering/slow-pdf-worker.ts', import.meta.url);
const BUYER_EDO = '2BM-7728168971-2012052808301121';

let server: TestSmtpServer;
beforeAll(async () => {
  server = await startSmtpServer();
});
afterAll(async () => server?.close());

/** A node whose workers send the e-mails, with one PDF thread, a public queue of 1 and no render cache. */
function buildNode(env: Record<string, string> = {}): Promise<TestApp> {
  return buildTestApp({
    env: { ...appEnv(server.url), INVOICING_IN_PROCESS_WORKER: 'false', INVOICING_PDF_QUEUE_MAX: '1', INVOICING_RENDER_CACHE_MB: '0', ...env },
    notifications: FAST_NOTIFICATIONS,
    pdfThreads: 1,
    pdfTaskFile: SLOW_TASK,
  });
}

/** The buyer's share PDF of a new document numbered `number`. */
async function sharePdfPath(t: TestApp, number: string): Promise<string> {
  const res = await post(t, { invoice: doc(number, { buyer: { name: 'ООО «Покупатель»', email: 'buyer@flood.example' } }) });
  expect(res.statusCode).toBe(200);
  return `${new URL(res.json().document_url as string).pathname}`;
}

/**
 * Public requests for PDFs that each hold the thread 1.5 s: one renders, one waits, the rest
 * are refused. Resolves once a refusal shows the public queue full; `done` when all answered.
 */
async function flood(t: TestApp, paths: string[]): Promise<{ refused: () => number; done: Promise<LightMyRequestResponse[]> }> {
  let refused = 0;
  const done = Promise.all(
    paths.map((path) =>
      t.app.inject({ method: 'GET', url: path, headers: { host: new URL(SHARE).host } }).then((res) => {
        if (res.statusCode === 503) {
          expect(res.json()).toMatchObject({ ok: false, error: 'render_queue_full' });
          refused++;
        }
        return res;
      }),
    ),
  );
  await waitFor(() => refused > 0, 10_000, 'the public queue full');
  return { refused: () => refused, done };
}

const outboxRow = (t: TestApp, publicId: string, kind: 'email' | 'edo_send') =>
  t.db.db.selectFrom('outbox').selectAll().where('public_id', '=', publicId).where('kind', '=', kind).executeTakeFirstOrThrow();

describe('background renders under a public flood', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('an e-mail’s attachment renders while the public queue is full, in its first attempt', async () => {
    t = await buildNode();
    const paths = await Promise.all(['slow:1500', 'slow:1501', 'slow:1502', 'slow:1503'].map((n) => sharePdfPath(t!, n)));
    const mailed = (await post(t, { invoice: doc('LANE-1', { api_recipients: recipients('lane@flood.example') }), notify_recipients: true })).json();
    // The thread started (tsx, fonts) before the flood.
    await t.app.inject({ method: 'GET', url: await sharePdfPath(t, 'LANE-WARM'), headers: { host: new URL(SHARE).host } });

    const { refused, done } = await flood(t, paths);
    const batch = await t.app.notifier.worker.runOnce();
    expect(refused()).toBeGreaterThanOrEqual(1);
    expect(batch).toMatchObject({ recorded: 1, claimed: 1, sent: 1, retrying: 0, failed: 0 });
    const row = await outboxRow(t, mailed.public_id, 'email');
    expect(row).toMatchObject({ state: 'sent', attempts: 1, last_error: null });
    await waitFor(() => mailTo(server, 'lane@flood.example').length === 1, 10_000, 'the e-mail');
    const [mail] = mailTo(server, 'lane@flood.example');
    expect(mail?.attachments.map((a) => a.contentType)).toEqual(['application/pdf']);
    await done;
  }, 60_000);

  it('a full background lane postpones the e-mail and the EDO send without counting an attempt', async () => {
    t = await buildNode({ INVOICING_PDF_BACKGROUND_QUEUE_MAX: '0' });
    const paths = await Promise.all(['slow:1500', 'slow:1501', 'slow:1502'].map((n) => sharePdfPath(t!, n)));
    const mailed = (await post(t, { invoice: doc('LANE-2', { api_recipients: recipients('later@flood.example') }), notify_recipients: true })).json();
    const synced = (await post(t, { invoice: doc('LANE-3', { buyer_edo_id: BUYER_EDO }) })).json();
    await t.app.inject({ method: 'GET', url: await sharePdfPath(t, 'LANE-WARM'), headers: { host: new URL(SHARE).host } });

    const { done } = await flood(t, paths);
    const mailBatch = await t.app.notifier.worker.runOnce();
    const edoBatch = await t.app.edo.worker.sendDue();
    expect(mailBatch).toMatchObject({ claimed: 1, sent: 0, retrying: 1, failed: 0 });
    expect(edoBatch).toMatchObject({ claimed: 1, sent: 0, retrying: 1, failed: 0 });
    for (const [publicId, kind] of [[mailed.public_id, 'email'], [synced.public_id, 'edo_send']] as const) {
      const row = await outboxRow(t, publicId, kind);
      expect(row, kind).toMatchObject({ state: 'pending', attempts: 0, last_error: null, locked_by: null });
      // Due again after the renderer's wait (2 s, ±20 %).
      const wait = Date.parse(row.next_attempt_at) - Date.parse(row.updated_at);
      expect(wait, kind).toBeGreaterThanOrEqual(1_500);
      expect(wait, kind).toBeLessThanOrEqual(2_500);
    }
    expect(mailTo(server, 'later@flood.example')).toHaveLength(0);

    // Once the flood is over, each goes in its first counted attempt.
    await done;
    await waitFor(async () => (await t!.app.notifier.worker.runOnce()).sent === 1, 15_000, 'the e-mail sent');
    expect(await outboxRow(t, mailed.public_id, 'email')).toMatchObject({ state: 'sent', attempts: 1 });
    await waitFor(async () => (await t!.app.edo.worker.sendDue()).sent === 1, 15_000, 'the EDO send');
    expect(await outboxRow(t, synced.public_id, 'edo_send')).toMatchObject({ state: 'sent', attempts: 1 });
  }, 60_000);
});

describe('the render timeout on the share routes', () => {
  it('answers 503 render_timeout with Retry-After in the error shape, and the next PDF is served', async () => {
    const t = await buildNode({ INVOICING_PDF_RENDER_TIMEOUT_MS: '1000' });
    try {
      const stuck = await sharePdfPath(t, 'slow:60000');
      const fine = await sharePdfPath(t, 'TIMEOUT-OK');
      const host = new URL(SHARE).host;
      const started = Date.now();
      const refused = await t.app.inject({ method: 'GET', url: stuck, headers: { host } });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.headers['cache-control']).toBe('no-store');
      expect(refused.json()).toMatchObject({ ok: false, error: 'render_timeout', retry_after_sec: 2 });
      expect(refused.json().details).toContain('1000 ms');
      const served = await t.app.inject({ method: 'GET', url: fine, headers: { host } });
      expect(served.statusCode).toBe(200);
      expect(served.headers['content-type']).toBe('application/pdf');
      expect(t.logs.some((line) => line.includes('PDF render stopped at its timeout'))).toBe(true);
    } finally {
      await t.close();
    }
  }, 60_000);
});
