/**
 * The webhook fan-out: each enabled endpoint follows its team's events feed with its own cursor.
 * Per pass, two statements per page of endpoints find those with new events (their cursors, then
 * one question to the feed for all of them: `cursorsWithNewEvents`); idle endpoints cost nothing
 * more. Each endpoint with news then gets, in one transaction under its row lock, its new events
 * of its types as deliveries (one per endpoint and event, ever) and its cursor moved past them.
 * The feed's order is safe against concurrent transactions, so no event is skipped.
 *
 * An endpoint holding MAX_UNDELIVERED deliveries still to make is paused: its cursor stops before
 * the first event it has no room for, the events wait in the feed, and the fan-out resumes where
 * it stopped as the backlog drains. Nothing is lost.
 */
import type { Db } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { randomToken } from '../../shared/tokens.js';
import { toPublicEvent } from '../events/index.js';
import type { EndpointCursor, WebhookStores } from './store/index.js';
import { deliveryBody, MAX_UNDELIVERED } from './webhooks.service.js';

/** Events read per endpoint and pass. */
const FANOUT_PAGE = 200;

/** One pass over every enabled endpoint; `more` when one had a full page of events (run again at once). */
export async function fanOut(stores: WebhookStores, db: Db, clock: Clock, endpointPage: number): Promise<{ queued: number; more: boolean }> {
  let queued = 0;
  let more = false;
  // Every enabled endpoint of every team, a page at a time (keyset), so none is ever left out.
  let after: EndpointCursor | null = null;
  for (;;) {
    const page: EndpointCursor[] = await stores.webhooks.listEnabledCursors(db, after, endpointPage);
    const withNews = await stores.events.cursorsWithNewEvents(
      db,
      page.map((e) => ({ teamId: e.team_id, position: { tx: Number(e.cursor_tx), seq: Number(e.cursor_seq) } })),
    );
    for (const i of withNews) {
      const r = await fanOutOne(stores, db, clock, page[i] as EndpointCursor);
      queued += r.queued;
      more ||= r.more;
    }
    if (page.length < endpointPage) return { queued, more };
    after = page.at(-1) ?? null;
  }
}

/** One endpoint's new events as deliveries, within its backlog bound, and its cursor moved past them. */
async function fanOutOne({ webhooks: repo, events }: WebhookStores, db: Db, clock: Clock, seen: EndpointCursor): Promise<{ queued: number; more: boolean }> {
  const nothing = { queued: 0, more: false };
  // A paused endpoint costs a read per pass, not a write (the count is checked again under the lock).
  if ((await repo.countUndelivered(db, seen.team_id, seen.id, MAX_UNDELIVERED)) >= MAX_UNDELIVERED) return nothing;
  return db.transaction().execute(async (trx) => {
    const endpoint = await repo.lockEndpoint(trx, seen.team_id, seen.id);
    // Gone, disabled or moved on by another worker since the page was read: nothing to do here.
    if (!endpoint || endpoint.enabled === 0 || Number(endpoint.cursor_tx) !== Number(seen.cursor_tx) || Number(endpoint.cursor_seq) !== Number(seen.cursor_seq)) {
      return nothing;
    }
    const room = MAX_UNDELIVERED - (await repo.countUndelivered(trx, endpoint.team_id, endpoint.id, MAX_UNDELIVERED));
    if (room <= 0) return nothing;
    const cursor = { tx: Number(endpoint.cursor_tx), seq: Number(endpoint.cursor_seq) };
    const rows = await events.list(trx, endpoint.team_id, { after: cursor, limit: FANOUT_PAGE });
    const types = JSON.parse(endpoint.events) as string[];
    const wanted: typeof rows = [];
    let last: (typeof rows)[number] | null = null;
    for (const r of rows) {
      if (types.includes('*') || types.includes(r.type)) {
        // The backlog is full: the cursor stops before this event, which waits in the feed.
        if (wanted.length >= room) break;
        wanted.push(r);
      }
      last = r;
    }
    if (!last) return nothing;
    const now = clock.now().toISOString();
    await repo.insertDeliveries(
      trx,
      wanted.map((r) => {
        const event = toPublicEvent(r);
        return {
          team_id: endpoint.team_id,
          id: randomToken(12),
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
          body: deliveryBody(event),
          state: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
          // The delivery's span continues the trace of the write that recorded the event.
          traceparent: r.traceparent,
        };
      }),
    );
    await repo.updateEndpoint(trx, endpoint.team_id, endpoint.id, { cursor_tx: Number(last.tx_id), cursor_seq: Number(last.seq) });
    return { queued: wanted.length, more: last === rows.at(-1) && rows.length >= FANOUT_PAGE };
  });
}
