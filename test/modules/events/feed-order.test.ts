/**
 * The feed's order under concurrent transactions. On PostgreSQL transactions commit
 * out of sequence order: an event taken from the sequence first may commit last. The feed must
 * neither skip it (a reader whose cursor already passed it) nor show it out of order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFeed, recordEvent } from '../../../src/modules/events/index.js';
import { createStores } from '../../../src/stores.js';
import { createTestDb, usingPostgres, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDb();
});
afterAll(async () => {
  await db.drop();
});

function record(trx: Parameters<typeof recordEvent>[0], n: number) {
  return recordEvent(trx, {
    teamId: 'order-team',
    type: 'invoice.payment_reported',
    now: new Date().toISOString(),
    data: { public_id: `doc-${n}`, revision: 1 },
  });
}

/** Everything after `cursor`, following next_cursor. */
async function drain(cursor: string | undefined): Promise<{ ids: string[]; docs: string[]; cursor: string | undefined }> {
  const ids: string[] = [];
  const docs: string[] = [];
  for (;;) {
    const page = await readFeed(createStores(db).events, db.db, 'order-team', { after: cursor, limit: 50 });
    ids.push(...page.items.map((e) => e.id));
    docs.push(...page.items.map((e) => String(e.data.public_id)));
    cursor = page.next_cursor ?? cursor;
    if (!page.has_more) return { ids, docs, cursor };
  }
}

/**
 * Drains until `n` events came: on PostgreSQL an event shows once every older transaction of the
 * service on this database has ended.
 */
async function drainUntil(cursor: string | undefined, n: number) {
  const out = { ids: [] as string[], docs: [] as string[], cursor };
  const deadline = Date.now() + 20_000;
  while (out.docs.length < n && Date.now() < deadline) {
    const page = await drain(out.cursor);
    out.ids.push(...page.ids);
    out.docs.push(...page.docs);
    out.cursor = page.cursor;
    if (out.docs.length < n) await new Promise((r) => setTimeout(r, 50));
  }
  return out;
}

describe.skipIf(!usingPostgres())('feed order on PostgreSQL', () => {
  it('does not show an event committed early until an older transaction still running has ended, then shows both in order', async () => {
    let releaseA!: () => void;
    const gateA = new Promise<void>((r) => (releaseA = r));
    let aRecorded!: () => void;
    const aInside = new Promise<void>((r) => (aRecorded = r));
    const start = await drain(undefined);

    // A takes its sequence number and transaction id first, then waits; B commits meanwhile.
    const a = db.db.transaction().execute(async (trx) => {
      await record(trx, 1);
      aRecorded();
      await gateA;
    });
    await aInside;
    await db.db.transaction().execute(async (trx) => record(trx, 2));

    // A naive "seq > cursor" feed would show doc-2 now and skip doc-1 for ever.
    const during = await drain(start.cursor);
    expect(during.docs).toEqual([]);
    releaseA();
    await a;
    const after = await drainUntil(during.cursor, 2);
    expect(after.docs).toEqual(['doc-1', 'doc-2']);
  });
});

describe('feed order under concurrent transactions', () => {
  it('a reader polling during 40 concurrent writers sees every committed event exactly once, in id order', async () => {
    const start = await drain(undefined);
    let cursor = start.cursor;
    const seen: string[] = [];
    const seenIds: string[] = [];
    let writing = true;
    const reader = (async () => {
      while (writing) {
        const page = await drain(cursor);
        seen.push(...page.docs);
        seenIds.push(...page.ids);
        cursor = page.cursor;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        db.db.transaction().execute(async (trx) => {
          await record(trx, 100 + i);
          // Hold some transactions open a little, so commits interleave out of sequence order.
          await new Promise((r) => setTimeout(r, (i * 7) % 23));
          await record(trx, 1000 + i);
        }),
      ),
    );
    writing = false;
    await reader;
    const rest = await drainUntil(cursor, 80 - seen.length);
    seen.push(...rest.docs);
    seenIds.push(...rest.ids);
    expect(seen).toHaveLength(80);
    expect(new Set(seen).size).toBe(80);
    expect([...seenIds].sort()).toEqual(seenIds);
    // Each transaction's two events are adjacent in the feed on PostgreSQL (ordered by transaction).
    if (usingPostgres()) {
      for (let i = 0; i < 40; i++) expect(seen.indexOf(`doc-${1000 + i}`)).toBe(seen.indexOf(`doc-${100 + i}`) + 1);
    }
  });
});
