/**
 * The background worker: retries with backoff until the server recovers, gives up visibly
 * after the last attempt, takes over lapsed leases, and never sends a row twice, whether
 * workers run side by side, in separate processes, or get killed and restarted.
 */
import { createStores } from '../../../src/stores.js';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import {
  createMailTransport,
  NotificationService,
  OutboxWorker,
  type DeliveryPolicy,
  type MailTransport,
} from '../../../src/modules/notifications/index.js';
import type { Clock } from '../../../src/shared/clock.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../../helpers/db.js';
import { childEnv, REPO_ROOT } from '../../helpers/process.js';
import { createAndDeliver, createDocument, outboxRows, seedTeams, storedInvoice, BASES } from './fixtures.js';
import { freePort, parseMail, startSmtpServer, waitFor, type TestSmtpServer } from './smtp-helpers.js';
import { documentStatusPort } from '../../../src/modules/invoices/index.js';

const TIMEOUTS = { connectionTimeoutMs: 4_000, greetingTimeoutMs: 4_000, socketTimeoutMs: 4_000 };
const POLICY: Partial<DeliveryPolicy> = {
  requestTimeoutMs: 5_000,
  attemptTimeoutMs: 5_000,
  leaseMs: 10_000,
  retryBaseMs: 60_000,
  retryMaxMs: 600_000,
  maxAttempts: 4,
  batchSize: 5,
  pollIntervalMs: 50,
};

/** The system clock plus an offset the test moves forward. */
class MovableClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

let db: TestDatabase;
const cleanup: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  db = await createTestDb();
  await seedTeams(db.db);
});
afterAll(async () => {
  await db.drop();
});
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

function serviceFor(url: string, clock: Clock, policy: Partial<DeliveryPolicy> = {}, database: Pick<DatabaseHandle, 'db' | 'dialect'> = db) {
  const transport: MailTransport = createMailTransport({ smtpUrl: url, dataDir: '/tmp/unused', timeouts: TIMEOUTS });
  cleanup.push(() => transport.close());
  return new NotificationService({ db: database.db, stores: createStores(database).notifications, clock, transport, documents: documentStatusPort, bases: BASES, mailFrom: 'invoices@billing.example', policy: { ...POLICY, ...policy } });
}

async function smtpOn(port: number): Promise<TestSmtpServer> {
  const server = await startSmtpServer({}, port);
  cleanup.push(() => server.close());
  return server;
}

