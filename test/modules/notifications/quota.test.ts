/**
 * The daily e-mail gate: atomic under concurrent requests and across instances (two
 * connections / pools on one database), per team and per UTC day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { createMailTransport, NotificationService } from '../../../src/modules/notifications/index.js';
import { sql } from 'kysely';
import { up as shardQuota } from '../../../src/db/migrations/2026-11-27T0900_email_quota_shards.js';
import { utcDay } from '../../../src/modules/notifications/store/portable.js';
import { shareOf, SHARDS } from '../../../src/modules/notifications/store/postgres-shards.js';
import { createStores } from '../../../src/stores.js';
import { prunePastDays, reservedOn, reserveEmails } from '../../helpers/quota.js';
import os from 'node:os';
import { systemClock } from '../../../src/shared/clock.js';
import { GroupCommit } from '../../../src/db/group-commit.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../../helpers/db.js';
import { BASES, createAndDeliver, createDocument, seedTeams } from './fixtures.js';
import { startSmtpServer } from './smtp-helpers.js';
import { documentStatusPort } from '../../../src/modules/invoices/index.js';

let db: TestDatabase;
let second: DatabaseHandle;

beforeAll(async () => {
  db = await createTestDb();
  await seedTeams(db.db);
  // Another instance's pool on PostgreSQL. SQLite's driver is synchronous, so a second
  // connection in this same process would block the event loop while the first holds the
  // write lock; there the one connection serializes, as it does in production.
  second = usingPostgres() ? openDatabase(db.target) : db;
});
afterAll(async () => {
  if (second !== db) await second.close();
  await db.drop();
});

const now = () => new Date().toISOString();

/** [shard, reserved] of a team's day: shard 0 is the email_quota row, 1-15 email_quota_shards (PostgreSQL). */
async function shardRows(team: string, day: string): Promise<Array<[number, number]>> {
  const first = await db.db.selectFrom('email_quota').select('reserved').where('team_id', '=', team).where('day', '=', day).execute();
  const rows: Array<[number, number]> = first.map((r) => [0, Number(r.reserved)]);
  if (usingPostgres()) {
    const others = await db.db.selectFrom('email_quota_shards').select(['shard', 'reserved']).where('team_id', '=', team).where('day', '=', day).orderBy('shard').execute();
    for (const r of others) rows.push([Number(r.shard), Number(r.reserved)]);
  }
  return rows;
}

