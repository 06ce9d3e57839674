/**
 * Retention of the webhook side: events older than INVOICING_EVENT_RETENTION_DAYS, and webhook
 * deliveries (finished: sent or failed) and attempts older than INVOICING_DELIVERY_RETENTION_DAYS.
 * Each table is emptied of what is older, RETENTION_BATCH rows per statement, until none is left:
 * each statement is a short write of its own and the pass yields between them, so a large backlog
 * (a first pass over months of history) never holds the database in one long transaction and never
 * stops other work for long. Several workers may run it at once: they delete the same old rows or
 * disjoint ones, harmlessly.
 */
import type { Db } from '../../db/database.js';
import { yieldToIo } from '../../shared/background-work.js';
import { pruneEvents } from '../events/index.js';
import type { WebhookStores } from './store/index.js';

/** Rows per statement: a few milliseconds of work on either database. */
export const RETENTION_BATCH = 1_000;

export interface RetentionPolicy {
  eventRetentionDays: number;
  deliveryRetentionDays: number;
}

export interface RetentionResult {
  events: number;
  deliveries: number;
  attempts: number;
}

function daysBefore(now: Date, days: number): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}

async function untilDone(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await batch();
    total += deleted;
    if (deleted < RETENTION_BATCH) return total;
    await yieldToIo();
  }
}

/** One retention pass, run until nothing older than the retentions is left. */
export async function pruneWebhookHistory(stores: WebhookStores, db: Db, now: Date, policy: RetentionPolicy): Promise<RetentionResult> {
  const repo = stores.webhooks;
  const events = await pruneEvents(stores.events, db, now, policy.eventRetentionDays, RETENTION_BATCH);
  const before = daysBefore(now, policy.deliveryRetentionDays);
  const attempts = await untilDone(() => repo.pruneAttempts(db, before, RETENTION_BATCH));
  const deliveries = await untilDone(() => repo.pruneDeliveries(db, before, RETENTION_BATCH));
  return { events, deliveries, attempts };
}
