/**
 * Webhook endpoints of a team (contract 5 and 7): create with a secret shown once, list, read,
 * change, delete, rotate the secret with an overlap, queue a test ping, replay events, list
 * delivery attempts. Another team's endpoint is a 404 like an unknown one. An endpoint holds at
 * most MAX_UNDELIVERED deliveries still to make: `test` and `replay` past it are a 409.
 */
import type { Db, Executor } from '../../db/database.js';
import type { WebhookEndpointRow } from '../../db/types.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { ApiError } from '../../shared/errors.js';
import { yieldToIo } from '../../shared/background-work.js';
import { randomToken } from '../../shared/tokens.js';
import { findEvents, toPublicEvent, type PublicEvent } from '../events/index.js';
import { lockTeam, type AuthContext } from '../teams/index.js';
import { newSigningSecret, type SecretBox } from './secrets.js';
import type { HostResolver } from './host-resolver.js';
import { checkLiteralHost, checkUrlForm, checkWebhookUrl, UnsafeUrlError, type UrlPolicy } from './url-safety.js';
import type { WebhookStores } from './store/index.js';
import type { CreateEndpointBody, PatchEndpointBody } from './webhooks.schemas.js';

export interface WebhookEndpointView {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  created_at: string;
  disabled_reason: DisabledReason | null;
}

/**
 * Why the service disabled an endpoint: its attempts failed for the whole retry window, or its
 * signing secret cannot be decrypted (INVOICING_SECRET changed): rotate it, then re-enable.
 */
export type DisabledReason = 'failing_for_3_days' | 'secret_unreadable';

/**
 * The most deliveries still to make (pending or under way) one endpoint holds. An endpoint that
 * does not answer then holds at most this many rows; its 3-day retry window ends the rest.
 */
export const MAX_UNDELIVERED = 1_000;

/** Rows deleted per statement when an endpoint's history goes. */
const HISTORY_BATCH = 1_000;

export interface WebhooksServiceDeps {
  db: Db;
  stores: WebhookStores;
  clock: Clock;
  policy: UrlPolicy;
  /** The bounded resolver the URL check asks (host-resolver.ts). */
  resolver: HostResolver;
  box: SecretBox;
  /** Called after a commit that queued deliveries (wakes the worker of this node). */
  onQueued?: () => void;
}

export function endpointView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: row.enabled === 1,
    created_at: row.created_at,
    disabled_reason: row.disabled_reason === null ? null : row.disabled_reason === 'secret_unreadable' ? 'secret_unreadable' : 'failing_for_3_days',
  };
}

/** The body every delivery of `event` carries (Standard Webhooks: `{type, timestamp, data}`). */
export function deliveryBody(event: Pick<PublicEvent, 'created_at' | 'data'> & { type: PublicEvent['type'] | 'ping' }): string {
  return JSON.stringify({ type: event.type, timestamp: event.created_at, data: event.data });
}

function notFound(id: string): ApiError {
  return new ApiError('webhook_endpoint_not_found', { details: `no webhook endpoint ${id} in this team` });
}

function normalizeEvents(events: readonly string[] | undefined): string[] {
  if (!events || events.includes('*')) return ['*'];
  return [...new Set(events)];
}

export class WebhooksService {
  private readonly store: WebhookStores['webhooks'];

  constructor(private readonly deps: WebhooksServiceDeps) {
    this.store = deps.stores.webhooks;
  }

  /** The URL's checks; with `resolve` false, its form and an IP-literal host only (a demo dry-run never reaches DNS). */
  private async safeUrl(url: string, resolve = true): Promise<string> {
    try {
      if (resolve) await checkWebhookUrl(url, this.deps.policy, this.deps.resolver);
      else checkLiteralHost(checkUrlForm(url, this.deps.policy), this.deps.policy);
      return url;
    } catch (err) {
      if (err instanceof UnsafeUrlError) throw new ApiError('invalid_webhook_url', { details: err.message });
      throw err;
    }
  }

