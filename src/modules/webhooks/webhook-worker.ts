/**
 * The webhook side of the outbox workers (API nodes or `invoicing worker`):
 *
 * 1. Fan-out (webhook-fan-out.ts): each enabled endpoint follows the team's events feed with its
 *    own cursor; new events of its types become deliveries, within its backlog bound.
 * 2. Delivery: `concurrency` attempt slots per worker. Due deliveries are claimed with a lease as
 *    slots free up, fairly across endpoints (at most `endpointConcurrency` under way per endpoint,
 *    every endpoint's first due delivery before any endpoint's second), POSTed signed (Standard
 *    Webhooks 1.0) and settled fenced by the lease: a 2xx ends it; anything else is retried with
 *    exponential backoff and jitter until 3 days after it was queued. An endpoint whose attempts
 *    have failed for 3 days, or whose secret cannot be decrypted, is disabled and
 *    `webhook_endpoint.disabled` recorded.
 * 3. Retention (webhook-retention.ts): its own loop, hourly, each pass until done.
 */
import type { DatabaseHandle, Db } from '../../db/database.js';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/types.js';
import { newLeaseOwner, retryDelayMs, type WorkLogger } from '../../shared/background-work.js';
import type { Clock } from '../../shared/clock.js';
import { countDelivery } from '../../shared/delivery-metrics.js';
import { PollingLoop } from '../../shared/polling-loop.js';
import { randomToken } from '../../shared/tokens.js';
import { recordTeamEvent } from '../events/index.js';
import type { HostResolver } from './host-resolver.js';
import { postWebhook } from './http-post.js';
import { signPayload, type SecretBox } from './secrets.js';
import type { UrlPolicy } from './url-safety.js';
import { fanOut } from './webhook-fan-out.js';
import { pruneWebhookHistory, type RetentionResult } from './webhook-retention.js';
import type { WebhookStore, WebhookStores } from './store/index.js';
import type { DisabledReason } from './webhooks.service.js';
import { deliveryBody } from './webhooks.service.js';
import { ATTR, inSpan, SPAN } from '../../shared/tracing.js';

export const RETRY_WINDOW_MS = 3 * 86_400_000;

export interface WebhookPolicy {
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts under way at once in this worker. */
  concurrency: number;
  /** Attempts under way at once to one endpoint, across workers (a claim's bound). */
  endpointConcurrency: number;
  /** Due deliveries one claim looks at, oldest first, to choose from. */
  claimScan: number;
  /** Endpoints read per query while fanning out; every enabled endpoint is visited each pass. */
  endpointPage: number;
  pollIntervalMs: number;
  eventRetentionDays: number;
  deliveryRetentionDays: number;
}

export interface WebhookWorkerDeps {
  database: Pick<DatabaseHandle, 'db'>;
  stores: WebhookStores;
  clock: Clock;
  box: SecretBox;
  urlPolicy: UrlPolicy;
  resolver: HostResolver;
  policy: WebhookPolicy;
  logger?: WorkLogger;
}

/** Retention runs hourly, the first time 1–2 minutes after start (at random: workers started together spread out). */
const RETENTION_EVERY_MS = 3_600_000;
const RETENTION_FIRST_MS = 60_000;

class SecretUnreadable extends Error {}

