/**
 * Delivery outcomes of the background channels (e-mail, EDO, webhooks), counted where the
 * outcome is recorded. One process-wide counter, registered into the registry of whatever
 * serves /metrics in the process (an API node's app, or `invoicing worker`'s metrics port).
 */
import { Counter } from 'prom-client';

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
