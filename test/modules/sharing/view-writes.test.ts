/**
 * Opening a share link writes only what changes: the first view moves the document to `viewed`
 * with its `invoice.viewed` event, and the link's `last_opened_at` is written at most once a
 * minute per link; a link opened fifty times within a second writes nothing after the first
 * open. Writes are observed in the database itself: SQLite's count of changed rows on the
 * writing connection, PostgreSQL's row versions (`xmin`, new with every UPDATE of a row).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { usingPostgres } from '../../helpers/db.js';
import { buildSharingApp, createDocument, documentWithRecipients, getDocument, request } from './link-helpers.js';

let t: TestApp;
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  t = await buildSharingApp({ clock });
});
afterAll(async () => t?.close());

/** A number that moves with every row a view writes to the document or its links. */
async function writesTo(publicId: string): Promise<string> {
  if (usingPostgres()) {
    const versions = await sql<{ v: string }>`
      select xmin::text as v from invoices where public_id = ${publicId}
      union all select xmin::text from share_links where public_id = ${publicId} order by 1`.execute(t.db.db);
    return versions.rows.map((r) => r.v).join(',');
  }
  // In a transaction: on the connection every write goes through.
  return t.db.db.transaction().execute(async (trx) => String((await sql<{ n: number }>`select total_changes() as n`.execute(trx)).rows[0]?.n));
}

const linkOf = (token: string) =>
  t.db.db.selectFrom('share_links').select(['last_opened_at']).where('token', '=', token).executeTakeFirstOrThrow();
const viewedEvents = (publicId: string) =>
  t.db.db.selectFrom('events').select('data').where('public_id', '=', publicId).where('type', '=', 'invoice.viewed').execute();
const tokenOf = (url: string) => new URL(url).pathname.split('/')[2] as string;

describe('share link opens', () => {
  it('fifty opens of one link at once write nothing after the first; a minute later one open writes its time again', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const token = tokenOf(doc.invoice_url);
    expect(doc.status.buyer_status).toBe('not_sent');

    const first = await request(t, doc.invoice_url);
    expect(first.statusCode).toBe(200);
    const openedAt = (await linkOf(token)).last_opened_at;
    expect(openedAt).not.toBeNull();
    expect((await viewedEvents(doc.public_id)).map((e) => JSON.parse(e.data))).toEqual([
      expect.objectContaining({ public_id: doc.public_id, revision: 1, buyer_status: 'viewed' }),
    ]);

    const before = await writesTo(doc.public_id);
    const started = Date.now();
    const opens = await Promise.all(
      Array.from({ length: 50 }, (_, i) => request(t, i % 2 === 0 ? doc.invoice_url : doc.document_url, { remoteAddress: `10.1.0.${i + 1}` })),
    );
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(opens.map((o) => o.statusCode)).toEqual(Array(50).fill(200));
    expect(await writesTo(doc.public_id)).toBe(before);
    expect((await linkOf(token)).last_opened_at).toBe(openedAt);
    // Still one view event, the status still `viewed`.
    expect(await viewedEvents(doc.public_id)).toHaveLength(1);
    expect((await getDocument(t, doc.public_id)).status.buyer_status).toBe('viewed');

    // A minute on, the next open records its time (one row written), and nothing else.
    offsetMs = 61_000;
    expect((await request(t, doc.invoice_url)).statusCode).toBe(200);
    const later = (await linkOf(token)).last_opened_at;
    expect(later! > openedAt!).toBe(true);
    expect(await viewedEvents(doc.public_id)).toHaveLength(1);
    const afterMinute = await writesTo(doc.public_id);
    expect(afterMinute).not.toBe(before);
    if (!usingPostgres()) expect(Number(afterMinute) - Number(before)).toBe(1);
    expect(await writesTo(doc.public_id)).toBe(afterMinute);
  });

  it('a recipient’s first open is still news after the buyer’s link was opened: each link records its own open', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    await request(t, doc.share_links.colleague_url);
    // The colleague link records its open, never a view.
    expect((await linkOf(tokenOf(doc.share_links.colleague_url))).last_opened_at).not.toBeNull();
    expect(await viewedEvents(doc.public_id)).toHaveLength(0);
    const recipient = doc.share_links.recipients[0].url as string;
    await request(t, recipient);
    expect((await linkOf(tokenOf(recipient))).last_opened_at).not.toBeNull();
    expect(await viewedEvents(doc.public_id)).toHaveLength(1);
    await request(t, doc.invoice_url);
    expect((await linkOf(tokenOf(doc.invoice_url))).last_opened_at).not.toBeNull();
    expect(await viewedEvents(doc.public_id)).toHaveLength(1);
  });
});
