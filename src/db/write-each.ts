/**
 * A worker's batch of writes, one item at a time but committed together, where one item that
 * cannot be written never holds up the others (a record that cannot be rebuilt would otherwise
 * roll back its whole batch on every poll, and stop the worker's other work behind it).
 */
import { sql } from 'kysely';
import type { Db, Executor } from './database.js';

const SAVEPOINT = sql`savepoint each_item`;
const ROLLBACK_TO_SAVEPOINT = sql`rollback to savepoint each_item`;
const RELEASE_SAVEPOINT = sql`release savepoint each_item`;

/**
 * `write` for each of `items` in one transaction (one commit for the batch); how many it wrote
 * (those `write` answered true for). When the batch throws, it is written again with each item
 * under a savepoint of its own: an item whose write throws then is undone alone and handed to
 * `failed`, and the others are written. A failure of the database itself (the savepoint cannot
 * be taken or undone) still throws, so an outage sets no item aside. No transaction for no items.
 */
export async function writeEachAlone<T>(
  db: Db,
  items: readonly T[],
  write: (trx: Executor, item: T) => Promise<boolean>,
  failed: (item: T, err: unknown) => void,
): Promise<number> {
  if (items.length === 0) return 0;
  try {
    return await db.transaction().execute(async (trx) => {
      let written = 0;
      for (const item of items) if (await write(trx, item)) written++;
      return written;
    });
  } catch {
    // Savepoints only now: the common batch pays no extra statement per item.
    return db.transaction().execute(async (trx) => {
      let written = 0;
      for (const item of items) {
        await SAVEPOINT.execute(trx);
        let wrote: boolean;
        try {
          wrote = await write(trx, item);
        } catch (err) {
          await ROLLBACK_TO_SAVEPOINT.execute(trx);
          await RELEASE_SAVEPOINT.execute(trx);
          failed(item, err);
          continue;
        }
        await RELEASE_SAVEPOINT.execute(trx);
        if (wrote) written++;
      }
      return written;
    });
  }
}