describe('reserveEmails of one e-mail', () => {
  it('lets exactly the limit through under concurrent transactions from two instances', async () => {
    const day = '2026-01-10';
    const attempts = Array.from({ length: 24 }, (_, i) =>
      (i % 2 === 0 ? db.db : second.db).transaction().execute((trx) => reserveEmails(trx, 'acme', day, 7, 1, now())),
    );
    const granted = (await Promise.all(attempts)).filter(Boolean).length;
    expect(granted).toBe(7);
    expect(await reservedOn(db.db, 'acme', day)).toBe(7);
  });

  it('counts per team and per UTC day, and refuses everything at a limit of 0', async () => {
    expect(await reserveEmails(db.db, 'acme', '2026-01-11', 1, 1, now())).toBe(1);
    expect(await reserveEmails(db.db, 'acme', '2026-01-11', 1, 1, now())).toBe(0);
    expect(await reserveEmails(db.db, 'beta', '2026-01-11', 1, 1, now())).toBe(1);
    expect(await reserveEmails(db.db, 'acme', '2026-01-12', 1, 1, now())).toBe(1);
    expect(await reserveEmails(db.db, 'acme', '2026-01-13', 0, 1, now())).toBe(0);
    expect(await reservedOn(db.db, 'acme', '2026-01-13')).toBe(0);
    expect(utcDay(new Date('2026-01-11T23:59:59.999+03:00'))).toBe('2026-01-11');
    expect(utcDay(new Date('2026-01-12T02:00:00+03:00'))).toBe('2026-01-11');
  });

  it('reserves a write\'s e-mails together, and only what is left when they do not all fit', async () => {
    const day = '2026-01-15';
    expect(await reserveEmails(db.db, 'acme', day, 5, 3, now())).toBe(3);
    expect(await reservedOn(db.db, 'acme', day)).toBe(3);
    expect(await reserveEmails(db.db, 'acme', day, 5, 4, now())).toBe(2);
    expect(await reservedOn(db.db, 'acme', day)).toBe(5);
    expect(await reserveEmails(db.db, 'acme', day, 5, 2, now())).toBe(0);
    expect(await reserveEmails(db.db, 'acme', day, 5, 0, now())).toBe(0);
    // More than the whole limit on a fresh day: the first `limit` of them.
    expect(await reserveEmails(db.db, 'acme', '2026-01-16', 2, 3, now())).toBe(2);
    expect(await reservedOn(db.db, 'acme', '2026-01-16')).toBe(2);
    expect(await reservedOn(db.db, 'acme', day)).toBe(5);
  });

  it('lets exactly the limit through when concurrent writes reserve several e-mails each', async () => {
    const day = '2026-01-17';
    const attempts = Array.from({ length: 10 }, (_, i) =>
      (i % 2 === 0 ? db.db : second.db).transaction().execute((trx) => reserveEmails(trx, 'acme', day, 11, 3, now())),
    );
    const granted = (await Promise.all(attempts)).reduce((a, b) => a + b, 0);
    expect(granted).toBe(11);
    expect(await reservedOn(db.db, 'acme', day)).toBe(11);
  });

  it('takes what is left across the shards when a write does not fit in its own, never more than the limit', async () => {
    const day = '2026-01-18';
    // 40 a day: on PostgreSQL shares of 3 (shards 0-7) and 2 (8-15); 5 fit no share at once.
    expect(await db.db.transaction().execute((trx) => reserveEmails(trx, 'acme', day, 40, 5, now()))).toBe(5);
    const rounds = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? db.db : second.db).transaction().execute((trx) => reserveEmails(trx, 'acme', day, 40, 4, now()))),
    );
    expect(rounds.reduce((a, b) => a + b, 0)).toBe(35);
    expect(await reservedOn(db.db, 'acme', day)).toBe(40);
    for (const [shard, reserved] of await shardRows('acme', day)) expect(reserved).toBeLessThanOrEqual(usingPostgres() ? shareOf(shard, 40) : 40);
  });

  it.skipIf(!usingPostgres())('lets two writes of one team reserve at once: neither waits for the other to commit', async () => {
    const day = '2026-01-19';
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstReserved!: () => void;
    const reservedByFirst = new Promise<void>((resolve) => (firstReserved = resolve));
    const first = db.db.transaction().execute(async (trx) => {
      expect(await reserveEmails(trx, 'acme', day, 1000, 1, now())).toBe(1);
      firstReserved();
      await firstHolds; // its row lock stays until this commit
    });
    await reservedByFirst;
    const waited: number[] = [];
    try {
      // Another instance's write reserves and commits while the first still holds its lock. It
      // waits only if it drew the first one's shard (1 in 16): then it gives up after 1 s and a
      // new transaction draws again.
      let done = false;
      for (let attempt = 0; attempt < 20 && !done; attempt++) {
        const started = Date.now();
        done = await second.db
          .transaction()
          .execute(async (trx) => {
            await sql`set local lock_timeout = '1s'`.execute(trx);
            return (await reserveEmails(trx, 'acme', day, 1000, 1, now())) === 1;
          })
          .catch((err: { code?: string }) => {
            if (err.code !== '55P03') throw err;
            waited.push(Date.now() - started);
            return false;
          });
      }
      expect(done).toBe(true);
      expect(waited.length).toBeLessThan(5);
    } finally {
      releaseFirst();
      await first;
    }
    expect(await reservedOn(db.db, 'acme', day)).toBe(2);
  });

  it("moves what a day holds beyond shard 0's share to the other shards on migrating, the total unchanged", async () => {
    await db.db.transaction().execute(async (trx) => {
      if (usingPostgres()) await sql`drop table email_quota_shards`.execute(trx);
      // acme's tariff allows 50 a day (fixtures): 10 used one day, 80 another (a limit lowered since).
      await sql`insert into email_quota values ('acme', '2026-02-01', 10, 'x'), ('acme', '2026-02-02', 80, 'x'), ('beta', '2026-02-01', 3, 'x')`.execute(trx);
      await shardQuota(trx as never);
    });
    const limit = (await db.db.selectFrom('tariffs').innerJoin('teams', 'teams.tariff_id', 'tariffs.id').select('tariffs.emails_per_day').where('teams.id', '=', 'acme').executeTakeFirstOrThrow()).emails_per_day;
    expect(limit).toBe(50);
    for (const [team, day, total] of [['acme', '2026-02-01', 10], ['acme', '2026-02-02', 80], ['beta', '2026-02-01', 3]] as const) {
      expect((await shardRows(team, day)).reduce((a, [, r]) => a + r, 0)).toBe(total);
      expect(await reservedOn(db.db, team, day)).toBe(total);
    }
    if (usingPostgres()) {
      // Shares of 50: 4 for shards 0-1, 3 for the rest. 10 = 4 + 4 + 2.
      expect(await shardRows('acme', '2026-02-01')).toEqual([[0, 4], [1, 4], [2, 2]]);
      // Over the limit: every shard at its share, shard 0 with the rest (80 - 46).
      const over = await shardRows('acme', '2026-02-02');
      expect(over).toEqual(Array.from({ length: SHARDS }, (_, k) => [k, k === 0 ? 80 - (50 - shareOf(0, 50)) : shareOf(k, 50)]));
      expect(await shardRows('beta', '2026-02-01')).toEqual([[0, 3]]);
    }
    // The quota goes on from there: the 50 of 2026-02-01 less the 10 used, none on the full day.
    expect(await db.db.transaction().execute((trx) => reserveEmails(trx, 'acme', '2026-02-01', limit, 100, now()))).toBe(40);
    expect(await db.db.transaction().execute((trx) => reserveEmails(trx, 'acme', '2026-02-02', limit, 1, now()))).toBe(0);
  });

  it('gives the reservation back when the document transaction rolls back', async () => {
    const day = '2026-01-14';
    await expect(
      db.db.transaction().execute(async (trx) => {
        expect(await reserveEmails(trx, 'acme', day, 5, 1, now())).toBe(1);
        throw new Error('the document write failed');
      }),
    ).rejects.toThrow('the document write failed');
    expect(await reservedOn(db.db, 'acme', day)).toBe(0);
  });
});

