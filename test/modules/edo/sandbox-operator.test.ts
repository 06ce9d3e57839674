/**
 * The built-in sandbox operator on a real migrated database: the recipient rules, idempotency
 * by job id, the failure hooks, and its change feed (due times, cursor paging, restarts).
 *
 * One database for the file and one manual clock that only moves forward; each test first
 * jumps a day ahead and drains the feed, so earlier tests' events never mix into its reads.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { EdoOperatorError, type EdoEvent, type EdoOutgoingDocument } from '../../../src/modules/edo/edo-operator.js';
import { SandboxEdoOperator, sandboxDocumentId } from '../../../src/modules/edo/sandbox-operator.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../../helpers/db.js';

const DELIVERY_MS = 60_000;
const DECISION_MS = 300_000;
const DAY_MS = 86_400_000;

let db: TestDatabase;
let current = new Date('2026-03-01T10:00:00.000Z');
const clock = { now: () => current };
let operator: SandboxEdoOperator;

beforeAll(async () => {
  db = await createTestDb();
  operator = new SandboxEdoOperator({ db: db.db, clock, deliveryDelayMs: DELIVERY_MS, decisionDelayMs: DECISION_MS });
});
afterAll(async () => {
  await db.drop();
});

const live = () => new AbortController().signal;
const newJobId = () => crypto.randomBytes(16).toString('hex');

function advance(ms: number): void {
  current = new Date(current.getTime() + ms);
}

function outgoing(jobId: string, recipient = '2BM-7700000001-BUYER', sender = '2BM-7700000000-SELLER'): EdoOutgoingDocument {
  return {
    jobId,
    sender,
    recipient,
    document: {
      kind: 'invoice',
      publicId: 'inv_0001',
      revision: 1,
      number: 'СЧ-1',
      date: '2026-03-01',
      currency: 'RUB',
      total: '19789.99',
      title: 'Счёт на оплату № СЧ-1 от 1 марта 2026 г.',
      seller: { name: 'ООО «Ромашка»', inn: '7700000000', kpp: '770001001' },
      buyer: { name: 'ООО «Василёк»', inn: '7700000001', kpp: null },
    },
    file: { name: 'invoice.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.7') },
  };
}

/** Jumps past every event earlier tests scheduled and returns the feed's cursor there. */
async function freshFeed(): Promise<string | null> {
  advance(DAY_MS);
  let cursor: string | null = null;
  for (;;) {
    const page = await operator.fetchEvents(cursor, 100, live());
    cursor = page.nextCursor;
    if (!page.hasMore) return cursor;
  }
}

async function caught(promise: Promise<unknown>): Promise<EdoOperatorError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EdoOperatorError);
  return error as EdoOperatorError;
}

