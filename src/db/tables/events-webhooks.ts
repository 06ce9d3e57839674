/**
 * The tables of the events module (the event log) and of the webhooks module (endpoints,
 * deliveries, attempts). Conventions: src/db/types.ts.
 */
import type { Generated, Selectable } from 'kysely';

/**
 * One change an integrator cares about, written in the change's transaction. Feed order is
 * (`tx_id`, `seq`); see the events module.
 */
export interface EventsTable {
  seq: Generated<number>;
  team_id: string;
  /** PostgreSQL: the writing transaction's id; SQLite: 0. */
  tx_id: Generated<number>;
  type: string;
  public_id: string | null;
  revision: number | null;
  /** The event's `data` (JSON). */
  data: string;
  created_at: string;
  /** The W3C traceparent of the write that recorded it, when tracing is on: its webhook deliveries continue it. */
  traceparent: Generated<string | null>;
}

export interface WebhookEndpointsTable {
  team_id: string;
  id: string;
  url: string;
  /** JSON array of event types, or `["*"]`. */
  events: string;
  description: string;
  enabled: number;
  disabled_reason: string | null;
  /** The signing secret, encrypted with a key derived from the service secret. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  /** The last feed position fanned out to this endpoint. */
  cursor_tx: number;
  cursor_seq: number;
  /** Set at the first failed attempt after a success; the endpoint is disabled 3 days later. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryState = 'pending' | 'sending' | 'sent' | 'failed';

/** One event to one endpoint, leased like an outbox row. */
export interface WebhookDeliveriesTable {
  team_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The JSON body as sent (`{type, timestamp, data}`), the same on every attempt. */
  body: string;
  state: WebhookDeliveryState;
  attempts: number;
  next_attempt_at: string;
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  last_status_code: number | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
  /** The event's traceparent: the delivery's span continues the write that caused it. */
  traceparent: Generated<string | null>;
}

export interface WebhookAttemptsTable {
  team_id: string;
  id: string;
  endpoint_id: string;
  delivery_id: string;
  event_id: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  at: string;
  next_attempt_at: string | null;
}

export interface EventsTables {
  events: EventsTable;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export type EventRow = Selectable<EventsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
