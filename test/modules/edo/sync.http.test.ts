/**
 * EDO sync through the API, with the HTTP connector against a real gateway on loopback that
 * fails, times out, recovers and returns incoming links: the retries and final states are read
 * back from `metadata.edo`, and buyer_status follows delivery.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EdoRetryError, HttpEdoOperator, retryFailedSync } from '../../../src/modules/edo/index.js';
import { systemClock } from '../../../src/shared/clock.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { createOk, get, post, put, simpleDoc } from '../invoices/write-helpers.js';
import { FakeGateway } from './fake-gateway.js';

const BUYER_EDO = '2BM-7728168971-2012052808301121';
const SELLER_EDO = '2BM-7707083893-2012052808301120';
const MAX_ATTEMPTS = 4;

let gateway: FakeGateway;
let t: TestApp;

beforeAll(async () => {
  gateway = await new FakeGateway().start();
  t = await buildTestApp({
    // As in production: the PDF sent to the gateway is rendered by the worker-thread pool.
    pdfThreads: 1,
    edo: {
      // The timeout is what the hanging gateway costs once; it is generous because a loaded CI
      // machine (the PDF thread starting beside the test) must never turn a quick 503 into one.
      operator: new HttpEdoOperator({ baseUrl: gateway.baseUrl, token: gateway.token, timeoutMs: 1_500 }),
      policy: { retryBaseMs: 20, retryMaxMs: 40, attemptTimeoutMs: 5_000, leaseMs: 20_000, maxAttempts: MAX_ATTEMPTS },
    },
  });
});

afterAll(async () => {
  await t?.close();
  await gateway?.stop();
});

beforeEach(() => {
  gateway.mode = { kind: 'ok' };
});

async function edoOf(publicId: string): Promise<Record<string, any>> {
  const res = await get(t, publicId);
  expect(res.statusCode).toBe(200);
  return res.json();
}

/** One worker pass after any retry delay has passed. */
async function sendDue() {
  await sleep(60);
  return t.app.edo.worker.sendDue();
}

