/** PostgreSQL: workers claiming at the same moment take disjoint deliveries (`FOR UPDATE SKIP LOCKED`). */
import { sql } from 'kysely';
import type { WebhookStore } from './index.js';
import * as portable from './portable.js';

export function createPostgresWebhookStore(): WebhookStore {
  return { ...portable, claimDueDeliveries: portable.claimDueDeliveriesLocking(sql`for update skip locked`) };
}
