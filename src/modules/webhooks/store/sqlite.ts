/** SQLite: one writer at a time, so a claim's read sees every earlier claim and locks nothing itself. */
import { sql } from 'kysely';
import type { WebhookStore } from './index.js';
import * as portable from './portable.js';

export function createSqliteWebhookStore(): WebhookStore {
  return { ...portable, claimDueDeliveries: portable.claimDueDeliveriesLocking(sql``) };
}
