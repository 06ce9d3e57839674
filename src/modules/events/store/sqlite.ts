/**
 * SQLite: one writer at a time, so an event's `seq` is its commit order (`tx_id` stays 0) and a
 * reader is shown every committed event: no horizon.
 */
import type { EventStore } from './index.js';
import { eventStoreWithHorizon } from './portable.js';

export function createSqliteEventStore(): EventStore {
  return eventStoreWithHorizon(null);
}