  /**
   * Runs `work` with the endpoint's row locked, after checking that `adding` more deliveries keep
   * it within MAX_UNDELIVERED (409 webhook_backlog_full otherwise).
   */
  private async withinBacklog<T>(row: WebhookEndpointRow, adding: number, work: (trx: Executor) => Promise<T>): Promise<T> {
    return this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.store.lockEndpoint(trx, row.team_id, row.id))) throw notFound(row.id);
      const undelivered = await this.store.countUndelivered(trx, row.team_id, row.id, MAX_UNDELIVERED);
      if (undelivered + adding > MAX_UNDELIVERED) {
        throw new ApiError('webhook_backlog_full', {
          details: `the endpoint has ${undelivered} deliveries still to make and holds at most ${MAX_UNDELIVERED}: wait until they are delivered or given up`,
        });
      }
      return work(trx);
    });
  }

  private async own(auth: AuthContext, id: string): Promise<WebhookEndpointRow> {
    if (auth.mode === 'demo') throw notFound(id);
    const row = await this.store.findEndpoint(this.deps.db, auth.teamId, id);
    if (!row) throw notFound(id);
    return row;
  }

  async create(auth: AuthContext, body: CreateEndpointBody): Promise<{ ok: true; endpoint: WebhookEndpointView; secret: string; demo_mode?: true }> {
    const url = await this.safeUrl(body.url, auth.mode !== 'demo');
    const now = isoNow(this.deps.clock);
    const secret = newSigningSecret();
    const view: WebhookEndpointView = {
      id: `we_${randomToken(12)}`,
      url,
      events: normalizeEvents(body.events),
      description: body.description ?? '',
      enabled: body.enabled ?? true,
      created_at: now,
      disabled_reason: null,
    };
    // Demo mode: a dry-run like every demo write; nothing is stored.
    if (auth.mode === 'demo') return { ok: true, endpoint: view, secret, demo_mode: true };
    const max = auth.tariff.max_webhook_endpoints;
    await this.deps.db.transaction().execute(async (trx) => {
      // Concurrent creates of one team queue here, so together they never pass the limit.
      await lockTeam(trx, auth.teamId);
      if ((await this.store.countEndpoints(trx, auth.teamId)) >= max) {
        throw new ApiError('webhook_endpoints_over_tariff_limit', { details: `the team's tariff allows ${max} webhook endpoint(s)` });
      }
      // A new endpoint receives what happens from now on (the feed has the past).
      const cursor = await this.deps.stores.events.latestPosition(trx, auth.teamId);
      await this.store.insertEndpoint(trx, {
        team_id: auth.teamId,
        id: view.id,
        url,
        events: JSON.stringify(view.events),
        description: view.description,
        enabled: view.enabled ? 1 : 0,
        disabled_reason: null,
        secret: this.deps.box.seal(secret),
        previous_secret: null,
        previous_secret_until: null,
        cursor_tx: cursor.tx,
        cursor_seq: cursor.seq,
        failing_since: null,
        created_at: now,
        updated_at: now,
      });
    });
    return { ok: true, endpoint: view, secret };
  }

  async list(auth: AuthContext): Promise<{ ok: true; items: WebhookEndpointView[] }> {
    if (auth.mode === 'demo') return { ok: true, items: [] };
    return { ok: true, items: (await this.store.listEndpoints(this.deps.db, auth.teamId)).map(endpointView) };
  }

  async get(auth: AuthContext, id: string): Promise<{ ok: true; endpoint: WebhookEndpointView }> {
    return { ok: true, endpoint: endpointView(await this.own(auth, id)) };
  }

  async update(auth: AuthContext, id: string, body: PatchEndpointBody): Promise<{ ok: true; endpoint: WebhookEndpointView }> {
    const row = await this.own(auth, id);
    const now = isoNow(this.deps.clock);
    const values: Parameters<WebhookStores['webhooks']['updateEndpoint']>[3] = { updated_at: now };
    if (body.url !== undefined) values.url = await this.safeUrl(body.url);
    if (body.events !== undefined) values.events = JSON.stringify(normalizeEvents(body.events));
    if (body.description !== undefined) values.description = body.description;
    if (body.enabled !== undefined) {
      values.enabled = body.enabled ? 1 : 0;
      if (body.enabled && row.enabled === 0) {
        // Re-enabled: deliveries resume from now; what happened meanwhile is in the feed (or replay it).
        const cursor = await this.deps.stores.events.latestPosition(this.deps.db, row.team_id);
        Object.assign(values, { cursor_tx: cursor.tx, cursor_seq: cursor.seq, disabled_reason: null, failing_since: null });
      }
    }
    await this.store.updateEndpoint(this.deps.db, row.team_id, id, values);
    return this.get(auth, id);
  }

  /**
   * The endpoint goes at once (one statement: nothing more is delivered to it), then its
   * deliveries and attempts, HISTORY_BATCH rows per statement, each its own short write, so a long
   * history never holds the database in one transaction. What an interrupted deletion leaves
   * behind, retention deletes by age (INVOICING_DELIVERY_RETENTION_DAYS).
   */
  async remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    const row = await this.own(auth, id);
    await this.store.deleteEndpoint(this.deps.db, row.team_id, id);
    while ((await this.store.deleteEndpointHistory(this.deps.db, row.team_id, id, HISTORY_BATCH)) > 0) await yieldToIo();
    return { ok: true };
  }

  async rotateSecret(auth: AuthContext, id: string, overlapSec: number): Promise<{ ok: true; secret: string }> {
    const row = await this.own(auth, id);
    const now = this.deps.clock.now();
    const secret = newSigningSecret();
    const until = overlapSec > 0 ? new Date(now.getTime() + overlapSec * 1000).toISOString() : null;
    await this.store.updateEndpoint(this.deps.db, row.team_id, id, {
      secret: this.deps.box.seal(secret),
      previous_secret: until ? row.secret : null,
      previous_secret_until: until,
      updated_at: now.toISOString(),
    });
    return { ok: true, secret };
  }

  async test(auth: AuthContext, id: string): Promise<{ ok: true; event_id: string }> {
    const row = await this.own(auth, id);
    const now = isoNow(this.deps.clock);
    const eventId = `evt_test_${randomToken(12)}`;
    const ping = {
      team_id: row.team_id,
      id: randomToken(12),
      endpoint_id: id,
      event_id: eventId,
      event_type: 'ping',
      body: deliveryBody({ type: 'ping', created_at: now, data: { endpoint_id: id } }),
      state: 'pending' as const,
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    };
    await this.withinBacklog(row, 1, (trx) => this.store.insertDeliveries(trx, [ping]));
    this.deps.onQueued?.();
    return { ok: true, event_id: eventId };
  }

  async replay(auth: AuthContext, id: string, eventIds: readonly string[]): Promise<{ ok: true; queued: number }> {
    const row = await this.own(auth, id);
    const events = await findEvents(this.deps.stores.events, this.deps.db, row.team_id, eventIds);
    const now = isoNow(this.deps.clock);
    // Counted as new whether or not a delivery of the event is already waiting (at most 100).
    await this.withinBacklog(row, events.length, async (trx) => {
      for (const e of events.map(toPublicEvent)) {
        await this.store.requeueDelivery(trx, {
          team_id: row.team_id,
          id: randomToken(12),
          endpoint_id: id,
          event_id: e.id,
          event_type: e.type,
          body: deliveryBody(e),
          state: 'pending',
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        });
      }
    });
    if (events.length > 0) this.deps.onQueued?.();
    return { ok: true, queued: events.length };
  }

  async deliveries(auth: AuthContext, id: string, limit: number) {
    const row = await this.own(auth, id);
    const attempts = await this.store.listAttempts(this.deps.db, row.team_id, id, limit);
    return {
      ok: true as const,
      items: attempts.map((a) => ({
        event_id: a.event_id,
        attempt: a.attempt,
        status_code: a.status_code,
        duration_ms: a.duration_ms,
        error: a.error,
        at: a.at,
        next_attempt_at: a.next_attempt_at,
      })),
    };
  }
}
