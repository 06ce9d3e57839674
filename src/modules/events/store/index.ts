/**
 * The storage of the event log. The feed position of an event is (`tx_id`, `seq`), and what
 * differs between the databases is which events a reader may be shown yet:
 *
 * - PostgreSQL: `seq` comes from a sequence when the row is inserted, but transactions commit
 *   out of `seq` order, so `seq` alone would let a reader skip an event committed later with a
 *   lower `seq`. `tx_id` is the writing transaction's id (the column's default), and a reader is
 *   shown only events whose transaction is below the feed horizon (store/postgres.ts), so
 *   everything that commits afterwards has a larger `tx_id` and sorts after whatever was read.
 * - SQLite: one writer at a time, so `seq` is the commit order and `tx_id` stays 0 (store/sqlite.ts).
 *
 * The writes (an event appended in its change's transaction, retention) are the same statement
 * on both databases (store/portable.ts). Everything is scoped by team except retention, which
 * deletes by age, and `cursorsWithNewEvents`, which asks for several teams at once.
 */
import type { CompiledQuery } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { EventRow } from '../../../db/types.js';

/** A place in a team's feed: an event's (`tx_id`, `seq`). */
export interface FeedPosition {
  tx: number;
  seq: number;
}

/** An event to append: its row but the position, which the database gives. */
export interface NewEvent {
  teamId: string;
  type: string;
  publicId: string | null;
  revision: number | null;
  data: string;
  createdAt: string;
  /** The W3C traceparent of the write (null when tracing is off): webhook deliveries continue it. */
  traceparent: string | null;
}

export interface EventStore {
  /** Appends `events` in this order (their `seq` follows it) with the transaction `trx` of the change they describe. */
  append(trx: Executor, events: readonly NewEvent[]): Promise<void>;
  /** The append of one event bound but not run, for a writer that runs its statements later (`executeCompiled`). */
  appendQuery(db: Executor, event: NewEvent): CompiledQuery;
  /** The team's events after `after` (exclusive), in feed order, only those a reader may be shown now. */
  list(db: Executor, teamId: string, options: { after: FeedPosition | null; limit: number; types?: readonly string[] | undefined }): Promise<EventRow[]>;
  /** The position of the team's newest event a reader may be shown (where a new subscriber starts), or the start. */
  latestPosition(db: Executor, teamId: string): Promise<FeedPosition>;
  /** The team's kept events with these `seq`s, in feed order. */
  findBySeq(db: Executor, teamId: string, seqs: readonly number[]): Promise<EventRow[]>;
  /**
   * Of `cursors` (a team and a feed position each), the indexes of those after which the team has
   * an event a reader may be shown now: one statement for all of them.
   */
  cursorsWithNewEvents(db: Executor, cursors: readonly { teamId: string; position: FeedPosition }[]): Promise<number[]>;
  /** Deletes up to `batch` events created before `before` (one statement); returns how many. */
  prune(db: Executor, before: string, batch: number): Promise<number>;
}