describe('EDO sync with the HTTP connector', () => {
  it('queues a job with the document and answers with it in metadata.edo', async () => {
    const created = await createOk(t, simpleDoc('EDO-1', { buyer_edo_id: BUYER_EDO }));
    const edo = created.metadata.edo;
    expect(edo).toMatchObject({
      status: 'queued',
      operator: 'http',
      revision: 1,
      seller_edo_id: SELLER_EDO,
      buyer_edo_id: BUYER_EDO,
      attempts: 0,
      max_attempts: MAX_ATTEMPTS,
      operator_document_id: null,
      last_error: null,
      links: [],
    });
    expect(edo.job_id).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(created.metadata.seller_edo_id).toBe(SELLER_EDO);
    expect(created.metadata.buyer_edo_id).toBe(BUYER_EDO);
  });

  it('retries through failures and a timeout, recovers, then follows delivery, links and acceptance', async () => {
    const created = await createOk(t, simpleDoc('EDO-2', { buyer_edo_id: BUYER_EDO }));
    const id = created.public_id;
    const jobId = created.metadata.edo.job_id;

    gateway.mode = { kind: 'status', status: 503 };
    expect((await sendDue()).retrying).toBeGreaterThanOrEqual(1);
    let body = await edoOf(id);
    expect(body.metadata.edo).toMatchObject({ status: 'queued', attempts: 1, last_error_code: 'operator_unavailable' });
    expect(body.metadata.edo.last_error).toContain('503');
    expect(Date.parse(body.metadata.edo.next_attempt_at)).toBeGreaterThan(Date.parse(body.metadata.edo.queued_at));
    expect(body.status.buyer_status).toBe('not_sent');

    gateway.mode = { kind: 'hang' };
    await sendDue();
    body = await edoOf(id);
    expect(body.metadata.edo).toMatchObject({ status: 'queued', attempts: 2, last_error_code: 'operator_timeout' });

    gateway.mode = { kind: 'ok' };
    await sendDue();
    body = await edoOf(id);
    const doc = gateway.documentOf(jobId);
    expect(body.metadata.edo).toMatchObject({ status: 'sent', attempts: 3, operator_document_id: doc.document_id, next_attempt_at: null });
    expect(body.metadata.edo.sent_at).toEqual(expect.any(String));
    // Every attempt carried the same job id as its idempotency key: one document at the gateway.
    const attempts = gateway.sendRequests.filter((r) => r.jobId === jobId);
    expect(attempts).toHaveLength(3);
    expect(attempts.every((r) => r.idempotencyKey === jobId && r.authorization === `Bearer ${gateway.token}`)).toBe(true);
    expect([...gateway.documents.values()].filter((d) => d.job_id === jobId)).toHaveLength(1);
    expect(doc).toMatchObject({ sender: SELLER_EDO, recipient: BUYER_EDO });
    expect(doc.document).toMatchObject({ kind: 'invoice', public_id: id, revision: 1, number: 'EDO-2', total: created.totals.total.toFixed(2) });
    expect(Buffer.from(doc.file.content_base64, 'base64').subarray(0, 5).toString('latin1')).toBe('%PDF-');

    gateway.report(jobId, 'delivered', '2026-11-26T09:00:00.000Z');
    gateway.link(jobId, { document_id: 'IOP-77', kind: 'receipt_notice', title: 'Извещение о получении', date: '2026-11-26' }, '2026-11-26T09:00:01.000Z');
    gateway.link(jobId, { document_id: 'ACT-5', kind: 'act', title: 'Акт № 5', number: '5', date: '2026-11-27' }, '2026-11-26T09:30:00.000Z', false);
    await t.app.edo.worker.readFeed();
    body = await edoOf(id);
    expect(body.metadata.edo).toMatchObject({ status: 'delivered', delivered_at: '2026-11-26T09:00:00.000Z' });
    expect(body.status.buyer_status).toBe('sent');
    // In the order the operator reported them (both arrive in one feed read, often in one millisecond).
    expect(body.metadata.edo.links.map((l: any) => [l.document_id, l.kind, l.title, l.number, l.date, l.linked_at])).toEqual([
      ['IOP-77', 'receipt_notice', 'Извещение о получении', null, '2026-11-26', '2026-11-26T09:00:01.000Z'],
      ['ACT-5', 'act', 'Акт № 5', '5', '2026-11-27', '2026-11-26T09:30:00.000Z'],
    ]);

    gateway.report(jobId, 'accepted', '2026-11-26T10:00:00.000Z');
    // A late, out-of-order report never moves the state back.
    gateway.report(jobId, 'delivered', '2026-11-26T08:00:00.000Z');
    await t.app.edo.worker.readFeed();
    body = await edoOf(id);
    expect(body.metadata.edo).toMatchObject({ status: 'accepted', accepted_at: '2026-11-26T10:00:00.000Z', delivered_at: '2026-11-26T09:00:00.000Z' });
    expect(body.metadata.edo.links).toHaveLength(2);
  });

  it('reads the feed from its stored cursor: events are applied once and foreign ones skipped', async () => {
    const created = await createOk(t, simpleDoc('EDO-3', { buyer_edo_id: BUYER_EDO }));
    await sendDue();
    const jobId = created.metadata.edo.job_id;
    gateway.foreignEvent('2026-11-26T11:00:00.000Z');
    gateway.report(jobId, 'rejected', '2026-11-26T11:05:00.000Z', 'Неверная сумма');
    const before = gateway.feedRequests.length;
    await t.app.edo.worker.readFeed();
    const reads = gateway.feedRequests.slice(before);
    expect(reads[0]?.after).not.toBeNull();
    const body = await edoOf(created.public_id);
    expect(body.metadata.edo).toMatchObject({ status: 'rejected', rejection_reason: 'Неверная сумма', rejected_at: '2026-11-26T11:05:00.000Z' });
    // A rejected document was still delivered to the buyer.
    expect(body.status.buyer_status).toBe('sent');
    await t.app.edo.worker.readFeed();
    const feed = await t.db.db.selectFrom('edo_feeds').selectAll().where('feed', '=', `http:${gateway.baseUrl}`).executeTakeFirstOrThrow();
    expect(feed.cursor).toMatch(/^c\d+$/);
    expect(feed.locked_by).toBeNull();
  });

  it('gives up after max_attempts and shows the final failure', async () => {
    const created = await createOk(t, simpleDoc('EDO-4', { buyer_edo_id: BUYER_EDO }));
    gateway.mode = { kind: 'status', status: 500 };
    for (let i = 0; i < MAX_ATTEMPTS; i++) await sendDue();
    const body = await edoOf(created.public_id);
    expect(body.metadata.edo).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_error_code: 'operator_unavailable', next_attempt_at: null });
    expect(body.metadata.edo.failed_at).toEqual(expect.any(String));
    gateway.mode = { kind: 'ok' };
    expect((await sendDue()).claimed).toBe(0);
    expect(gateway.documents.has(created.metadata.edo.job_id)).toBe(false);

    // The operator fixed the gateway: `invoicing edo retry` queues the same job again.
    const retried = await retryFailedSync(t.db.db, systemClock, created.public_id);
    expect(retried).toMatchObject({ jobId: created.metadata.edo.job_id, revision: 1 });
    expect((await edoOf(created.public_id)).metadata.edo).toMatchObject({ status: 'queued', attempts: 0, failed_at: null });
    await sendDue();
    const after = await edoOf(created.public_id);
    expect(after.metadata.edo).toMatchObject({ status: 'sent', attempts: 1, job_id: created.metadata.edo.job_id });
    await expect(retryFailedSync(t.db.db, systemClock, created.public_id)).rejects.toThrow(/is sent; only a failed one is retried/);
    await expect(retryFailedSync(t.db.db, systemClock, 'no-such-doc')).rejects.toBeInstanceOf(EdoRetryError);
  });

  it('fails at once, without retries, when the operator refuses the participant', async () => {
    const created = await createOk(t, simpleDoc('EDO-5', { buyer_edo_id: '2BM-UNKNOWN-PARTICIPANT' }));
    gateway.mode = { kind: 'status', status: 422, error: 'participant_not_found' };
    await sendDue();
    const body = await edoOf(created.public_id);
    expect(body.metadata.edo).toMatchObject({ status: 'failed', attempts: 1, last_error_code: 'participant_not_found' });
  });

  it('starts nothing for a document without buyer_edo_id', async () => {
    const before = gateway.sendRequests.length;
    const created = await createOk(t, simpleDoc('EDO-6'));
    expect(created.metadata.edo).toBeNull();
    expect(created.metadata.buyer_edo_id).toBeUndefined();
    await sendDue();
    const rows = await t.db.db.selectFrom('outbox').select('id').where('public_id', '=', created.public_id).execute();
    expect(rows).toEqual([]);
    expect(await t.db.db.selectFrom('edo_jobs').select('job_id').where('public_id', '=', created.public_id).execute()).toEqual([]);
    expect(gateway.sendRequests.length).toBe(before);
    expect((await edoOf(created.public_id)).metadata.edo).toBeNull();
  });

  it('sends a changed document again, and nothing for a status change alone', async () => {
    const created = await createOk(t, simpleDoc('EDO-7', { buyer_edo_id: BUYER_EDO }));
    const first = created.metadata.edo.job_id;
    // Changed before the first job was sent: the waiting job is superseded by the new revision's.
    const changed = await put(t, created.public_id, { invoice: simpleDoc('EDO-7', { buyer_edo_id: BUYER_EDO, comment: 'исправлено' }) });
    expect(changed.statusCode).toBe(200);
    const second = changed.json().metadata.edo;
    expect(second).toMatchObject({ status: 'queued', revision: 2 });
    expect(second.job_id).not.toBe(first);
    await sendDue();
    expect(gateway.documents.has(first)).toBe(false);
    expect(gateway.documentOf(second.job_id).document).toMatchObject({ revision: 2 });

    const paid = await put(t, created.public_id, { invoice: simpleDoc('EDO-7', { buyer_edo_id: BUYER_EDO, comment: 'исправлено', seller_status: 'paid' }) });
    expect(paid.statusCode).toBe(200);
    expect(paid.json().metadata.edo).toMatchObject({ job_id: second.job_id, revision: 2, status: 'sent' });
    const jobs = await t.db.db.selectFrom('edo_jobs').select(['revision', 'status']).where('public_id', '=', created.public_id).orderBy('revision').execute();
    expect(jobs).toEqual([
      { revision: 1, status: 'superseded' },
      { revision: 2, status: 'sent' },
    ]);
  });

  it('waits while the document is a draft and starts when it is issued', async () => {
    const draft = await createOk(t, simpleDoc('EDO-8', { buyer_edo_id: BUYER_EDO, seller_status: 'draft' }));
    expect(draft.metadata.edo).toBeNull();
    const issued = await put(t, draft.public_id, { invoice: simpleDoc('EDO-8', { buyer_edo_id: BUYER_EDO, seller_status: 'issued' }) });
    expect(issued.json().metadata.edo).toMatchObject({ status: 'queued', revision: 2 });
  });

  it('shows a seller organization without an EDO id as a failed sync, never sent', async () => {
    const res = await post(t, simpleDoc('EDO-9', { buyer_edo_id: BUYER_EDO, seller: { name: 'ИП Бета', inn: '500100732259' } }), { 'x-api-key': BETA_KEY });
    expect(res.statusCode).toBe(200);
    const edo = res.json().metadata.edo;
    expect(edo).toMatchObject({ status: 'failed', seller_edo_id: null, attempts: 0, last_error_code: 'seller_edo_id_missing' });
    expect(res.json().validation.warnings).toContainEqual(expect.objectContaining({ field: 'buyer_edo_id', code: 'seller_edo_id_missing' }));
    await sendDue();
    expect(gateway.sendRequests.some((r) => r.jobId === edo.job_id)).toBe(false);
    await expect(retryFailedSync(t.db.db, systemClock, res.json().public_id)).rejects.toThrow(/has no edo_id/);
    expect((await get(t, res.json().public_id, { 'x-api-key': BETA_KEY })).json().metadata.edo.status).toBe('failed');
  });

  it('never shows another team’s sync state', async () => {
    const created = await createOk(t, simpleDoc('EDO-10', { buyer_edo_id: BUYER_EDO }));
    const res = await get(t, created.public_id, { 'x-api-key': BETA_KEY });
    expect(res.statusCode).toBe(404);
  });
});
