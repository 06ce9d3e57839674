/**
 * The daily e-mail quota of the database a test runs on, through its store (as the
 * notifications service uses it): reserve, read and prune by team and day.
 */
import { dialectOf, type Db, type Executor } from '../../src/db/database.js';
import { createPostgresQuotaStore, createSqliteQuotaStore, type QuotaStore } from '../../src/modules/notifications/index.js';
import { systemClock } from '../../src/shared/clock.js';

const stores = new Map<string, QuotaStore>();

/** The quota store of `db`'s database (its reads and writes take the executor they are given). */
export function quotaOf(db: Executor): QuotaStore {
  const dialect = dialectOf(db);
  let store = stores.get(dialect);
  if (store === undefined) {
    const create = dialect === 'postgres' ? createPostgresQuotaStore : createSqliteQuotaStore;
    store = create({ db: db as Db, clock: systemClock, onError: () => undefined });
    stores.set(dialect, store);
  }
  return store;
}

export const reserveEmails = (db: Executor, teamId: string, day: string, limit: number, count: number, now: string): Promise<number> =>
  quotaOf(db).reserve(db, teamId, day, limit, count, now);

export const reservedOn = (db: Executor, teamId: string, day: string): Promise<number> => quotaOf(db).reservedOn(db, teamId, day);

export const prunePastDays = (db: Executor, beforeDay: string, limit?: number): Promise<number> => quotaOf(db).prunePastDays(db, beforeDay, limit);
