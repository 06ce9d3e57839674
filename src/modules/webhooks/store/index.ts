/**
 * The storage of webhook endpoints, deliveries and attempts: the statements of store/portable.ts,
 * the same on both databases, and the claim of due deliveries, whose row locking is each
 * database's (store/sqlite.ts, store/postgres.ts).
 */
import type { Executor } from '../../../db/database.js';
import type { WebhookDeliveryRow } from '../../../db/types.js';
import type { EventStore } from '../../events/index.js';
import type * as portable from './portable.js';
import type { DeliveryClaim, EndpointCursor } from './portable.js';

export type { DeliveryClaim, EndpointCursor };

export type WebhookStore = Omit<typeof portable, 'claimDueDeliveriesLocking'> & {
  /** Claims up to `claim.limit` due deliveries, fairly across endpoints (store/portable.ts `claimDueDeliveriesLocking`). */
  claimDueDeliveries(db: Executor, claim: DeliveryClaim): Promise<WebhookDeliveryRow[]>;
};

/** What the webhooks module reads and writes: its own tables, and the events feed it follows. */
export interface WebhookStores {
  webhooks: WebhookStore;
  events: EventStore;
}
