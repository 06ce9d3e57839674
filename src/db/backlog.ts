/**
 * How far the background deliveries are behind, read for `/metrics` on each scrape (never per
 * request): for each channel, how long its oldest due item has waited. Due means what a worker
 * would claim now: waiting with its attempt time passed, or claimed with its lease lapsed
 * (outbox-claim.ts), plus the sends a create recorded in its document's row and no worker has
 * written out yet (`invoices.email_pending`, `invoices.edo_pending_job`). An item waiting for a
 * retry's backoff is not late and does not count.
 *
 * Each read is served by an index: `outbox_due_idx` and `webhook_deliveries_due_idx`
 * (state, next_attempt_at), and the partial indexes holding exactly the recorded rows.
 */
import { sql } from 'kysely';
import type { Db } from './database.js';

export type BacklogChannel = 'email' | 'edo' | 'webhook';

/** Seconds the oldest due item of each channel has waited at `now` (0 when none is due). */
export async function deliveryBacklogAges(db: Db, now: Date): Promise<Record<BacklogChannel, number>> {
  const at = now.toISOString();
  const due = sql<boolean>`((state = 'pending' and next_attempt_at <= ${at}) or (state = 'sending' and locked_until <= ${at}))`;
  const since = sql<string>`min(case when state = 'pending' then next_attempt_at else locked_until end)`;
  const [outbox, webhooks, recordedEmail, recordedEdo] = await Promise.all([
    db.selectFrom('outbox').select(['kind', since.as('since')]).where(due).groupBy('kind').execute(),
    db.selectFrom('webhook_deliveries').select(since.as('since')).where(due).executeTakeFirst(),
    db.selectFrom('invoices').select(sql<string>`min(created_at)`.as('since')).where('email_pending', 'is not', null).executeTakeFirst(),
    db.selectFrom('invoices').select(sql<string>`min(created_at)`.as('since')).where('edo_pending_job', 'is not', null).executeTakeFirst(),
  ]);
  const age = (...times: Array<string | null | undefined>) => {
    const oldest = Math.min(...times.filter((t): t is string => typeof t === 'string').map((t) => Date.parse(t)));
    return Number.isFinite(oldest) ? Math.max(0, (now.getTime() - oldest) / 1000) : 0;
  };
  return {
    email: age(outbox.find((r) => r.kind === 'email')?.since, recordedEmail?.since),
    edo: age(outbox.find((r) => r.kind === 'edo_send')?.since, recordedEdo?.since),
    webhook: age(webhooks?.since),
  };
}