export class WebhookWorker {
  readonly owner = newLeaseOwner();
  private readonly db: Db;
  private readonly store: WebhookStore;
  private readonly loop: PollingLoop;
  private readonly retention: PollingLoop;
  private readonly abort = new AbortController();
  /** The attempts under way in this worker (one slot each). */
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.db = deps.database.db;
    this.store = deps.stores.webhooks;
    this.loop = new PollingLoop(
      () => this.tick(),
      deps.policy.pollIntervalMs,
      (err) => deps.logger?.error({ err }, 'webhook batch failed'),
      'webhook',
    );
    this.retention = new PollingLoop(
      async () => {
        await this.runRetention();
        return false;
      },
      RETENTION_EVERY_MS,
      (err) => deps.logger?.error({ err }, 'webhook retention failed'),
    );
  }

  start(): void {
    this.loop.start();
    this.retention.start(RETENTION_FIRST_MS * (1 + Math.random()));
  }

  wake(): void {
    this.loop.wake();
  }

  /** Stops polling; attempts under way are aborted (and retried later, as a failed attempt). */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([this.loop.stop(), this.retention.stop()]);
    await Promise.allSettled([...this.running]);
  }

  /** The background loop's pass: fan-out, then fill the free slots; attempts run on (each frees its slot and wakes the loop). */
  private async tick(): Promise<boolean> {
    const fan = await fanOut(this.deps.stores, this.db, this.deps.clock, this.deps.policy.endpointPage);
    await this.fillSlots();
    return fan.more;
  }

  /** Fan-out, then fill the free slots and wait for those attempts (tests, CLI). */
  async runOnce(): Promise<{ queued: number; attempted: number; more: boolean }> {
    const fan = await fanOut(this.deps.stores, this.db, this.deps.clock, this.deps.policy.endpointPage);
    const started = await this.fillSlots();
    await Promise.all(started);
    return { queued: fan.queued, attempted: started.length, more: fan.more || started.length >= this.deps.policy.concurrency };
  }

  /** Runs until nothing is due now (tests, CLI). */
  async drain(maxRounds = 50): Promise<void> {
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      if (r.queued === 0 && r.attempted === 0) return;
    }
  }

  /** One retention pass (webhook-retention.ts). */
  async runRetention(): Promise<RetentionResult> {
    const { eventRetentionDays, deliveryRetentionDays } = this.deps.policy;
    return pruneWebhookHistory(this.deps.stores, this.db, this.deps.clock.now(), { eventRetentionDays, deliveryRetentionDays });
  }

  /**
   * Claims for the free slots until they are full or nothing more is due, and starts each attempt.
   * A claim that stops short because endpoints reached their bound is followed by another, which
   * passes over them to other endpoints' deliveries.
   */
  private async fillSlots(): Promise<Promise<void>[]> {
    const started: Promise<void>[] = [];
    for (;;) {
      const free = this.deps.policy.concurrency - this.running.size;
      if (free <= 0 || this.abort.signal.aborted) return started;
      const rows = await this.store.claimDueDeliveries(this.db, {
        owner: this.owner,
        limit: free,
        now: this.deps.clock.now(),
        leaseMs: this.deps.policy.timeoutMs + 60_000,
        perEndpoint: this.deps.policy.endpointConcurrency,
        scan: this.deps.policy.claimScan,
      });
      if (rows.length === 0) return started;
      for (const row of rows) started.push(this.launch(row));
    }
  }

  private launch(row: WebhookDeliveryRow): Promise<void> {
    const run: Promise<void> = this.attempt(row)
      .catch((err: unknown) => this.deps.logger?.error({ err, team_id: row.team_id, endpoint_id: row.endpoint_id }, 'webhook attempt failed'))
      .finally(() => {
        this.running.delete(run);
        this.loop.wake();
      });
    this.running.add(run);
    return run;
  }

  /**
   * The Standard Webhooks headers: one signature per readable secret (two during a rotation's
   * overlap). A previous secret that cannot be decrypted is left out; the current one must be.
   */
  private headersFor(endpoint: WebhookEndpointRow, row: WebhookDeliveryRow, now: Date): Record<string, string> {
    const timestamp = Math.floor(now.getTime() / 1000);
    const open = (sealed: string): string | null => {
      try {
        return this.deps.box.open(sealed);
      } catch {
        return null;
      }
    };
    const current = open(endpoint.secret);
    if (current === null) throw new SecretUnreadable();
    const secrets = [current];
    if (endpoint.previous_secret && endpoint.previous_secret_until && endpoint.previous_secret_until > now.toISOString()) {
      const previous = open(endpoint.previous_secret);
      if (previous !== null) secrets.push(previous);
    }
    return {
      'webhook-id': row.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': secrets.map((s) => signPayload(s, row.event_id, timestamp, row.body)).join(' '),
    };
  }

  /** One attempt of one claimed delivery, traced (a trace of its own: deliveries come from the events feed). */
  private attempt(row: WebhookDeliveryRow): Promise<void> {
    return inSpan(SPAN.webhookDelivery, { attributes: { [ATTR.teamId]: row.team_id, 'invoicing.event_type': row.event_type }, traceparent: row.traceparent }, () => this.attemptRow(row));
  }

  private async attemptRow(row: WebhookDeliveryRow): Promise<void> {
    const fence = { teamId: row.team_id, id: row.id, owner: this.owner };
    const endpoint = await this.store.findEndpoint(this.db, row.team_id, row.endpoint_id);
    const started = this.deps.clock.now();
    if (!endpoint || (endpoint.enabled === 0 && row.event_type !== 'ping')) {
      const reason = endpoint ? 'the endpoint is disabled' : 'the endpoint was deleted';
      await this.store.settleDelivery(this.db, fence, { state: 'failed', last_error: reason, updated_at: started.toISOString() });
      return;
    }
    let headers: Record<string, string>;
    try {
      headers = this.headersFor(endpoint, row, started);
    } catch (err) {
      if (!(err instanceof SecretUnreadable)) throw err;
      return this.failUnreadableSecret(row, endpoint, started);
    }
    const result = await postWebhook(endpoint.url, headers, row.body, {
      timeoutMs: this.deps.policy.timeoutMs,
      policy: this.deps.urlPolicy,
      resolver: this.deps.resolver,
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
      if (!(await this.store.settleDelivery(trx, fence, values))) return false;
      await this.store.insertAttempt(trx, {
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
        if (endpoint.failing_since) await this.store.updateEndpoint(trx, row.team_id, endpoint.id, { failing_since: null });
        return true;
      }
      const current = await this.store.findEndpoint(trx, row.team_id, endpoint.id);
      if (!current || current.enabled === 0) return true;
      if (!current.failing_since) {
        await this.store.updateEndpoint(trx, row.team_id, endpoint.id, { failing_since: nowIso });
      } else if (now.getTime() - new Date(current.failing_since).getTime() >= RETRY_WINDOW_MS) {
        await this.disable(trx, current, 'failing_for_3_days', nowIso);
      }
      return true;
    });
    if (settled) countDelivery('webhook', ok ? 'sent' : next ? 'retry' : 'failed');
  }

  /**
   * The endpoint's secret cannot be decrypted with this service secret (INVOICING_SECRET changed):
   * no attempt can be signed, now or later. The delivery fails at once with the reason (listed
   * among the attempts) and the endpoint is disabled (`secret_unreadable`), so nothing is retried
   * for ever; rotating the secret and re-enabling the endpoint resumes deliveries.
   */
  private async failUnreadableSecret(row: WebhookDeliveryRow, endpoint: WebhookEndpointRow, at: Date): Promise<void> {
    const nowIso = at.toISOString();
    const reason = "the endpoint's signing secret cannot be decrypted with the service secret (INVOICING_SECRET changed): rotate the secret, then re-enable the endpoint";
    const fence = { teamId: row.team_id, id: row.id, owner: this.owner };
    const settled = await this.db.transaction().execute(async (trx) => {
      if (!(await this.store.settleDelivery(trx, fence, { state: 'failed', last_error: reason, last_status_code: null, updated_at: nowIso }))) return false;
      await this.store.insertAttempt(trx, {
        team_id: row.team_id,
        id: randomToken(12),
        endpoint_id: row.endpoint_id,
        delivery_id: row.id,
        event_id: row.event_id,
        attempt: row.attempts,
        status_code: null,
        duration_ms: 0,
        error: reason,
        at: nowIso,
        next_attempt_at: null,
      });
      const current = await this.store.findEndpoint(trx, row.team_id, endpoint.id);
      if (current && current.enabled === 1 && current.secret === endpoint.secret) await this.disable(trx, current, 'secret_unreadable', nowIso);
      return true;
    });
    if (settled) countDelivery('webhook', 'failed');
  }

  /** Disables the endpoint, fails its waiting deliveries and records `webhook_endpoint.disabled`. */
  private async disable(trx: Parameters<WebhookStore['updateEndpoint']>[0], endpoint: WebhookEndpointRow, reason: DisabledReason, nowIso: string): Promise<void> {
    await this.store.updateEndpoint(trx, endpoint.team_id, endpoint.id, { enabled: 0, disabled_reason: reason, updated_at: nowIso });
    await this.store.failPendingDeliveries(trx, endpoint.team_id, endpoint.id, nowIso, 'the endpoint was disabled');
    await recordTeamEvent(trx, {
      teamId: endpoint.team_id,
      type: 'webhook_endpoint.disabled',
      now: nowIso,
      data: { endpoint_id: endpoint.id, url: endpoint.url, reason },
    });
    this.deps.logger?.warn({ endpoint_id: endpoint.id, team_id: endpoint.team_id, reason }, 'webhook endpoint disabled');
  }
}
