/**
 * PostgreSQL: the e-mails of the daily quota a node holds (src/modules/notifications/store/postgres-held-quota.ts;
 * docs/notifications.md, "Held e-mails"). What a node holds is reserved in the quota rows, so the
 * day never passes the limit across nodes; what it did not use goes back when it idles, when the
 * limit changes and when it closes; a create whose statement wrote nothing gives its e-mails back.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { BLOCK_MAX, blockSize, HeldQuota, IDLE_MS } from '../../../src/modules/notifications/store/postgres-held-quota.js';
import type { HeldTake } from '../../../src/modules/notifications/index.js';
import { utcDay } from '../../../src/modules/notifications/store/portable.js';
import { reservedOn, reserveEmails } from '../../helpers/quota.js';
import { systemClock, type Clock } from '../../../src/shared/clock.js';
import type { TestApp } from '../../helpers/app.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../../helpers/db.js';
import { bootstrapFixture } from '../../helpers/fixtures.js';
import { buildWorkerNode, doc, post, recipients } from './api-helpers.js';

const failed: unknown[] = [];
const onError = (err: unknown): void => void failed.push(err);

/** A clock the test moves. */
function testClock(start: string): Clock & { advance(ms: number): void } {
  let t = Date.parse(start);
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/** Takes one e-mail from `held`, or reserves it in a transaction of its own as a create's statement would: whether it was let through. */
async function letOneThrough(held: HeldQuota, db: DatabaseHandle, team: string, day: string, limit: number): Promise<boolean> {
  if (held.take(team, day, limit, 1) !== null) return true;
  return (await db.db.transaction().execute((trx) => reserveEmails(trx, team, day, limit, 1, new Date().toISOString()))) === 1;
}

describe.skipIf(!usingPostgres())('held e-mails of the daily quota (PostgreSQL)', () => {
  let db: TestDatabase;
  let second: DatabaseHandle;

  beforeAll(async () => {
    db = await createTestDb();
    second = openDatabase(db.target);
  });
  afterAll(async () => {
    await second?.close();
    await db?.drop();
    expect(failed).toEqual([]);
  });

  it('sizes blocks by the limit: none below 1,024 a day, at most BLOCK_MAX', () => {
    expect([0, 50, 1023, 1024, 20_000, 65_536, 2_000_000_000].map(blockSize)).toEqual([0, 0, 0, 1, 19, BLOCK_MAX, BLOCK_MAX]);
  });

  it('takes nothing and writes nothing for a limit without blocks', async () => {
    const held = new HeldQuota(db.db, systemClock, onError);
    expect(held.take('small', '2026-02-01', 1023, 1)).toBeNull();
    await held.close();
    expect(await reservedOn(db.db, 'small', '2026-02-01')).toBe(0);
  });

  it('lets e-mails through from blocks reserved in the rows, and gives back what is unused on close', async () => {
    const day = '2026-02-02';
    const limit = 100_000;
    const held = new HeldQuota(db.db, systemClock, onError);
    let fromHeld = 0;
    let exact = 0;
    for (let i = 0; i < 300; i++) {
      if (held.take('big', day, limit, 1) !== null) fromHeld++;
      else if (await letOneThrough(held, db, 'big', day, limit)) exact++;
      // As creates come: a block request finishes while others run.
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    expect(fromHeld + exact).toBe(300);
    // Most came from blocks: a block request per 64 e-mails, not a row write per e-mail (most of
    // the rest while the first block was on its way; a slow machine makes that longer).
    expect(fromHeld).toBeGreaterThan(150);
    const holding = held.heldFor('big', day);
    expect(holding).toBeGreaterThan(0);
    expect(holding).toBeLessThan(1.5 * BLOCK_MAX);
    // What the node holds is reserved in the rows: the day counts it as taken (once a block
    // request under way has come back).
    await waitUntil(async () => (await reservedOn(db.db, 'big', day)) === 300 + held.heldFor('big', day));
    await held.close();
    expect(held.heldFor('big', day)).toBe(0);
    expect(await reservedOn(db.db, 'big', day)).toBe(300);
  });

  it('never lets more than the limit through from two nodes, and what they held goes back for the rest', async () => {
    const day = '2026-02-03';
    const limit = 2048; // blocks of 2, shares of 128
    const nodes = [new HeldQuota(db.db, systemClock, onError), new HeldQuota(second.db, systemClock, onError)];
    const handles = [db, second];
    let granted = 0;
    // Waves of concurrent creates from both nodes, more than the limit in all.
    for (let wave = 0; wave < 25; wave++) {
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => letOneThrough(nodes[i % 2]!, handles[i % 2]!, 'edge', day, limit)));
      granted += results.filter(Boolean).length;
      expect(await reservedOn(db.db, 'edge', day)).toBeLessThanOrEqual(limit);
    }
    expect(granted).toBeLessThanOrEqual(limit);
    expect(granted).toBeGreaterThan(limit - 2 * 3);
    for (const node of nodes) await node.close();
    // Nothing held any more: the rows count exactly what was let through, and the rest of the day is there.
    expect(await reservedOn(db.db, 'edge', day)).toBe(granted);
    const rest = await db.db.transaction().execute((trx) => reserveEmails(trx, 'edge', day, limit, limit, new Date().toISOString()));
    expect(granted + rest).toBe(limit);
  });

  it('holds again what a create took when its statement wrote nothing', async () => {
    const day = '2026-02-04';
    const held = new HeldQuota(db.db, systemClock, onError);
    expect(held.take('back', day, 100_000, 1)).toBeNull();
    await waitUntil(() => held.heldFor('back', day) === BLOCK_MAX);
    const taken = held.take('back', day, 100_000, 3) as HeldTake;
    expect(taken).toMatchObject({ count: 3 });
    expect(held.heldFor('back', day)).toBe(BLOCK_MAX - 3);
    held.giveBack(taken);
    expect(held.heldFor('back', day)).toBe(BLOCK_MAX);
    await held.close();
    expect(await reservedOn(db.db, 'back', day)).toBe(0);
  });

  it('gives back what was held unused for IDLE_MS, what was held for a past day, and what a changed limit makes stale', async () => {
    const clock = testClock('2026-02-05T23:59:20Z');
    const held = new HeldQuota(db.db, clock, onError);
    const day = '2026-02-05';
    held.take('idle', day, 100_000, 1);
    held.take('stale', day, 100_000, 1);
    await waitUntil(() => held.heldFor('idle', day) === BLOCK_MAX && held.heldFor('stale', day) === BLOCK_MAX);
    expect(await reservedOn(db.db, 'idle', day)).toBe(BLOCK_MAX);

    // A changed limit: what was reserved under the old one goes back, and a new block comes.
    expect(held.take('stale', day, 200_000, 1)).toBeNull();
    await waitUntil(async () => held.heldFor('stale', day) === BLOCK_MAX && (await reservedOn(db.db, 'stale', day)) === BLOCK_MAX);

    // Still in use within IDLE_MS: kept.
    clock.advance(IDLE_MS - 1_000);
    expect(held.take('stale', day, 200_000, 1)).not.toBeNull();
    held.sweep();
    expect(held.heldFor('idle', day)).toBe(BLOCK_MAX);
    clock.advance(1_000);
    held.sweep();
    expect(held.heldFor('idle', day)).toBe(0);
    await waitUntil(async () => (await reservedOn(db.db, 'idle', day)) === 0);
    expect(held.heldFor('stale', day)).toBe(BLOCK_MAX - 1);

    // Past midnight (UTC), the day's blocks go back however recently used.
    clock.advance(25_000);
    expect(utcDay(clock.now())).toBe('2026-02-06');
    held.sweep();
    expect(held.heldFor('stale', day)).toBe(0);
    await waitUntil(async () => (await reservedOn(db.db, 'stale', day)) === 1);
    await held.close();
  });
});

