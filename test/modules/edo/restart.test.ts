/**
 * A restart loses no EDO job: real `invoicing serve` / `invoicing worker` processes on one
 * database, the HTTP connector against the fake gateway in this process, processes killed
 * with SIGKILL mid-attempt and mid-backoff, then taken over by the next process.
 *
 * Leases (2 min at least, see createEdo) and retry backoff (30 s base) are far longer than a
 * test may wait, so "time passes" is simulated by moving the dead process's lease or the retry
 * time into the past in the database; nothing else is touched behind the processes' back.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDb, type TestDatabase } from '../../helpers/db.js';
import { ACME_KEY, bootstrapFixture } from '../../helpers/fixtures.js';
import { childEnv, freePort, invoicingArgs, REPO_ROOT, ServiceProcess, startService } from '../../helpers/process.js';
import { simpleDoc } from '../invoices/write-helpers.js';
import { FakeGateway } from './fake-gateway.js';

// Real processes on a loaded 2-core machine: generous limits, poll loops instead of sleeps.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 90_000 });

const BUYER_EDO_ID = '2BM-7728168971-2012052808301121';
const RECEIPT_NOTICE = { document_id: 'GW-RN-1', kind: 'receipt_notice', title: 'Извещение о получении', number: null, date: '2026-03-03' };

let db: TestDatabase;
let tmp: string;
let bootstrapFile: string;
const processes: ServiceProcess[] = [];
const gateways: FakeGateway[] = [];

beforeAll(async () => {
  db = await createTestDb();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-edo-restart-'));
  bootstrapFile = path.join(tmp, 'bootstrap.json');
  fs.writeFileSync(bootstrapFile, JSON.stringify(bootstrapFixture()));
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await Promise.all(gateways.map((g) => g.stop()));
  await db?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function edoEnv(gatewayUrl: string, token: string): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    INVOICING_EDO_OPERATOR: 'http',
    INVOICING_EDO_URL: gatewayUrl,
    INVOICING_EDO_TOKEN: token,
    // Long enough that a hanging call is still under way when the process is killed.
    INVOICING_EDO_TIMEOUT_MS: '20000',
    INVOICING_EDO_POLL_INTERVAL_MS: '200',
    INVOICING_EDO_MAX_ATTEMPTS: '10',
    // The polls read the document every 100 ms from 127.0.0.1, whose per-IP limit is 10 a
    // second by default (counted in the shared Redis, with every other process on it): once a
    // GET took under a few milliseconds, a create and ten polls fell into one second (429).
    INVOICING_IP_RATE_PER_SEC: '1000',
  };
}

async function serve(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await startService({ ...env, INVOICING_BOOTSTRAP_FILE: bootstrapFile });
  processes.push(service);
  await service.waitUntilHealthy();
  return service;
}

/** `invoicing worker` (runs until a signal, so spawned rather than run with runCli). */
function startWorker(env: Record<string, string>): ServiceProcess {
  const args = invoicingArgs(['worker']);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const worker = new ServiceProcess(child, 0);
  processes.push(worker);
  return worker;
}

/** Polls `probe` until it returns a value other than undefined/false; fails early if `proc` dies. */
async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, proc?: ServiceProcess, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (proc && !proc.running) throw new Error(`the process exited while waiting for ${what}:\n${proc.stderr}${proc.stdout}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${proc ? `:\n${proc.stderr}` : ''}`);
    await sleep(100);
  }
}

