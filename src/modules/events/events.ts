/**
 * The event log: `recordEvent(trx, …)` inside the transaction of the change it describes (no
 * lost and no phantom events), the team's feed in a total order, and retention. The writes are
 * the same statement on both databases; what a reader is shown is the event store's
 * (store/index.ts), chosen once with the database.
 */
import { currentTraceparent } from '../../shared/tracing.js';
import type { CompiledQuery } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { EventRow } from '../../db/types.js';
import { yieldToIo } from '../../shared/background-work.js';
import { ApiError } from '../../shared/errors.js';
import { newDocumentEvent, type DocumentEventInput } from './event-rows.js';
import type { DocumentEventType, EventData, EventType } from './event-types.js';
import type { EventStore, FeedPosition } from './store/index.js';
import { appendEventQuery, appendEvents } from './store/portable.js';

/** An event as the feed and webhook bodies carry it. */
export interface PublicEvent {
  id: string;
  type: Exclude<EventType, 'ping'>;
  created_at: string;
  data: Record<string, unknown>;
}

/**
 * Records a document event. Call it inside the transaction that makes the change, with the
 * change's time; the caller moves the document's `changed_at` (the invoices module owns that
 * table: through its `documentStatusPort.onChanged`, or in the document write itself).
 */
export async function recordEvent<T extends DocumentEventType>(trx: Executor, event: DocumentEventInput<T>): Promise<void> {
  await appendEvents(trx, [newDocumentEvent(event)]);
}

/**
 * `recordEvent` bound but not run: the statement, for a writer that binds its statements before
 * its transaction and runs them inside it (`executeCompiled`, src/db/direct-execution.ts).
 */
export function documentEventQuery(db: Executor, event: DocumentEventInput): CompiledQuery {
  return appendEventQuery(db, newDocumentEvent(event));
}

/** Records an event that is about no document (e.g. `webhook_endpoint.disabled`). */
export async function recordTeamEvent<T extends Exclude<EventType, DocumentEventType | 'ping'>>(
  trx: Executor,
  event: { teamId: string; type: T; data: EventData<T>; now: string },
): Promise<void> {
  await appendEvents(trx, [
    {
      teamId: event.teamId,
      type: event.type,
      publicId: null,
      revision: null,
      data: JSON.stringify(event.data),
      createdAt: event.now,
      traceparent: currentTraceparent(),
    },
  ]);
}

const HEX = 16;
const ID_PATTERN = /^evt_([0-9a-f]{16})([0-9a-f]{16})$/;
const MAX_POSITION = BigInt(Number.MAX_SAFE_INTEGER);

/** The event id encodes its feed position, so ids sort in feed order and one serves as a cursor. */
export function eventIdOf(position: FeedPosition): string {
  return `evt_${position.tx.toString(16).padStart(HEX, '0')}${position.seq.toString(16).padStart(HEX, '0')}`;
}

/**
 * The feed position an event id names, or null when it names none: not the id's form, or a half
 * above 2^53 - 1. Positions are read as JavaScript numbers and every id the feed gives comes from
 * one, so a larger half names no position that can exist (and would not fit PostgreSQL's bigint
 * beyond 2^63 - 1).
 */
export function positionOf(id: string): FeedPosition | null {
  const m = ID_PATTERN.exec(id);
  if (!m) return null;
  const tx = BigInt(`0x${m[1] as string}`);
  const seq = BigInt(`0x${m[2] as string}`);
  if (tx > MAX_POSITION || seq > MAX_POSITION) return null;
  return { tx: Number(tx), seq: Number(seq) };
}

export function toPublicEvent(row: EventRow): PublicEvent {
  return {
    id: eventIdOf({ tx: Number(row.tx_id), seq: Number(row.seq) }),
    type: row.type as Exclude<EventType, 'ping'>,
    created_at: row.created_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

export interface FeedPage {
  ok: true;
  items: PublicEvent[];
  next_cursor: string | null;
  has_more: boolean;
}

/** One page of the team's feed after `after` (an event id), oldest first. */
export async function readFeed(
  store: EventStore,
  db: Executor,
  teamId: string,
  query: { after?: string | undefined; limit?: number | undefined; types?: readonly string[] | undefined },
): Promise<FeedPage> {
  const limit = query.limit ?? 50;
  let after: FeedPosition | null = null;
  if (query.after !== undefined && query.after !== '') {
    after = positionOf(query.after);
    if (!after) throw new ApiError('invalid_query', { details: 'after names no feed position (give a next_cursor or an event id from this feed)' });
  }
  const rows = await store.list(db, teamId, { after, limit: limit + 1, types: query.types });
  const items = rows.slice(0, limit).map(toPublicEvent);
  const last = items.at(-1);
  return { ok: true, items, next_cursor: last ? last.id : (query.after || null), has_more: rows.length > limit };
}

/** The team's kept events with these ids (unknown or malformed ids are left out). */
export async function findEvents(store: EventStore, db: Executor, teamId: string, ids: readonly string[]): Promise<EventRow[]> {
  const wanted = new Map<number, FeedPosition>();
  for (const id of ids) {
    const p = positionOf(id);
    if (p) wanted.set(p.seq, p);
  }
  const rows = await store.findBySeq(db, teamId, [...wanted.keys()]);
  return rows.filter((r) => wanted.get(Number(r.seq))?.tx === Number(r.tx_id));
}

/**
 * Retention: deletes every event older than `days` days, `batch` per statement, until none is
 * left; yields to other work between statements (each is its own short write). Returns how many.
 */
export async function pruneEvents(store: EventStore, db: Executor, now: Date, days: number, batch = 1000): Promise<number> {
  const before = new Date(now.getTime() - days * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const deleted = await store.prune(db, before, batch);
    total += deleted;
    if (deleted < batch) return total;
    await yieldToIo();
  }
}