describe.skipIf(!usingPostgres())('e-mailed creates on two API nodes with held e-mails (PostgreSQL)', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  const bootstrap = bootstrapFixture();
  bootstrap.tariffs.basic.emails_per_day = 100_000;

  beforeAll(async () => {
    db = await createTestDb();
    a = await buildWorkerNode('smtp://127.0.0.1:9', { bootstrap, db });
    const node: TestDatabase = { ...openDatabase(db.target), target: db.target, url: db.url, drop: async () => undefined };
    b = await buildWorkerNode('smtp://127.0.0.1:9', { bootstrap: null, db: node });
  });
  /** The test closes the nodes itself, to see what they give back. */
  let closedByTest = false;
  afterAll(async () => {
    if (!closedByTest) {
      await b?.close();
      await a?.close();
    }
    await b?.db.close();
    await db?.drop();
  });

  it('counts in the rows exactly the e-mails of the documents stored, once both nodes are closed', async () => {
    const day = utcDay(new Date());
    const created: string[] = [];
    for (let wave = 0; wave < 4; wave++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post(i % 2 ? a : b, { invoice: doc(`HELD-${wave}-${i}`, { api_recipients: recipients(`r${i}@buyer.example`) }), notify_recipients: true }),
        ),
      );
      for (const res of answers) {
        expect(res.statusCode).toBe(207);
        expect(res.json().notifications).toMatchObject({ planned_count: 1, blocked_by_service_gate: false, failed: [{ state: 'retrying' }] });
        created.push(res.json().public_id);
      }
    }
    const holding = (): number => a.app.notifier.service.heldFor('acme', day) + b.app.notifier.service.heldFor('acme', day);
    expect(holding()).toBeGreaterThan(0);
    await waitUntil(async () => (await reservedOn(db.db, 'acme', day)) === created.length + holding());

    // A create whose statement the server rejects writes nothing: its e-mail is held again.
    await sql`create function held_test_refuse() returns trigger language plpgsql as $$
      begin if new.number = 'HELD-REFUSED' then raise exception 'refused by the test'; end if; return new; end $$`.execute(a.db.db);
    await sql`create trigger held_test_refuse before insert on invoices for each row execute function held_test_refuse()`.execute(a.db.db);
    const before = a.app.notifier.service.heldFor('acme', day);
    expect(before).toBeGreaterThan(0);
    const refused = await post(a, { invoice: doc('HELD-REFUSED', { api_recipients: recipients('x@buyer.example') }), notify_recipients: true });
    expect(refused.statusCode).toBe(500);
    expect(a.app.notifier.service.heldFor('acme', day)).toBe(before);
    await sql`drop trigger held_test_refuse on invoices`.execute(a.db.db);

    closedByTest = true;
    await b.close();
    await waitUntil(async () => (await reservedOn(db.db, 'acme', day)) === created.length + a.app.notifier.service.heldFor('acme', day));
    await a.close();
    expect(await reservedOn(db.db, 'acme', day)).toBe(created.length);
  });
});

async function waitUntil(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
