/**
 * The daily e-mail gate: atomic under concurrent requests and across instances (two
 * connections / pools on one database), per team and per UTC day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { createMailTransport, NotificationService } from '../../../src/modules/notifications/index.js';
import { reservedOn, reserveEmail, reserveEmails, utcDay } from '../../../src/modules/notifications/quota.js';
import { systemClock } from '../../../src/shared/clock.js';
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

describe('reserveEmail', () => {
  it('lets exactly the limit through under concurrent transactions from two instances', async () => {
    const day = '2026-01-10';
    const attempts = Array.from({ length: 24 }, (_, i) =>
      (i % 2 === 0 ? db.db : second.db).transaction().execute((trx) => reserveEmail(trx, 'acme', day, 7, now())),
    );
    const granted = (await Promise.all(attempts)).filter(Boolean).length;
    expect(granted).toBe(7);
    expect(await reservedOn(db.db, 'acme', day)).toBe(7);
  });

  it('counts per team and per UTC day, and refuses everything at a limit of 0', async () => {
    expect(await reserveEmail(db.db, 'acme', '2026-01-11', 1, now())).toBe(true);
    expect(await reserveEmail(db.db, 'acme', '2026-01-11', 1, now())).toBe(false);
    expect(await reserveEmail(db.db, 'beta', '2026-01-11', 1, now())).toBe(true);
    expect(await reserveEmail(db.db, 'acme', '2026-01-12', 1, now())).toBe(true);
    expect(await reserveEmail(db.db, 'acme', '2026-01-13', 0, now())).toBe(false);
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

  it('gives the reservation back when the document transaction rolls back', async () => {
    const day = '2026-01-14';
    await expect(
      db.db.transaction().execute(async (trx) => {
        expect(await reserveEmail(trx, 'acme', day, 5, now())).toBe(true);
        throw new Error('the document write failed');
      }),
    ).rejects.toThrow('the document write failed');
    expect(await reservedOn(db.db, 'acme', day)).toBe(0);
  });
});

describe('the gate in the write path', () => {
  it('blocks the e-mails past emails_per_day with emails_per_day_exceeded (207)', async () => {
    const server = await startSmtpServer();
    const transport = createMailTransport({ smtpUrl: server.url, dataDir: '/tmp' });
    const service = new NotificationService({ database: db, clock: systemClock, transport, documents: documentStatusPort, bases: BASES, mailFrom: 'inv@billing.example' });
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
      (database) => new NotificationService({ database, clock: systemClock, transport, documents: documentStatusPort, bases: BASES, mailFrom: 'inv@billing.example' }),
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