async function createDocument(service: ServiceProcess, number: string): Promise<string> {
  const res = await fetch(`${service.baseUrl}/api/v1/invoices`, {
    method: 'POST',
    headers: { 'x-api-key': ACME_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ invoice: simpleDoc(number, { buyer_edo_id: BUYER_EDO_ID }) }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { public_id: string }).public_id;
}

async function readDocument(service: ServiceProcess, publicId: string): Promise<Record<string, any>> {
  const res = await fetch(`${service.baseUrl}/api/v1/invoices/${encodeURIComponent(publicId)}`, { headers: { 'x-api-key': ACME_KEY } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

const jobOf = (publicId: string) =>
  db.db.selectFrom('edo_jobs').selectAll().where('team_id', '=', 'acme').where('public_id', '=', publicId).executeTakeFirstOrThrow();
const outboxRowOf = (jobId: string) =>
  db.db.selectFrom('outbox').selectAll().where('team_id', '=', 'acme').where('id', '=', jobId).executeTakeFirstOrThrow();
const aSecondAgo = () => new Date(Date.now() - 1_000).toISOString();

/** Simulated elapsed time: the feed lease a killed reader may have left lapses (no one else runs now). */
async function expireFeedLease(gatewayUrl: string): Promise<void> {
  await db.db.updateTable('edo_feeds').set({ locked_until: aSecondAgo() }).where('feed', '=', `http:${gatewayUrl}`).where('locked_by', 'is not', null).execute();
}

describe('a service killed while a send is under way', () => {
  it('keeps the job, and the restarted service takes it over once the lease lapses, sends it once and reads its news', async () => {
    const gateway = await new FakeGateway().start();
    gateways.push(gateway);
    gateway.mode = { kind: 'hang' };
    const env = edoEnv(gateway.baseUrl, gateway.token);

    const first = await serve(env);
    const publicId = await createDocument(first, 'R-1');
    const { jobId } = await until('the first send request', () => gateway.sendRequests[0], first);
    expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // Not lost, not failed: still claimed by the dead process, its lease running.
    expect(await jobOf(publicId)).toMatchObject({ job_id: jobId, status: 'queued' });
    const orphaned = await outboxRowOf(jobId);
    expect(orphaned).toMatchObject({ kind: 'edo_send', state: 'sending', attempts: 1, last_error: null });
    expect(orphaned.locked_by).toBeTruthy();
    expect(orphaned.locked_until! > new Date().toISOString()).toBe(true);

    gateway.mode = { kind: 'ok' };
    await expireFeedLease(gateway.baseUrl);
    const second = await serve(env);
    // While the dead process's lease holds (its call might still land), nobody sends again:
    // the worker polls sends every 2 s, so this covers at least one poll after the start.
    await sleep(3_000);
    expect(gateway.sendRequests).toHaveLength(1);
    expect((await readDocument(second, publicId)).metadata.edo).toMatchObject({ status: 'queued', attempts: 1 });

    // Simulated elapsed time: the dead process's lease lapses.
    await db.db.updateTable('outbox').set({ locked_until: aSecondAgo() }).where('team_id', '=', 'acme').where('id', '=', jobId).where('locked_by', '=', orphaned.locked_by).execute();
    const sent = await until('metadata.edo.status = sent', async () => {
      const edo = (await readDocument(second, publicId)).metadata.edo;
      return edo.status === 'sent' && edo;
    }, second);

    const stored = gateway.documentOf(jobId);
    expect(gateway.documents.size).toBe(1);
    expect(sent).toMatchObject({ job_id: jobId, operator: 'http', operator_document_id: stored.document_id, attempts: 2, last_error: null, next_attempt_at: null });
    expect(gateway.sendRequests.map((r) => [r.jobId, r.idempotencyKey])).toEqual([[jobId, jobId], [jobId, jobId]]);
    expect(stored).toMatchObject({ sender: '2BM-7707083893-2012052808301120', recipient: BUYER_EDO_ID });

    gateway.report(jobId, 'delivered', '2026-03-03T09:00:00Z');
    gateway.link(jobId, RECEIPT_NOTICE, '2026-03-03T09:00:01Z');
    const delivered = await until('delivery and the link through the feed', async () => {
      const doc = await readDocument(second, publicId);
      return doc.metadata.edo.status === 'delivered' && doc.metadata.edo.links.length === 1 && doc;
    }, second);
    expect(delivered.metadata.edo).toMatchObject({ delivered_at: '2026-03-03T09:00:00.000Z', operator_document_id: stored.document_id });
    expect(delivered.metadata.edo.links).toEqual([{ ...RECEIPT_NOTICE, linked_at: '2026-03-03T09:00:01.000Z', received_at: expect.any(String) }]);
    expect(delivered.status.buyer_status).toBe('sent');
    expect(gateway.documents.size).toBe(1);
    // Every worker on the database must speak to the same operator: this one stops here.
    expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(second.stderr).toBe('');
  });
});

describe('a standalone `invoicing worker`', () => {
  it('sends a job left waiting for its retry by a killed service, and applies the feed, with no server running', async () => {
    // No process of the first case may still run (a failed case leaves its service up): every
    // worker on the database would otherwise claim this job for its own gateway.
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    // The gateway is down at first: the service's immediate attempt fails (connection refused).
    const port = await freePort();
    const gateway = new FakeGateway();
    gateways.push(gateway);
    const gatewayUrl = `http://127.0.0.1:${port}`;
    const env = edoEnv(gatewayUrl, gateway.token);

    const service = await serve(env);
    const publicId = await createDocument(service, 'R-2');
    const waiting = await until('the failed first attempt', async () => {
      const edo = (await readDocument(service, publicId)).metadata.edo;
      return edo.attempts === 1 && edo.last_error_code !== null && edo;
    }, service);
    expect(waiting).toMatchObject({ status: 'queued', last_error_code: 'operator_unreachable', next_attempt_at: expect.any(String) });
    expect(await service.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    const { job_id: jobId } = await jobOf(publicId);
    expect(await outboxRowOf(jobId)).toMatchObject({ state: 'pending', attempts: 1, locked_by: null, next_attempt_at: waiting.next_attempt_at });
    // Simulated elapsed time: the retry falls due (and a feed lease the kill may have left lapses).
    await db.db.updateTable('outbox').set({ next_attempt_at: aSecondAgo() }).where('team_id', '=', 'acme').where('id', '=', jobId).execute();
    await expireFeedLease(gatewayUrl);

    await gateway.start(port);
    const worker = startWorker(env);
    await until('the document at the gateway', () => gateway.documents.get(jobId), worker);
    await until('the job recorded as sent', async () => (await jobOf(publicId)).status === 'sent', worker);

    gateway.report(jobId, 'delivered', '2026-03-03T10:00:00Z');
    gateway.link(jobId, RECEIPT_NOTICE, '2026-03-03T10:00:01Z');
    await until('delivery through the feed', async () => (await jobOf(publicId)).status === 'delivered', worker);
    await until('the link through the feed', async () => {
      const links = await db.db.selectFrom('edo_links').selectAll().where('team_id', '=', 'acme').where('public_id', '=', publicId).execute();
      return links.length === 1 && links;
    }, worker);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(worker.stderr).toBe('');

    const stored = gateway.documentOf(jobId);
    expect(gateway.documents.size).toBe(1);
    expect(gateway.sendRequests).toEqual([{ jobId, idempotencyKey: jobId, authorization: `Bearer ${gateway.token}` }]);
    expect(await jobOf(publicId)).toMatchObject({ status: 'delivered', operator_document_id: stored.document_id, delivered_at: '2026-03-03T10:00:00.000Z' });
    expect(await outboxRowOf(jobId)).toMatchObject({ state: 'sent', attempts: 2, locked_by: null, last_error: null });
    const invoice = await db.db.selectFrom('invoices').select('buyer_status').where('team_id', '=', 'acme').where('public_id', '=', publicId).executeTakeFirstOrThrow();
    expect(invoice.buyer_status).toBe('sent');
  });
});
