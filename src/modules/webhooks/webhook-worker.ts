/**
 * The webhook side of the outbox workers (API nodes or `invoicing worker`):
 *
 * 1. Fan-out: each enabled endpoint follows the team's events feed with its own cursor; new
 *    events of its types become deliveries (one per endpoint and event, ever), and the cursor
 *    moves, in one transaction. The feed's order is safe against concurrent transactions, so
 *    no event is skipped.
 * 2. Delivery: due deliveries are claimed with a lease (the outbox's claim), POSTed signed
 *    (Standard Webhooks 1.0), and settled fenced by the lease: a 2xx ends it; anything else is
 *    retried with exponential backoff and jitter until 3 days after it was queued. An endpoint
 *    whose attempts have failed for 3 days is disabled and `webhook_endpoint.disabled` recorded.
 * 3. Retention: events older than INVOICING_EVENT_RETENTION_DAYS are deleted, at most hourly.
 */
import type { DatabaseHandle, Db } from '../../db/database.js';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/types.js';
import { forEachLimited, newLeaseOwner, retryDelayMs, type WorkLogger } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import { countDelivery } from '../../shared/delivery-metrics.js';
import { PollingLoop } from '../../shared/polling-loop.js';
import { randomToken } from '../../shared/tokens.js';
import { eventsAfter, pruneEvents, recordTeamEvent, toPublicEvent } from '../events/index.js';
import { postWebhook } from './http-post.js';
import { signPayload, type SecretBox } from './secrets.js';
import type { UrlPolicy } from './url-safety.js';
import * as repo from './webhooks.repository.js';
import { deliveryBody } from './webhooks.service.js';
import { ATTR, inSpan, SPAN } from '../../shared/tracing.js';

export const RETRY_WINDOW_MS = 3 * 86_400_000;

export interface WebhookPolicy {
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  concurrency: number;
  batchSize: number;
  /** Endpoints read per query while fanning out; every enabled endpoint is visited each pass. */
  endpointPage: number;
  pollIntervalMs: number;
  eventRetentionDays: number;
}

export interface WebhookWorkerDeps {
  database: Pick<DatabaseHandle, 'db' | 'dialect'>;
  clock: Clock;
  box: SecretBox;
  urlPolicy: UrlPolicy;
  policy: WebhookPolicy;
  logger?: WorkLogger;
}

const FANOUT_PAGE = 200;
const PRUNE_EVERY_MS = 3_600_000;

