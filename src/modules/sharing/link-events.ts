/**
 * What opening a share link writes, and "I have paid": each status change and its event in one
 * transaction.
 */
import type { Db } from '../../db/database.js';
import type { ShareLinkRow } from '../../db/types.js';
import { recordEvent } from '../events/index.js';
import { findBuyerState as documentState, recordLinkOpened } from './sharing.repository.js';
import { markDocumentViewed, markPaymentReported, touchDocument } from '../invoices/index.js';

/** A link's `last_opened_at` is written at most once in this long. */
export const LINK_OPEN_INTERVAL_MS = 60_000;

/** The document as this request read it: whether an open by the buyer or a recipient is still news. */
export interface ViewState {
  buyer_status: string;
  viewed_at: string | null;
}

/**
 * The writes of link opens. An open writes only what it changes: the document's first view
 * (`viewed_at`, `buyer_status: viewed` and `invoice.viewed`) while the document read on the
 * request still lacks it, and the link's `last_opened_at` at most once a minute per link. The
 * minute is kept in this process (a map of the links opened, at most `maxLinks`, the oldest
 * forgotten first: forgetting one only lets its next open write); the update's own condition
 * keeps it at most once a minute across processes and nodes too. A page hammered through one
 * link thus costs reads only, not two writes (each an fsync on SQLite) per open.
 */
export class LinkOpens {
  private readonly written = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly maxLinks = 10_000,
  ) {}

  async record(link: ShareLinkRow, state: ViewState, now: Date): Promise<void> {
    const nowIso = now.toISOString();
    const at = now.getTime();
    const last = this.written.get(link.token);
    if (last === undefined || at - last >= LINK_OPEN_INTERVAL_MS || at < last) {
      this.remember(link.token, at);
      await recordLinkOpened(this.db, link, nowIso, new Date(at - LINK_OPEN_INTERVAL_MS).toISOString());
    }
    if (link.kind !== 'colleague' && (state.viewed_at === null || state.buyer_status === 'not_sent' || state.buyer_status === 'sent')) {
      await recordViewed(this.db, link.team_id, link.public_id, nowIso);
    }
  }

  private remember(token: string, at: number): void {
    this.written.delete(token);
    this.written.set(token, at);
    for (const oldest of this.written.keys()) {
      if (this.written.size <= this.maxLinks) break;
      this.written.delete(oldest);
    }
  }
}


export async function recordViewed(db: Db, teamId: string, publicId: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const before = await documentState(trx, teamId, publicId);
    if (!(await markDocumentViewed(trx, teamId, publicId, now)) || !before) return;
    const after = await documentState(trx, teamId, publicId);
    // Only the first view is news: a later open that changed nothing visible records nothing.
    if (before.buyer_status === after?.buyer_status && before.buyer_status !== 'not_sent' && before.buyer_status !== 'sent') return;
    await touchDocument(trx, teamId, publicId, now);
    await recordEvent(trx, {
      teamId,
      type: 'invoice.viewed',
      now,
      data: { public_id: publicId, revision: before.revision, buyer_status: after?.buyer_status ?? 'viewed' },
    });
  });
}

export async function recordPaymentReported(db: Db, teamId: string, publicId: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await markPaymentReported(trx, teamId, publicId, now))) return;
    const state = await documentState(trx, teamId, publicId);
    if (!state) return;
    await touchDocument(trx, teamId, publicId, now);
    await recordEvent(trx, { teamId, type: 'invoice.payment_reported', now, data: { public_id: publicId, revision: state.revision } });
  });
}
