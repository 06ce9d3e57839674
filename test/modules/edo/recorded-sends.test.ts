/**
 * A create's EDO send is recorded in the document's own row (`invoices.edo_pending_job`) and
 * written as a job and outbox row by the worker or by the document's next update, whichever
 * comes first (docs/edo.md, "Recorded sends"). On SQLite and on PostgreSQL (DATABASE_URL).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EdoWorker } from '../../../src/modules/edo/index.js';
import { requestHash } from '../../../src/shared/request-hash.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { createOk, get, put, simpleDoc, storedRow } from '../invoices/write-helpers.js';

const BUYER = '2BM-7728168971-2012052808301121';

let t: TestApp;
// Ahead of the app's system clock: a recorded send is due from its document's created_at.
let current = new Date(Date.now() + 60_000);
const clock = { now: () => new Date(current) };

beforeAll(async () => {
  t = await buildTestApp({ edo: { clock } });
});

afterAll(async () => {
  await t?.close();
});

const jobsOf = (publicId: string) =>
  t.db.db.selectFrom('edo_jobs').selectAll().where('public_id', '=', publicId).orderBy('revision').execute();
const sendsOf = (publicId: string) =>
  t.db.db.selectFrom('outbox').selectAll().where('public_id', '=', publicId).where('kind', '=', 'edo_send').orderBy('revision').execute();

describe('recorded EDO sends', () => {
  it('a create writes no job: its row holds the job id, reads answer the state the job is then written with', async () => {
    const created = await createOk(t, simpleDoc('REC-1', { buyer_edo_id: BUYER }));
    const edo = created.metadata.edo;
    expect(edo).toMatchObject({ status: 'queued', revision: 1, attempts: 0, buyer_edo_id: BUYER });
    const row = await storedRow(t, created.public_id);
    expect(row?.edo_pending_job).toBe(edo.job_id);
    expect(await jobsOf(created.public_id)).toEqual([]);
    expect(await sendsOf(created.public_id)).toEqual([]);
    // While recorded, a read answers what the create answered.
    expect((await get(t, created.public_id)).json().metadata.edo).toEqual(edo);

    expect(await t.app.edo.service.writeRecordedSends(50)).toBeGreaterThanOrEqual(1);
    expect((await storedRow(t, created.public_id))?.edo_pending_job).toBeNull();
    const [job] = await jobsOf(created.public_id);
    const [send] = await sendsOf(created.public_id);
    expect(job).toMatchObject({ job_id: edo.job_id, revision: 1, status: 'queued', queued_at: row?.created_at, buyer_edo_id: BUYER });
    expect(send).toMatchObject({ id: edo.job_id, state: 'pending', attempts: 0, next_attempt_at: row?.created_at, idem_key: `edo:${created.public_id}:1` });
    // The content hash of the document as stored, as a create that wrote the job computed it.
    const { seller_status: _status, ...content } = JSON.parse(row!.document) as Record<string, unknown>;
    expect(job?.content_hash).toBe(requestHash({ content, seller: job?.seller_edo_id, buyer: BUYER }));
    expect(JSON.parse(send!.payload)).toMatchObject({ v: 1, recipient: BUYER, document: { publicId: created.public_id, revision: 1, number: 'REC-1' } });
    // The same state once written, and nothing to write twice.
    expect((await get(t, created.public_id)).json().metadata.edo).toEqual(edo);
    expect(await t.app.edo.service.writeRecordedSends(50)).toBe(0);

    await t.app.edo.worker.sendDue();
    expect((await get(t, created.public_id)).json().metadata.edo).toMatchObject({ job_id: edo.job_id, status: 'sent', attempts: 1 });
  });

  it('an update before the worker writes the recorded job first: a changed document supersedes it', async () => {
    const created = await createOk(t, simpleDoc('REC-2', { buyer_edo_id: BUYER }));
    const changed = await put(t, created.public_id, { invoice: simpleDoc('REC-2', { buyer_edo_id: BUYER, comment: 'исправлено' }) });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().metadata.edo).toMatchObject({ status: 'queued', revision: 2 });
    expect((await storedRow(t, created.public_id))?.edo_pending_job).toBeNull();
    expect((await jobsOf(created.public_id)).map((j) => [j.job_id === created.metadata.edo.job_id, j.revision, j.status])).toEqual([
      [true, 1, 'superseded'],
      [false, 2, 'queued'],
    ]);
  });

  it('an update that changes nothing sent keeps the recorded job (the hash from the row is the create’s)', async () => {
    const created = await createOk(t, simpleDoc('REC-3', { buyer_edo_id: BUYER }));
    const paid = await put(t, created.public_id, { invoice: simpleDoc('REC-3', { buyer_edo_id: BUYER, seller_status: 'paid' }) });
    expect(paid.statusCode).toBe(200);
    expect(paid.json().metadata.edo).toMatchObject({ job_id: created.metadata.edo.job_id, revision: 1, status: 'queued' });
    expect((await jobsOf(created.public_id)).map((j) => [j.revision, j.status])).toEqual([[1, 'queued']]);
    await t.app.edo.worker.sendDue();
    expect((await get(t, created.public_id)).json().metadata.edo).toMatchObject({ job_id: created.metadata.edo.job_id, status: 'sent' });
  });

  it('two workers at once write each recorded send once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await createOk(t, simpleDoc(`REC-C${i}`, { buyer_edo_id: `2BM-PAR-R${i}` }))).public_id);
    const a = new EdoWorker(t.app.edo.service);
    const b = new EdoWorker(t.app.edo.service);
    const [ra, rb] = await Promise.all([a.sendDue(), b.sendDue()]);
    expect(ra.recorded + rb.recorded).toBe(8);
    const jobs = await t.db.db.selectFrom('edo_jobs').select(['job_id', 'status']).where('public_id', 'in', ids).execute();
    expect(jobs).toHaveLength(8);
    expect(jobs.every((j) => j.status === 'sent')).toBe(true);
    const sandbox = await t.db.db.selectFrom('edo_sandbox_documents').select('send_attempts').where('job_id', 'in', jobs.map((j) => j.job_id)).execute();
    expect(sandbox.map((s) => s.send_attempts)).toEqual(Array(8).fill(1));
  });

  it('drops a stale record: the document was updated by a node that does not know it', async () => {
    const created = await createOk(t, simpleDoc('REC-4', { buyer_edo_id: BUYER }));
    // What a previous-release node's update leaves: a later revision, the record untouched.
    await t.db.db.updateTable('invoices').set({ revision: 2 }).where('public_id', '=', created.public_id).execute();
    // A read no longer answers the recorded state (that update planned the document's sync).
    expect((await get(t, created.public_id)).json().metadata.edo).toBeNull();
    await t.app.edo.service.writeRecordedSends(50);
    expect((await storedRow(t, created.public_id))?.edo_pending_job).toBeNull();
    expect(await jobsOf(created.public_id)).toEqual([]);
    expect(await sendsOf(created.public_id)).toEqual([]);
  });

  it('records nothing for a send refused at once (no seller participant id): its failed job is written with the document', async () => {
    const created = await createOk(t, simpleDoc('REC-5', { buyer_edo_id: BUYER, seller: { name: 'ИП Бета', inn: '500100732259' } }), { 'x-api-key': BETA_KEY });
    expect(created.metadata.edo).toMatchObject({ status: 'failed', last_error_code: 'seller_edo_id_missing' });
    expect((await storedRow(t, created.public_id))?.edo_pending_job).toBeNull();
    expect((await jobsOf(created.public_id)).map((j) => j.status)).toEqual(['failed']);
  });

  it('a record that cannot be written is undone alone and set aside; the others are written and sent', async () => {
    const broken = await createOk(t, simpleDoc('REC-6', { buyer_edo_id: BUYER }));
    const jobId = broken.metadata.edo.job_id as string;
    await t.app.edo.service.writeRecordedSends(50);
    // Its record put back: writing its job again fails in the database (the send's key), after
    // the record was taken in the same transaction.
    await t.db.db.updateTable('invoices').set({ edo_pending_job: jobId }).where('public_id', '=', broken.public_id).execute();
    const good = await createOk(t, simpleDoc('REC-7', { buyer_edo_id: BUYER }));
    const batch = await t.app.edo.worker.sendDue();
    expect(batch.recorded).toBe(1);
    expect((await storedRow(t, good.public_id))?.edo_pending_job).toBeNull();
    expect((await get(t, good.public_id)).json().metadata.edo).toMatchObject({ status: 'sent', attempts: 1 });
    // The broken one is left as it was, its one job unchanged.
    expect((await storedRow(t, broken.public_id))?.edo_pending_job).toBe(jobId);
    expect((await jobsOf(broken.public_id)).map((j) => j.job_id)).toEqual([jobId]);
    // Set aside: the next batch does not fail on it either.
    expect((await t.app.edo.worker.sendDue()).recorded).toBe(0);
  });

  it.runIf(!usingPostgres())('finds recorded sends through the partial index (SQLite plan)', async () => {
    const plan = await sql<{ detail: string }>`explain query plan select team_id, public_id, edo_pending_job from invoices
      where edo_pending_job is not null order by team_id, public_id limit 50`.execute(t.db.db);
    expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(/USING INDEX invoices_edo_pending_idx/);
  });
});