export class WebhookWorker {
  readonly owner = newLeaseOwner();
  private readonly db: Db;
  private readonly loop: PollingLoop;
  private readonly abort = new AbortController();
  private lastPrune = 0;

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.db = deps.database.db;
    this.loop = new PollingLoop(
      () => this.runOnce().then((r) => r.more),
      deps.policy.pollIntervalMs,
      (err) => deps.logger?.error({ err }, 'webhook batch failed'),
      'webhook',
    );
  }

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop.stop();
  }

  /** Fan-out, then one batch of deliveries. */
  async runOnce(): Promise<{ queued: number; attempted: number; more: boolean }> {
    const fan = await this.fanOut();
    const rows = await repo.claimDueDeliveries(this.db, this.deps.database.dialect, {
      owner: this.owner,
      limit: this.deps.policy.batchSize,
      now: this.deps.clock.now(),
      leaseMs: this.deps.policy.timeoutMs + 60_000,
    });
    await forEachLimited(rows, this.deps.policy.concurrency, (row) => this.attempt(row));
    await this.maybePrune();
    return { queued: fan.queued, attempted: rows.length, more: fan.more || rows.length >= this.deps.policy.batchSize };
  }

  /** Runs until nothing is due now (tests, CLI). */
  async drain(maxRounds = 50): Promise<void> {
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      if (r.queued === 0 && r.attempted === 0) return;
    }
  }

  private async fanOut(): Promise<{ queued: number; more: boolean }> {
    let queued = 0;
    let more = false;
    // Every enabled endpoint of every team, a page at a time (keyset), so none is ever left out.
    let after: WebhookEndpointRow | null = null;
    for (;;) {
      const size = this.deps.policy.endpointPage;
      const page: WebhookEndpointRow[] = await repo.listEnabledEndpoints(this.db, after, size);
      for (const endpoint of page) {
        const r = await this.fanOutOne(endpoint);
        queued += r.queued;
        more ||= r.more;
      }
      if (page.length < size) return { queued, more };
      after = page.at(-1) ?? null;
    }
  }

  private async fanOutOne(endpoint: WebhookEndpointRow): Promise<{ queued: number; more: boolean }> {
    const cursor = { tx: Number(endpoint.cursor_tx), seq: Number(endpoint.cursor_seq) };
    const rows = await eventsAfter(this.db, endpoint.team_id, cursor, FANOUT_PAGE);
    const last = rows.at(-1);
    if (!last) return { queued: 0, more: false };
    const types = JSON.parse(endpoint.events) as string[];
    const wanted = rows.filter((r) => types.includes('*') || types.includes(r.type));
    const now = this.deps.clock.now().toISOString();
    const moved = await this.db.transaction().execute(async (trx) => {
      if (!(await repo.advanceCursor(trx, endpoint, { tx: Number(last.tx_id), seq: Number(last.seq) }))) return false;
      await repo.insertDeliveries(
        trx,
        wanted.map((r) => {
          const event = toPublicEvent(r);
          return {
            team_id: endpoint.team_id,
            id: randomToken(12),
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            body: deliveryBody(event),
            state: 'pending' as const,
            attempts: 0,
            next_attempt_at: now,
            created_at: now,
            updated_at: now,
          };
        }),
      );
      return true;
    });
    return { queued: moved ? wanted.length : 0, more: moved && rows.length >= FANOUT_PAGE };
  }

  /** The Standard Webhooks headers: one signature per valid secret (two during a rotation's overlap). */
  private headersFor(endpoint: WebhookEndpointRow, row: WebhookDeliveryRow, now: Date): Record<string, string> {
    const timestamp = Math.floor(now.getTime() / 1000);
    const secrets = [this.deps.box.open(endpoint.secret)];
    if (endpoint.previous_secret && endpoint.previous_secret_until && endpoint.previous_secret_until > now.toISOString()) {
      secrets.push(this.deps.box.open(endpoint.previous_secret));
    }
    return {
      'webhook-id': row.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': secrets.map((s) => signPayload(s, row.event_id, timestamp, row.body)).join(' '),
    };
  }

  /** One attempt of one claimed delivery, traced (a trace of its own: deliveries come from the events feed). */
  private attempt(row: WebhookDeliveryRow): Promise<void> {
    return inSpan(SPAN.webhookDelivery, { attributes: { [ATTR.teamId]: row.team_id, 'invoicing.event_type': row.event_type } }, () => this.attemptRow(row));
  }

  private async attemptRow(row: WebhookDeliveryRow): Promise<void> {
    const fence = { teamId: row.team_id, id: row.id, owner: this.owner };
    const endpoint = await repo.findEndpoint(this.db, row.team_id, row.endpoint_id);
    const started = this.deps.clock.now();
    if (!endpoint || (endpoint.enabled === 0 && row.event_type !== 'ping')) {
      const reason = endpoint ? 'the endpoint is disabled' : 'the endpoint was deleted';
      await repo.settleDelivery(this.db, fence, { state: 'failed', last_error: reason, updated_at: started.toISOString() });
      return;
    }
    const result = await postWebhook(endpoint.url, this.headersFor(endpoint, row, started), row.body, {
      timeoutMs: this.deps.policy.timeoutMs,
      policy: this.deps.urlPolicy,
      signal: this.abort.signal,
    });
    const now = this.deps.clock.now();
    const nowIso = now.toISOString();
    const ok = result.error === null;
    const windowEnd = new Date(row.created_at).getTime() + RETRY_WINDOW_MS;
    const final = !ok && now.getTime() >= windowEnd;
    const next = ok || final ? null : new Date(Math.min(now.getTime() + retryDelayMs(row.attempts, this.deps.policy), windowEnd)).toISOString();
    const error = result.error?.slice(0, 500) ?? null;
    const settled = await this.db.transaction().execute(async (trx) => {
      const values = ok
        ? { state: 'sent' as const, sent_at: nowIso, last_error: null, last_status_code: result.statusCode, updated_at: nowIso }
        : next
          ? { state: 'pending' as const, next_attempt_at: next, last_error: error, last_status_code: result.statusCode, updated_at: nowIso }
          : { state: 'failed' as const, last_error: error, last_status_code: result.statusCode, updated_at: nowIso };
      if (!(await repo.settleDelivery(trx, fence, values))) return false;
      await repo.insertAttempt(trx, {
        team_id: row.team_id,
        id: randomToken(12),
        endpoint_id: row.endpoint_id,
        delivery_id: row.id,
        event_id: row.event_id,
        attempt: row.attempts,
        status_code: result.statusCode,
        duration_ms: Math.min(result.durationMs, 3_600_000),
        error,
        at: nowIso,
        next_attempt_at: next,
      });
      if (row.event_type === 'ping') return true;
      if (ok) {
        if (endpoint.failing_since) await repo.updateEndpoint(trx, row.team_id, endpoint.id, { failing_since: null });
        return true;
      }
      const current = await repo.findEndpoint(trx, row.team_id, endpoint.id);
      if (!current || current.enabled === 0) return true;
      if (!current.failing_since) {
        await repo.updateEndpoint(trx, row.team_id, endpoint.id, { failing_since: nowIso });
      } else if (now.getTime() - new Date(current.failing_since).getTime() >= RETRY_WINDOW_MS) {
        const reason = 'failing_for_3_days';
        await repo.updateEndpoint(trx, row.team_id, endpoint.id, { enabled: 0, disabled_reason: reason, updated_at: nowIso });
        await repo.failPendingDeliveries(trx, row.team_id, endpoint.id, nowIso, 'the endpoint was disabled');
        await recordTeamEvent(trx, {
          teamId: row.team_id,
          type: 'webhook_endpoint.disabled',
          now: nowIso,
          data: { endpoint_id: endpoint.id, url: endpoint.url, reason },
        });
        this.deps.logger?.warn({ endpoint_id: endpoint.id, team_id: row.team_id }, 'webhook endpoint disabled after failing for 3 days');
      }
      return true;
    });
    if (settled) countDelivery('webhook', ok ? 'sent' : next ? 'retry' : 'failed');
  }

  private async maybePrune(): Promise<void> {
    const now = this.deps.clock.now();
    if (now.getTime() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now.getTime();
    await pruneEvents(this.db, now, this.deps.policy.eventRetentionDays);
  }
}