/** Message-IDs received, with how many times each arrived. */
function arrivals(server: TestSmtpServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of server.received) {
    const id = parseMail(m.raw).headers.get('message-id') ?? '';
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('retries', () => {
  it('delivers once the server is back, and records the outcome on the document', async () => {
    const clock = new MovableClock();
    const port = await freePort();
    const service = serviceFor(`smtp://127.0.0.1:${port}`, clock);
    const { publicId, report } = await createAndDeliver(db.db, service, { recipients: [{ email: 'a@buyer.example' }, { email: 'b@buyer.example' }] });
    expect(report.status).toBe(207);
    expect(report.notifications.failed.map((f) => f.state)).toEqual(['retrying', 'retrying']);

    const worker = new OutboxWorker(service);
    expect((await worker.runOnce()).claimed).toBe(0); // not due yet: backoff
    const server = await smtpOn(port);
    clock.advance(5 * 60_000);
    expect(await worker.drain()).toMatchObject({ claimed: 2, sent: 2 });

    expect(server.received).toHaveLength(2);
    const rows = await outboxRows(db.db, publicId);
    expect(rows.map((r) => [r.state, r.attempts])).toEqual([
      ['sent', 2],
      ['sent', 2],
    ]);
    const stored = await storedInvoice(db.db, 'acme', publicId);
    expect(stored.buyer_status).toBe('sent');
    expect(JSON.parse(stored.notifications!)).toMatchObject({
      revision: 1,
      planned_count: 2,
      sent_count: 2,
      failed_count: 0,
      sent_to: ['a@buyer.example', 'b@buyer.example'],
      mail_runtime: { transport: 'smtp', retry_queue: 0 },
    });
  });

  it('spaces attempts exponentially and keeps the failure visible after the last one', async () => {
    const clock = new MovableClock();
    const port = await freePort();
    const service = serviceFor(`smtp://127.0.0.1:${port}`, clock, { maxAttempts: 3 });
    const { publicId } = await createAndDeliver(db.db, service, { recipients: [{ email: 'a@buyer.example' }] });
    const worker = new OutboxWorker(service);
    const gaps: number[] = [];
    let previous = clock.now().getTime();
    for (let i = 0; i < 2; i++) {
      const [row] = await outboxRows(db.db, publicId);
      const due = Date.parse(row!.next_attempt_at);
      gaps.push(due - previous);
      previous = due;
      clock.advance(due - clock.now().getTime() + 1);
      expect((await worker.runOnce()).claimed).toBe(1);
    }
    expect(gaps[0]).toBeGreaterThanOrEqual(48_000 - 50);
    expect(gaps[0]).toBeLessThanOrEqual(72_000 + 50);
    expect(gaps[1]).toBeGreaterThanOrEqual(96_000 - 50); // the second wait doubles

    const [row] = await outboxRows(db.db, publicId);
    expect(row).toMatchObject({ state: 'failed', attempts: 3, last_error_code: 'smtp_connection' });
    clock.advance(24 * 60 * 60_000);
    expect((await worker.runOnce()).claimed).toBe(0);
    const outcome = JSON.parse((await storedInvoice(db.db, 'acme', publicId)).notifications!);
    expect(outcome).toMatchObject({
      sent_count: 0,
      failed_count: 1,
      failed: [{ email: 'a@buyer.example', state: 'failed', attempts: 3, code: 'smtp_connection' }],
      mail_runtime: { retry_queue: 0 },
    });
  });
});

describe('polling', () => {
  it('picks up due e-mails on its own once started, and stops cleanly', async () => {
    const clock = new MovableClock();
    const port = await freePort();
    const service = serviceFor(`smtp://127.0.0.1:${port}`, clock);
    const { publicId } = await createAndDeliver(db.db, service, { recipients: [{ email: 'poll@buyer.example' }] });
    const server = await smtpOn(port);
    const worker = new OutboxWorker(service);
    worker.start();
    try {
      clock.advance(10 * 60_000);
      await waitFor(async () => (await outboxRows(db.db, publicId))[0]!.state === 'sent', 10_000, 'the polling worker');
    } finally {
      await worker.stop();
    }
    expect(server.received).toHaveLength(1);
  });
});

describe('leases', () => {
  it('takes over the e-mails of a request whose process died after commit, exactly once', async () => {
    const clock = new MovableClock();
    const server = await smtpOn(0);
    const service = serviceFor(server.url, clock);
    // Committed with its rows leased to the request, which never makes its attempt.
    const { publicId, pending } = await createDocument(db.db, service, { recipients: [{ email: 'a@buyer.example' }, { email: 'b@buyer.example' }] });
    const worker = new OutboxWorker(service);
    expect((await worker.runOnce()).claimed).toBe(0); // the lease still holds
    clock.advance(POLICY.leaseMs! + 1);
    expect(await worker.drain()).toMatchObject({ claimed: 2, sent: 2 });
    // The "dead" request waking up finds nothing it still holds: nothing is sent twice.
    const late = await service.deliverNow(pending);
    expect(late.notifications.sent_count).toBe(2);
    expect([...arrivals(server).values()]).toEqual([1, 1]);
    expect((await outboxRows(db.db, publicId)).map((r) => r.state)).toEqual(['sent', 'sent']);
  });

  it('does not let a worker that lost its lease send what another worker took over', async () => {
    const clock = new MovableClock();
    const port = await freePort();
    const service = serviceFor(`smtp://127.0.0.1:${port}`, clock);
    const { publicId } = await createAndDeliver(db.db, service, { recipients: [{ email: 'z@buyer.example' }] });
    clock.advance(10 * 60_000);
    const server = await smtpOn(port);
    const stale = await service.claimDue('worker-a', 10); // worker A claims, then freezes
    expect(stale.filter((r) => r.public_id === publicId)).toHaveLength(1);
    clock.advance(POLICY.leaseMs! + 1);
    const b = new OutboxWorker(service, { owner: 'worker-b' });
    expect((await b.drain()).sent).toBeGreaterThanOrEqual(1);
    for (const row of stale) expect(await service.attempt(row, 'worker-a', AbortSignal.timeout(1_000))).toBeNull();
    expect([...arrivals(server).values()].every((n) => n === 1)).toBe(true);
    expect((await outboxRows(db.db, publicId))[0]).toMatchObject({ state: 'sent', attempts: 3 }); // the request's, A's and B's
  });
});

describe('several workers on one database', () => {
  it('deliver every due e-mail exactly once when running at the same time', async () => {
    const clock = new MovableClock();
    const port = await freePort();
    const first = serviceFor(`smtp://127.0.0.1:${port}`, clock);
    const publicIds: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { publicId } = await createAndDeliver(db.db, first, { recipients: [{ email: `a${i}@buyer.example` }, { email: `b${i}@buyer.example` }] });
      publicIds.push(publicId);
    }
    const server = await smtpOn(port);
    clock.advance(10 * 60_000);
    // On PostgreSQL the second worker has its own pool, as another process would.
    let other: DatabaseHandle | null = null;
    if (usingPostgres()) {
      other = openDatabase(db.target);
      cleanup.push(() => other!.close());
    }
    const second = serviceFor(`smtp://127.0.0.1:${port}`, clock, {}, other ?? db);
    const workers = [new OutboxWorker(first), new OutboxWorker(second), new OutboxWorker(first), new OutboxWorker(second)];
    const results = await Promise.all(workers.map((w) => w.drain()));
    const notSent = (await Promise.all(publicIds.map((id) => outboxRows(db.db, id)))).flat().filter((r) => r.state !== 'sent');
    expect(notSent.map((r) => [r.state, r.last_error])).toEqual([]);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(24);
    const counts = arrivals(server);
    expect(counts.size).toBe(24);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    for (const id of publicIds) expect((await outboxRows(db.db, id)).every((r) => r.state === 'sent')).toBe(true);
  });
});