describe('inside group commit batches', () => {
  it('lets exactly the limit through bursts of writes, gives back what a rolled-back write took, and stores the sum', async () => {
    // A day of its own: the PostgreSQL test above leaves its reservations on 2026-01-19 (on
    // shard 0 one time in sixteen: the others go with the shard table another test drops).
    const day = '2026-01-21';
    await reserveEmails(db.db, 'acme', day, 40, 4, now());
    const group = new GroupCommit(db.db);
    const taken = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        group.run(async (trx) => {
          const granted = await reserveEmails(trx, i % 5 === 4 ? 'beta' : 'acme', day, 40, 2, now());
          // A write that fails after taking its e-mails: what it took goes back.
          if (i === 3 || i === 8) throw new Error(`write ${i} failed`);
          return granted;
        }),
      ),
    );
    expect(taken.map((r) => r.status === 'rejected')).toEqual(Array.from({ length: 20 }, (_, i) => i === 3 || i === 8));
    expect(taken.every((r) => r.status === 'rejected' || r.value === 2)).toBe(true);
    // acme: 4 before, then 14 stored writes of 2; beta: 4 writes of 2.
    expect(await reservedOn(db.db, 'acme', day)).toBe(32);
    expect(await reservedOn(db.db, 'beta', day)).toBe(8);
    if (!usingPostgres()) expect(group.stats.batches).toBeLessThan(5);
    // Near the limit: what is left (8) goes to the first writes (in queue order on SQLite), then nothing.
    const more = await Promise.all(Array.from({ length: 5 }, () => group.run((trx) => reserveEmails(trx, 'acme', day, 40, 3, now()))));
    expect(usingPostgres() ? [...more].sort().reverse() : more).toEqual([3, 3, 2, 0, 0]);
    expect(await Promise.all([group.run((trx) => reserveEmails(trx, 'acme', day, 41, 2, now()))])).toEqual([1]);
    expect(await reservedOn(db.db, 'acme', day)).toBe(41);
  });
});