async function storedEvents(jobId: string): Promise<string[]> {
  const rows = await db.db.selectFrom('edo_sandbox_events').select('id').where('job_id', '=', jobId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

async function storedDocument(jobId: string) {
  return db.db.selectFrom('edo_sandbox_documents').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

describe('send and the feed', () => {
  it('schedules delivered + receipt notice after the delivery delay and acceptance after the decision delay', async () => {
    let cursor = await freshFeed();
    const jobId = newJobId();
    const sentAt = current;
    const receipt = await operator.send(outgoing(jobId), live());
    const docId = `SBX-${crypto.createHash('sha256').update(jobId).digest('hex').slice(0, 24)}`;
    expect(receipt).toEqual({ operatorDocumentId: docId, status: 'sent' });
    expect(sandboxDocumentId(jobId)).toBe(docId);

    expect(await operator.fetchEvents(cursor, 10, live())).toEqual({ events: [], nextCursor: cursor, hasMore: false });
    advance(DELIVERY_MS - 1);
    expect((await operator.fetchEvents(cursor, 10, live())).events).toEqual([]);

    advance(1);
    const deliveredAt = new Date(sentAt.getTime() + DELIVERY_MS).toISOString();
    const delivered = await operator.fetchEvents(cursor, 10, live());
    expect(delivered.events).toEqual<EdoEvent[]>([
      { eventId: `${docId}:1:delivered`, jobId, operatorDocumentId: docId, at: deliveredAt, type: 'status', status: 'delivered', reason: null },
      {
        eventId: `${docId}:2:receipt`,
        jobId,
        operatorDocumentId: docId,
        at: deliveredAt,
        type: 'link',
        link: { operatorDocumentId: `${docId}-IOP`, kind: 'receipt_notice', title: 'Извещение о получении', number: null, date: deliveredAt.slice(0, 10) },
      },
    ]);
    expect(delivered.hasMore).toBe(false);
    expect(delivered.nextCursor).not.toBe(cursor);
    cursor = delivered.nextCursor;

    advance(DECISION_MS - DELIVERY_MS - 1);
    expect((await operator.fetchEvents(cursor, 10, live())).events).toEqual([]);
    advance(1);
    const decided = await operator.fetchEvents(cursor, 10, live());
    expect(decided.events).toEqual<EdoEvent[]>([
      {
        eventId: `${docId}:3:decision`,
        jobId,
        operatorDocumentId: docId,
        at: new Date(sentAt.getTime() + DECISION_MS).toISOString(),
        type: 'status',
        status: 'accepted',
        reason: null,
      },
    ]);
    expect(decided.hasMore).toBe(false);
  });

  it('lets a REJECT recipient (any case) reject with a reason and a rejection notice', async () => {
    const cursor = await freshFeed();
    const jobId = newJobId();
    const docId = sandboxDocumentId(jobId);
    const sentAt = current;
    await operator.send(outgoing(jobId, '2BM-7700000002-Reject-me'), live());
    advance(DECISION_MS);
    const decidedAt = new Date(sentAt.getTime() + DECISION_MS).toISOString();
    const page = await operator.fetchEvents(cursor, 10, live());
    expect(page.events.map((e) => e.eventId)).toEqual([`${docId}:1:delivered`, `${docId}:2:receipt`, `${docId}:3:decision`, `${docId}:4:rejection`]);
    expect(page.events.slice(2)).toEqual<EdoEvent[]>([
      {
        eventId: `${docId}:3:decision`,
        jobId,
        operatorDocumentId: docId,
        at: decidedAt,
        type: 'status',
        status: 'rejected',
        reason: 'Покупатель отклонил документ (sandbox)',
      },
      {
        eventId: `${docId}:4:rejection`,
        jobId,
        operatorDocumentId: docId,
        at: decidedAt,
        type: 'link',
        link: { operatorDocumentId: `${docId}-UOU`, kind: 'rejection_notice', title: 'Уведомление об уточнении', number: null, date: decidedAt.slice(0, 10) },
      },
    ]);
  });

  it('decides no earlier than delivery when the decision delay is the shorter one', async () => {
    const cursor = await freshFeed();
    const quick = new SandboxEdoOperator({ db: db.db, clock, deliveryDelayMs: DELIVERY_MS, decisionDelayMs: 0 });
    const jobId = newJobId();
    const docId = sandboxDocumentId(jobId);
    await quick.send(outgoing(jobId), live());
    advance(DELIVERY_MS - 1);
    expect((await quick.fetchEvents(cursor, 10, live())).events).toEqual([]);
    advance(1);
    const page = await quick.fetchEvents(cursor, 10, live());
    expect(page.events.map((e) => [e.eventId, e.at])).toEqual([
      [`${docId}:1:delivered`, current.toISOString()],
      [`${docId}:2:receipt`, current.toISOString()],
      [`${docId}:3:decision`, current.toISOString()],
    ]);
  });
});

describe('recipient rules and idempotency', () => {
  it('refuses a NOTFOUND recipient for good and keeps no trace of it', async () => {
    const jobId = newJobId();
    const error = await caught(operator.send(outgoing(jobId, '2BM-notfound-1'), live()));
    expect(error).toMatchObject({ code: 'participant_not_found', permanent: true });
    expect(error.message).toContain('sandbox: no participant 2BM-notfound-1');
    expect(await storedDocument(jobId)).toBeUndefined();
  });

  it('fails a FLAKY recipient twice per job id, then accepts it under the same document id', async () => {
    await freshFeed();
    const jobId = newJobId();
    const doc = outgoing(jobId, '2BM-Flaky-Buyer');
    for (const attempt of [1, 2]) {
      const error = await caught(operator.send(doc, live()));
      expect(error).toMatchObject({ code: 'operator_unavailable', permanent: false });
      expect(await storedDocument(jobId)).toMatchObject({ send_attempts: attempt, accepted: 0 });
      expect(await storedEvents(jobId)).toEqual([]);
    }
    const receipt = await operator.send(doc, live());
    expect(receipt).toEqual({ operatorDocumentId: sandboxDocumentId(jobId), status: 'sent' });
    expect(await storedDocument(jobId)).toMatchObject({ send_attempts: 3, accepted: 1, document_id: sandboxDocumentId(jobId) });
    expect(await storedEvents(jobId)).toHaveLength(3);
    // Another job of the same recipient starts its own count.
    await expect(operator.send(outgoing(newJobId(), '2BM-Flaky-Buyer'), live())).rejects.toMatchObject({ code: 'operator_unavailable' });
  });

  it('answers a repeated job id with the first receipt and schedules nothing again', async () => {
    const cursor = await freshFeed();
    const jobId = newJobId();
    const first = await operator.send(outgoing(jobId), live());
    advance(10_000);
    const second = await operator.send(outgoing(jobId), live());
    expect(second).toEqual(first);
    expect(await storedEvents(jobId)).toHaveLength(3);
    advance(DECISION_MS);
    const page = await operator.fetchEvents(cursor, 10, live());
    expect(page.events.map((e) => e.eventId)).toEqual([
      `${first.operatorDocumentId}:1:delivered`,
      `${first.operatorDocumentId}:2:receipt`,
      `${first.operatorDocumentId}:3:decision`,
    ]);
    // Times come from the first send, not the repeat.
    expect(page.events[0]?.at).toBe(new Date(current.getTime() - DECISION_MS - 10_000 + DELIVERY_MS).toISOString());
  });

  it('gives concurrent sends of one job id from two nodes one document and one set of events', async () => {
    // Another node's pool on PostgreSQL. SQLite's driver is synchronous, so a second
    // connection in this process would block the event loop on the write lock; there the
    // one connection serializes, as it does in production.
    const other: DatabaseHandle = usingPostgres() ? openDatabase(db.target) : db;
    try {
      const node2 = new SandboxEdoOperator({ db: other.db, clock, deliveryDelayMs: DELIVERY_MS, decisionDelayMs: DECISION_MS });
      const jobId = newJobId();
      const receipts = await Promise.all([operator, node2, operator, node2].map((op) => op.send(outgoing(jobId), live())));
      expect(new Set(receipts.map((r) => r.operatorDocumentId))).toEqual(new Set([sandboxDocumentId(jobId)]));
      expect(await storedDocument(jobId)).toMatchObject({ send_attempts: 4, accepted: 1 });
      expect(await storedEvents(jobId)).toHaveLength(3);
    } finally {
      if (other !== db) await other.close();
    }
  });

  it('refuses a job id reused for another recipient or sender, leaving the first document as it was', async () => {
    const jobId = newJobId();
    await operator.send(outgoing(jobId), live());
    const before = await storedDocument(jobId);
    for (const doc of [outgoing(jobId, '2BM-7700000009-OTHER'), outgoing(jobId, undefined, '2BM-7700000009-OTHER')]) {
      const error = await caught(operator.send(doc, live()));
      expect(error).toMatchObject({ code: 'operator_rejected', permanent: true, message: 'sandbox: job id reused for another document' });
    }
    expect(await storedDocument(jobId)).toEqual(before);
    expect(await storedEvents(jobId)).toHaveLength(3);
  });

  it('refuses ids longer than its columns on both databases alike', async () => {
    const error = await caught(operator.send(outgoing('x'.repeat(33)), live()));
    expect(error).toMatchObject({ code: 'operator_rejected', permanent: true });
    await expect(operator.send(outgoing(newJobId(), 'R'.repeat(47)), live())).rejects.toMatchObject({ code: 'operator_rejected' });
  });
});

describe('failure hooks', () => {
  it('throws injected send failures for the next calls only, retryable by default', async () => {
    operator.injectSendFailures(2);
    const jobId = newJobId();
    for (let i = 0; i < 2; i += 1) {
      const error = await caught(operator.send(outgoing(jobId), live()));
      expect(error).toMatchObject({ code: 'operator_unavailable', permanent: false, message: 'sandbox: injected failure' });
    }
    expect(await storedDocument(jobId)).toBeUndefined();
    await expect(operator.send(outgoing(jobId), live())).resolves.toMatchObject({ status: 'sent' });

    operator.injectSendFailures(1, { code: 'operator_auth_failed', permanent: true, message: 'bad key' });
    const error = await caught(operator.send(outgoing(newJobId()), live()));
    expect(error).toMatchObject({ code: 'operator_auth_failed', permanent: true, message: 'bad key' });
  });

  it('throws injected feed failures, then reads normally', async () => {
    const cursor = await freshFeed();
    operator.injectFeedFailures(1);
    const error = await caught(operator.fetchEvents(cursor, 10, live()));
    expect(error).toMatchObject({ code: 'operator_unavailable', permanent: false });
    expect(await operator.fetchEvents(cursor, 10, live())).toEqual({ events: [], nextCursor: cursor, hasMore: false });
  });

  it('makes sends slow, and an abort ends the wait with a retryable timeout before anything is stored', async () => {
    operator.delaySends(30);
    try {
      const started = Date.now();
      await operator.send(outgoing(newJobId()), live());
      expect(Date.now() - started).toBeGreaterThanOrEqual(25);

      operator.delaySends(60_000);
      const controller = new AbortController();
      const jobId = newJobId();
      const pending = operator.send(outgoing(jobId), controller.signal);
      setTimeout(() => controller.abort(), 20);
      const error = await caught(pending);
      expect(error).toMatchObject({ code: 'operator_timeout', permanent: false });
      expect(await storedDocument(jobId)).toBeUndefined();

      const aborted = new AbortController();
      aborted.abort();
      await expect(operator.send(outgoing(newJobId()), aborted.signal)).rejects.toMatchObject({ code: 'operator_timeout' });
    } finally {
      operator.delaySends(0);
    }
  });
});

describe('feed cursor', () => {
  it('pages one event at a time through every due event in order; a cursor read twice gives the same', async () => {
    const start = await freshFeed();
    const jobs = [newJobId(), newJobId(), newJobId()];
    await operator.send(outgoing(jobs[0] as string), live());
    await operator.send(outgoing(jobs[1] as string, '2BM-REJECT'), live());
    advance(1_000);
    await operator.send(outgoing(jobs[2] as string), live());
    advance(DECISION_MS + 1_000);

    const all = await operator.fetchEvents(start, 100, live());
    expect(all.events).toHaveLength(10);
    expect(all.hasMore).toBe(false);
    const order = all.events.map((e) => `${e.at}|${e.eventId}`);
    expect(order).toEqual([...order].sort());

    const paged: EdoEvent[] = [];
    let cursor = start;
    for (;;) {
      const page = await operator.fetchEvents(cursor, 1, live());
      const again = await operator.fetchEvents(cursor, 1, live());
      expect(again).toEqual(page);
      paged.push(...page.events);
      if (page.events.length === 0) {
        expect(page).toEqual({ events: [], nextCursor: cursor, hasMore: false });
        break;
      }
      expect(page.hasMore).toBe(paged.length < all.events.length);
      cursor = page.nextCursor;
    }
    expect(paged).toEqual(all.events);
    expect(cursor).toBe(all.nextCursor);
  });

  it('lets another instance on the same database continue the feed and the mailbox (restart)', async () => {
    const start = await freshFeed();
    const jobs = [newJobId(), newJobId()];
    const receipts = [];
    for (const jobId of jobs) receipts.push(await operator.send(outgoing(jobId), live()));
    advance(DECISION_MS);
    const first = await operator.fetchEvents(start, 4, live());
    expect(first.hasMore).toBe(true);

    // A new process: its own connection, its own in-memory state.
    const other: DatabaseHandle = openDatabase(db.target);
    try {
      const restarted = new SandboxEdoOperator({ db: other.db, clock, deliveryDelayMs: DELIVERY_MS, decisionDelayMs: DECISION_MS });
      const rest = await restarted.fetchEvents(first.nextCursor, 100, live());
      expect(rest.hasMore).toBe(false);
      const whole = await restarted.fetchEvents(start, 100, live());
      expect([...first.events, ...rest.events]).toEqual(whole.events);
      expect(whole.events).toHaveLength(6);
      expect(await restarted.send(outgoing(jobs[0] as string), live())).toEqual(receipts[0]);
      expect(await storedEvents(jobs[0] as string)).toHaveLength(3);
    } finally {
      await other.close();
    }
  });

  it('refuses a malformed cursor as a protocol error', async () => {
    const error = await caught(operator.fetchEvents('garbage', 10, live()));
    expect(error).toMatchObject({ code: 'operator_protocol_error', permanent: true });
  });
});
