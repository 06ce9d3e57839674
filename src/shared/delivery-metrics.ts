/**
 * Delivery outcomes of the background channels (e-mail, EDO, webhooks), counted where the
 * outcome is recorded. One process-wide counter, registered into the registry of whatever
 * serves /metrics in the process (an API node's app, or `invoicing worker`'s metrics port).
 */
import { Counter, Gauge } from 'prom-client';

export type DeliveryChannel = 'email' | 'edo' | 'webhook';
/** `sent` (delivered), `retry` (failed, retried later), `failed` (given up). */
export type DeliveryOutcome = 'sent' | 'retry' | 'failed';

export const deliveryOutcomes = new Counter({
  name: 'invoicing_deliveries_total',
  help: 'Background delivery attempts by channel (email, edo, webhook) and outcome (sent, retry, failed)',
  labelNames: ['channel', 'outcome'] as const,
  registers: [],
});

export function countDelivery(channel: DeliveryChannel, outcome: DeliveryOutcome | 'pending' | null): void {
  if (outcome === null) return;
  deliveryOutcomes.inc({ channel, outcome: outcome === 'pending' ? 'retry' : outcome });
}

/** The background loops that report a heartbeat: the ones whose standing still should page someone. */
export type WorkerLoop = 'email' | 'edo' | 'webhook';

/**
 * When each background loop of this process last finished a pass without an error (Unix
 * seconds). Set once per pass (every poll interval, a few seconds), never per request; over
 * several processes the newest counts (`max`): the loops of one kind share the work.
 */
export const workerHeartbeats = new Gauge({
  name: 'invoicing_worker_last_pass_timestamp_seconds',
  help: 'When the background loop (email, edo, webhook) last finished a pass without an error, in Unix seconds',
  labelNames: ['loop'] as const,
  aggregator: 'max',
  registers: [],
});
