/**
 * EDO sync through the API with the built-in sandbox operator (the default), on a clock the
 * test moves: delivery, acceptance, rejection with its notice, an unknown participant and a
 * flaky one, all read back from `metadata.edo`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdoWorker } from '../../../src/modules/edo/index.js';
import { requestHash } from '../../../src/shared/request-hash.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createOk, get, simpleDoc } from '../invoices/write-helpers.js';

const DELIVERY_MS = 5_000;
const DECISION_MS = 60_000;

let t: TestApp;
// Ahead of the app's own (system) clock: a create's send is queued at the document's
// created_at, taken from that clock, and is due once the worker's clock has reached it.
let current = new Date(Date.now() + 60_000);
const clock = { now: () => new Date(current) };
const advance = (ms: number) => {
  current = new Date(current.getTime() + ms);
};

beforeAll(async () => {
  t = await buildTestApp({
    env: { INVOICING_EDO_SANDBOX_DELIVERY_MS: String(DELIVERY_MS), INVOICING_EDO_SANDBOX_DECISION_MS: String(DECISION_MS) },
    edo: { clock, policy: { retryBaseMs: 1_000, retryMaxMs: 1_000 } },
  });
});

afterAll(async () => {
  await t?.close();
});

async function edoOf(publicId: string): Promise<Record<string, any>> {
  const res = await get(t, publicId);
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('EDO sync with the sandbox operator', () => {
  it('is the default operator, and simulates delivery, the receipt notice and acceptance', async () => {
    expect(t.config.edo.operator).toBe('sandbox');
    const created = await createOk(t, simpleDoc('SBX-1', { buyer_edo_id: '2BM-7728168971-2012052808301121' }));
    expect(created.metadata.edo).toMatchObject({ status: 'queued', operator: 'sandbox' });
    await t.app.edo.worker.sendDue();
    let body = await edoOf(created.public_id);
    expect(body.metadata.edo).toMatchObject({ status: 'sent', attempts: 1 });
    expect(body.metadata.edo.operator_document_id).toMatch(/^SBX-[0-9a-f]{24}$/);

    await t.app.edo.worker.readFeed();
    expect((await edoOf(created.public_id)).metadata.edo.status).toBe('sent');

    advance(DELIVERY_MS);
    await t.app.edo.worker.readFeed();
    body = await edoOf(created.public_id);
    expect(body.metadata.edo.status).toBe('delivered');
    expect(body.status.buyer_status).toBe('sent');
    expect(body.metadata.edo.links).toEqual([
      expect.objectContaining({ kind: 'receipt_notice', title: 'Извещение о получении', document_id: `${body.metadata.edo.operator_document_id}-IOP` }),
    ]);

    advance(DECISION_MS);
    await t.app.edo.worker.readFeed();
    body = await edoOf(created.public_id);
    expect(body.metadata.edo).toMatchObject({ status: 'accepted', accepted_at: expect.any(String), rejection_reason: null });

    // The seller's staff see it on the portal view page.
    const page = await t.call({ method: 'GET', url: new URL(created.portal_view_url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('ЭДО');
    expect(page.body).toContain('принят покупателем');
    expect(page.body).toContain('Извещение о получении');
    expect(page.body).toContain('2BM-7728168971-2012052808301121');
  });

  it('keys a job by the hash of the document as stored, so later writes compare with jobs of any version', async () => {
    const created = await createOk(t, simpleDoc('SBX-H', { buyer_edo_id: '2BM-7728168971-2012052808301121', comment: 'Ёлка «№ 1»\u2028', x_extra: [1.5, null, { b: 1, a: '2' }] }));
    const { document } = await t.db.db.selectFrom('invoices').select('document').where('public_id', '=', created.public_id).executeTakeFirstOrThrow();
    // The create recorded the send in the document's row; the worker writes its job from the row.
    expect(await t.db.db.selectFrom('edo_jobs').select('job_id').where('public_id', '=', created.public_id).execute()).toEqual([]);
    expect(await t.app.edo.service.writeRecordedSends(10)).toBeGreaterThanOrEqual(1);
    const job = await t.db.db.selectFrom('edo_jobs').selectAll().where('job_id', '=', created.metadata.edo.job_id).executeTakeFirstOrThrow();
    const { seller_status: _status, ...content } = JSON.parse(document) as Record<string, unknown>;
    expect(job.content_hash).toBe(requestHash({ content, seller: job.seller_edo_id, buyer: job.buyer_edo_id }));
  });

  it('simulates a rejection with its notice for a participant id containing REJECT', async () => {
    const created = await createOk(t, simpleDoc('SBX-2', { buyer_edo_id: '2BM-REJECT-0001' }));
    await t.app.edo.worker.sendDue();
    advance(DECISION_MS);
    await t.app.edo.worker.readFeed();
    const body = await edoOf(created.public_id);
    expect(body.metadata.edo).toMatchObject({ status: 'rejected', rejection_reason: expect.stringContaining('отклонил') });
    expect(body.metadata.edo.links.map((l: any) => l.kind).sort()).toEqual(['receipt_notice', 'rejection_notice']);
  });

  it('fails for good for a participant id containing NOTFOUND', async () => {
    const created = await createOk(t, simpleDoc('SBX-3', { buyer_edo_id: '2BM-NOTFOUND-0001' }));
    await t.app.edo.worker.sendDue();
    expect((await edoOf(created.public_id)).metadata.edo).toMatchObject({ status: 'failed', attempts: 1, last_error_code: 'participant_not_found' });
  });

  it('retries a FLAKY participant with backoff until the send goes through', async () => {
    const created = await createOk(t, simpleDoc('SBX-4', { buyer_edo_id: '2BM-FLAKY-0001' }));
    await t.app.edo.worker.sendDue();
    let edo = (await edoOf(created.public_id)).metadata.edo;
    expect(edo).toMatchObject({ status: 'queued', attempts: 1, last_error_code: 'operator_unavailable' });
    // Not due before the backoff has passed.
    expect((await t.app.edo.worker.sendDue()).claimed).toBe(0);
    advance(2_000);
    await t.app.edo.worker.sendDue();
    advance(2_000);
    await t.app.edo.worker.sendDue();
    edo = (await edoOf(created.public_id)).metadata.edo;
    expect(edo).toMatchObject({ status: 'sent', attempts: 3 });
  });

  it('the in-process worker sends a job right after the commit (woken, not polled)', async () => {
    t.app.edo.worker.start();
    try {
      const created = await createOk(t, simpleDoc('SBX-5', { buyer_edo_id: '2BM-7728168971-2012052808301121' }));
      let status = 'queued';
      for (let i = 0; i < 100 && status === 'queued'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await edoOf(created.public_id)).metadata.edo.status;
      }
      expect(status).toBe('sent');
    } finally {
      await t.app.edo.worker.stop();
    }
  });

  it('sends every due job exactly once when two workers run at the same time', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push((await createOk(t, simpleDoc(`SBX-C${i}`, { buyer_edo_id: `2BM-PAR-${i}` }))).metadata.edo.job_id);
    }
    const a = new EdoWorker(t.app.edo.service);
    const b = new EdoWorker(t.app.edo.service);
    const [ra, rb] = await Promise.all([a.sendDue(), b.sendDue()]);
    expect(ra.sent + rb.sent).toBe(6);
    const rows = await t.db.db.selectFrom('edo_sandbox_documents').select(['job_id', 'send_attempts']).where('job_id', 'in', ids).execute();
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.send_attempts === 1)).toBe(true);
    // Both read the feed at once: one holds the lease, the other reads nothing; nothing is applied twice.
    advance(DECISION_MS);
    const [fa, fb] = await Promise.all([a.readFeed(), b.readFeed()]);
    expect(Math.min(fa.applied, fb.applied)).toBe(0);
    const links = await t.db.db.selectFrom('edo_links').select('link_document_id').where('job_id', 'in', ids).execute();
    expect(links).toHaveLength(6);
  });
});