describe('worker processes', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  function startWorkerProcess(smtpUrl: string, policy: Partial<DeliveryPolicy>): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test/modules/notifications/worker-process.ts')], {
      cwd: REPO_ROOT,
      env: childEnv({ DATABASE_URL: db.url, SMTP_URL: smtpUrl, INVOICING_MAIL_FROM: 'invoices@billing.example', NOTIFY_TEST_POLICY: JSON.stringify(policy) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('ready')) resolve(child);
      });
      child.once('exit', (code) => reject(new Error(`worker process exited (${code}): ${err}`)));
    });
  }

  // Generous attempt timeouts: a client that gives up after the server took the message
  // data cannot know it was accepted and retries (at-least-once); a loaded test machine
  // must not make that happen here.
  const fast: Partial<DeliveryPolicy> = { ...POLICY, attemptTimeoutMs: 5_000, retryBaseMs: 100, retryMaxMs: 400, maxAttempts: 50, leaseMs: 8_000, pollIntervalMs: 50 };

  it('lose and duplicate nothing when one is killed during retries and the other takes over', async () => {
    const port = await freePort();
    const url = `smtp://127.0.0.1:${port}`;
    const service = serviceFor(url, new MovableClock(), fast);
    const publicIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { publicId } = await createAndDeliver(db.db, service, { recipients: [{ email: `k${i}@buyer.example` }] });
      publicIds.push(publicId);
    }
    // Two worker processes retry against the dead server; one is killed without warning in
    // the middle of it (possibly holding leases), the server comes back, the other finishes.
    const [doomed] = await Promise.all([startWorkerProcess(url, fast), startWorkerProcess(url, fast)]);
    await waitFor(
      async () => {
        const rows = await Promise.all(publicIds.map((id) => outboxRows(db.db, id)));
        return rows.flat().every((r) => r.attempts >= 3);
      },
      20_000,
      'retries in the worker processes',
    );
    doomed!.kill('SIGKILL');
    await new Promise((r) => doomed!.once('exit', r));

    const server = await smtpOn(port);
    await waitFor(
      async () => {
        const rows = await Promise.all(publicIds.map((id) => outboxRows(db.db, id)));
        return rows.flat().every((r) => r.state === 'sent');
      },
      20_000,
      'delivery after the kill',
    );
    const counts = arrivals(server);
    expect(counts.size).toBe(6);
    expect([...counts.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    for (const id of publicIds) {
      await waitFor(async () => JSON.parse((await storedInvoice(db.db, 'acme', id)).notifications!).sent_count === 1, 5_000, 'outcome');
      expect((await storedInvoice(db.db, 'acme', id)).buyer_status).toBe('sent');
    }
  }, 60_000);
});
