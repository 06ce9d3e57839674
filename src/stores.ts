/**
 * The composition root's choice of storage: the one place that looks at which database runs to
 * build each module's store (CONVENTIONS rule 10; docs/architecture.md, "The storage seam").
 * `app.ts`, `runtime.ts`, `worker.ts` and `cli/` build the stores once per database handle and
 * hand them to the services.
 */
import type { DatabaseHandle } from './db/database.js';
import { createPostgresOutboxClaim, createSqliteOutboxClaim, type OutboxClaim } from './db/outbox-claim.js';
import { createPostgresEventStore, createSqliteEventStore, type EventStore } from './modules/events/index.js';
import { createPostgresTeamStore, createSqliteTeamStore, type TeamStore } from './modules/teams/index.js';
import { createPostgresWebhookStore, createSqliteWebhookStore, type WebhookStore } from './modules/webhooks/index.js';

export interface Stores {
  /** The event log: what a feed reader may be shown (the PostgreSQL horizon). */
  events: EventStore;
  /** Webhook endpoints, deliveries (their fair claim) and attempts. */
  webhooks: WebhookStore;
  /** Authentication's caller lookup. */
  teams: TeamStore;
  /** The outbox workers' claim of due rows. */
  outbox: OutboxClaim;
}

export function createStores(database: Pick<DatabaseHandle, 'dialect'>): Stores {
  if (database.dialect === 'postgres') {
    return {
      events: createPostgresEventStore(),
      webhooks: createPostgresWebhookStore(),
      teams: createPostgresTeamStore(),
      outbox: createPostgresOutboxClaim(),
    };
  }
  return {
    events: createSqliteEventStore(),
    webhooks: createSqliteWebhookStore(),
    teams: createSqliteTeamStore(),
    outbox: createSqliteOutboxClaim(),
  };
}