describe('retention of past days', () => {
  /** Rows of `team` per day (every shard on PostgreSQL). */
  async function days(team: string): Promise<string[]> {
    const first = await db.db.selectFrom('email_quota').select('day').where('team_id', '=', team).execute();
    const all = first.map((r) => r.day);
    if (usingPostgres()) {
      const others = await db.db.selectFrom('email_quota_shards').select('day').where('team_id', '=', team).execute();
      all.push(...others.map((r) => r.day));
    }
    return all.sort();
  }

  it('deletes the rows of days before the cutoff in bounded statements, and keeps the rest', async () => {
    const team = 'beta';
    // Five past days of the team (on PostgreSQL each spread over shards, as a busy day is).
    for (const day of ['2025-12-01', '2025-12-02', '2025-12-03', '2025-12-04', '2025-12-05']) {
      await reserveEmails(db.db, team, day, 1_000, 40, now());
      if (usingPostgres()) {
        await db.db.insertInto('email_quota_shards').values({ team_id: team, day, shard: 3, reserved: 2, updated_at: now() }).onConflict((oc) => oc.doNothing()).execute();
      }
    }
    await reserveEmails(db.db, team, '2025-12-06', 1_000, 1, now());
    await reserveEmails(db.db, team, '2025-12-07', 1_000, 1, now());
    const before = await days(team);
    const past = before.filter((d) => d < '2025-12-06').length;
    expect(past).toBeGreaterThanOrEqual(5);
    // At most `limit` rows a statement: a backlog takes several.
    expect(await prunePastDays(db.db, '2025-12-06', 3)).toBe(3);
    let left = past - 3;
    while (left > 0) {
      const n = await prunePastDays(db.db, '2025-12-06', 3);
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(3);
      left -= n;
    }
    expect(await prunePastDays(db.db, '2025-12-06', 3)).toBe(0);
    expect(await days(team)).toEqual(before.filter((d) => d >= '2025-12-06'));
    // What is left counts on as before.
    expect(await reservedOn(db.db, team, '2025-12-06')).toBe(1);
    expect(await reservedOn(db.db, team, '2025-12-07')).toBe(1);
  });

  it('the service keeps today and yesterday (UTC) and deletes what is older', async () => {
    const at = new Date('2026-02-10T00:30:00Z');
    const transport = createMailTransport({ smtpUrl: null, dataDir: os.tmpdir() });
    const service = new NotificationService({
      db: db.db,
      stores: createStores(db).notifications,
      clock: { now: () => at },
      transport,
      documents: documentStatusPort,
      bases: BASES,
      mailFrom: 'inv@billing.example',
    });
    try {
      for (const day of ['2026-02-07', '2026-02-08', '2026-02-09', '2026-02-10']) await reserveEmails(db.db, 'acme', day, 1_000, 2, now());
      expect(await service.pruneQuota()).toBeGreaterThanOrEqual(2);
      expect(await reservedOn(db.db, 'acme', '2026-02-07')).toBe(0);
      expect(await reservedOn(db.db, 'acme', '2026-02-08')).toBe(0);
      expect(await reservedOn(db.db, 'acme', '2026-02-09')).toBe(2);
      expect(await reservedOn(db.db, 'acme', '2026-02-10')).toBe(2);
    } finally {
      await transport.close();
    }
  });
});

describe('the gate in the write path', () => {
  it('blocks the e-mails past emails_per_day with emails_per_day_exceeded (207)', async () => {
    const server = await startSmtpServer();
    const transport = createMailTransport({ smtpUrl: server.url, dataDir: '/tmp' });
    const service = new NotificationService({ db: db.db, stores: createStores(db).notifications, clock: systemClock, transport, documents: documentStatusPort, bases: BASES, mailFrom: 'inv@billing.example' });
    try {
      const today = utcDay(new Date());
      const used = await reservedOn(db.db, 'beta', today);
      const tariff = { emails_per_day: used + 2, external_share: true };
      const { report } = await createAndDeliver(db.db, service, {
        teamId: 'beta',
        tariff,
        recipients: [{ email: 'a@x.example' }, { email: 'b@x.example' }, { email: 'c@x.example' }],
      });
      expect(report.status).toBe(207);
      expect(report.notifications).toMatchObject({
        planned_count: 3,
        sent_count: 2,
        failed_count: 1,
        sent_to: ['a@x.example', 'b@x.example'],
        blocked_by_service_gate: true,
        block_reason: 'emails_per_day_exceeded',
        failed: [{ email: 'c@x.example', error: 'emails_per_day_exceeded', state: 'blocked' }],
      });
      expect(server.received).toHaveLength(2);
      const next = await createAndDeliver(db.db, service, { teamId: 'beta', tariff, buyerEmail: 'd@x.example' });
      expect(next.report.notifications).toMatchObject({ sent_count: 0, blocked_by_service_gate: true, block_reason: 'emails_per_day_exceeded' });
      expect(server.received).toHaveLength(2);
    } finally {
      transport.close();
      await server.close();
    }
  });

  it('holds under concurrent writes from two instances: exactly the quota is enqueued', async () => {
    const transport = createMailTransport({ smtpUrl: null, dataDir: '/tmp/unused' });
    const services = [db, second].map(
      (database) => new NotificationService({ db: database.db, stores: createStores(database).notifications, clock: systemClock, transport, documents: documentStatusPort, bases: BASES, mailFrom: 'inv@billing.example' }),
    );
    const today = utcDay(new Date());
    const used = await reservedOn(db.db, 'acme', today);
    const tariff = { emails_per_day: used + 5, external_share: true };
    const writes = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        createDocument(i % 2 === 0 ? db.db : second.db, services[i % 2]!, { tariff, recipients: [{ email: `r${i}@x.example` }] }),
      ),
    );
    const leased = writes.filter((w) => w.pending.ids.length === 1).length;
    const blocked = writes.filter((w) => w.pending.outcome.block_reason === 'emails_per_day_exceeded').length;
    expect([leased, blocked]).toEqual([5, 11]);
    expect(await reservedOn(db.db, 'acme', today)).toBe(used + 5);
  });
});
