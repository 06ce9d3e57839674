/**
 * The PostgreSQL pool and the bounds that keep a request from waiting on a database that does
 * not answer (operating contract, section 7; docs/operations.md, "Faults: PostgreSQL and Redis").
 *
 * - Getting a connection, a free one of the pool or a new one (TCP, TLS, start-up): at most
 *   `connectTimeoutMs` (pg-pool's and node-postgres' `connectionTimeoutMillis`).
 * - A statement: the server cancels it after `statementTimeoutMs` (its statement_timeout,
 *   SQLSTATE 57014); this side gives up STATEMENT_GRACE_MS later (the cancel did not come back
 *   either) and closes the connection.
 * - A transaction left idle: the server ends the session after `idleInTransactionTimeoutMs`.
 * - A server that stops answering on the connections already open (stopped, or cut off while TCP
 *   stays up): when a statement has waited half the connect timeout and the pool has heard
 *   nothing from the server for as long, a new connection probes it (`select 1`, within the other
 *   half). No answer: every statement waiting on the pool fails and every connection of the pool
 *   is closed, so those requests are answered within the connect timeout and the next ones open
 *   new connections, each bounded by it. Any answer, an error included: the statements go on (a
 *   slow statement on a live server is not cut short; it costs one probe per half connect timeout).
 *
 * Every failure of a connection (as opposed to a statement the server refused, which has a
 * SQLSTATE) leaves here as a DatabaseUnavailableError. Connection errors never reach the process:
 * each connection has an 'error' listener that reports to `onConnectionError`, and the pool one
 * that ignores (the connection's listener has reported it).
 */
import pg from 'pg';
import type { PgBounds } from '../config/config.js';
import { DatabaseUnavailableError, isPgConnectionFailure, isServerError } from './errors.js';

/** How much longer than the server's statement_timeout this side waits for a statement. */
export const STATEMENT_GRACE_MS = 1_000;
/** TCP keepalive: a connection whose peer vanished without a word (host gone, NAT entry dropped) is found idle. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

export type ConnectionErrorListener = (err: Error, what: string) => void;

/** What Kysely's PostgresDialect takes as its pool. */
export interface PgPoolLike {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
}

export interface BoundedPool {
  /** Checkouts fail as DatabaseUnavailableError when no connection comes within the connect timeout. */
  pool: PgPoolLike;
  /** Where connection errors are reported from now on (a logger's warn); none: they are dropped. */
  onConnectionError(listener: ConnectionErrorListener): void;
}

export interface BoundedPoolOptions {
  url: string;
  max: number;
  bounds: PgBounds;
  /** Installed on every new connection after the bounds (the named statements, pg-statements.ts). */
  setup?: (client: pg.PoolClient) => void;
}

interface Waiting {
  startedAt: number;
  client: pg.PoolClient;
  fail(err: Error): void;
}

/**
 * Closes a connection's socket at once: its queries fail, and the pool drops it. The socket's
 * close is seen a turn of the event loop later; until then node-postgres would still call the
 * connection queryable, and a checkout in between (the request that just failed releases it at
 * once) would get it back: `_queryable`, the field pg-pool's release reads, is cleared now.
 */
function destroyConnection(client: pg.ClientBase): void {
  const internals = client as unknown as { _queryable?: boolean; connection?: { stream?: { destroy(): void } } };
  internals._queryable = false;
  internals.connection?.stream?.destroy();
}

/** Follows the statements waiting on the pool (see the top of the file). */
class Watchdog {
  private readonly waiting = new Set<Waiting>();
  private readonly clients = new Set<pg.PoolClient>();
  private lastHeardAt = Date.now();
  private probing = false;
  private timer: NodeJS.Timeout | null = null;
  /** Half the connect timeout: the silence that starts a probe, and the probe's own bound. */
  private readonly silenceMs: number;
  private readonly tickMs: number;
  private readonly giveUpMs: number;

  constructor(
    private readonly clientConfig: pg.ClientConfig,
    bounds: PgBounds,
    private readonly report: () => ConnectionErrorListener,
  ) {
    this.silenceMs = Math.max(1, Math.floor(bounds.connectTimeoutMs / 2));
    // A tenth of the connect timeout, 20 to 250 ms: detection is late by at most one tick.
    this.tickMs = Math.min(250, Math.max(20, Math.floor(bounds.connectTimeoutMs / 10)));
    this.giveUpMs = bounds.statementTimeoutMs > 0 ? bounds.statementTimeoutMs + STATEMENT_GRACE_MS : Number.POSITIVE_INFINITY;
  }

  added(client: pg.PoolClient): void {
    this.clients.add(client);
  }

  removed(client: pg.PoolClient): void {
    this.clients.delete(client);
  }

  /** `pending` (a query of `client`), settled by the server's answer or by the bounds. */
  watch<T>(client: pg.PoolClient, pending: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = { startedAt: Date.now(), client, fail: reject };
      this.waiting.add(entry);
      if (this.timer === null) {
        this.timer = setInterval(() => this.tick(), this.tickMs);
        this.timer.unref();
      }
      pending.then(
        (value) => {
          this.waiting.delete(entry);
          this.lastHeardAt = Date.now();
          resolve(value);
        },
        (err: unknown) => {
          this.waiting.delete(entry);
          if (isServerError(err)) {
            this.lastHeardAt = Date.now();
            reject(err);
          } else {
            reject(isPgConnectionFailure(err) ? new DatabaseUnavailableError('the connection to the database failed', { cause: err }) : err);
          }
        },
      );
    });
  }

  private tick(): void {
    const now = Date.now();
    let silentWaiter = false;
    for (const entry of this.waiting) {
      const waited = now - entry.startedAt;
      if (waited > this.giveUpMs) this.abandon(entry, new DatabaseUnavailableError(`a statement got no answer within ${this.giveUpMs} ms`));
      else if (waited >= this.silenceMs) silentWaiter = true;
    }
    if (silentWaiter && !this.probing && now - this.lastHeardAt >= this.silenceMs) {
      this.probing = true;
      void this.probe().then((answered) => {
        this.probing = false;
        if (answered) {
          this.lastHeardAt = Date.now();
          return;
        }
        const err = new DatabaseUnavailableError(`the database answered nothing for ${Date.now() - this.lastHeardAt} ms, a new connection included`);
        this.report()(err, 'PostgreSQL does not answer: failing the statements waiting on it and closing its connections');
        for (const entry of this.waiting) this.abandon(entry, err);
        for (const client of this.clients) destroyConnection(client);
      });
    }
    if (this.waiting.size === 0 && !this.probing && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private abandon(entry: Waiting, err: Error): void {
    this.waiting.delete(entry);
    entry.fail(err);
    destroyConnection(entry.client);
  }

  /** Whether the server answers a new connection within `silenceMs` (an error from it counts: it is alive). */
  private async probe(): Promise<boolean> {
    const client = new pg.Client({ ...this.clientConfig, connectionTimeoutMillis: this.silenceMs });
    client.on('error', () => undefined);
    const deadline = setTimeout(() => destroyConnection(client), this.silenceMs);
    try {
      await client.connect();
      await client.query('select 1');
      void client.end().catch(() => undefined);
      return true;
    } catch (err) {
      destroyConnection(client);
      return isServerError(err);
    } finally {
      clearTimeout(deadline);
    }
  }
}

/**
 * Every connection of the service carries this application_name: the events feed tells the
 * service's transactions (possible event writers) from other clients' by it
 * (src/modules/events/store/postgres.ts).
 */
export const PG_APPLICATION_NAME = 'invoicing';

export function openBoundedPool(options: BoundedPoolOptions): BoundedPool {
  const { bounds } = options;
  const clientConfig: pg.ClientConfig = {
    connectionString: options.url,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    application_name: PG_APPLICATION_NAME,
    // Start-up parameters: the server applies them to every session of the pool.
    ...(bounds.statementTimeoutMs > 0 ? { statement_timeout: bounds.statementTimeoutMs } : {}),
    idle_in_transaction_session_timeout: bounds.idleInTransactionTimeoutMs,
  };
  // INVOICING_PG_POOL_SIZE (docs/deployment.md): the most connections this process holds.
  const pool = new pg.Pool({ ...clientConfig, max: options.max, connectionTimeoutMillis: bounds.connectTimeoutMs });
  let listener: ConnectionErrorListener = () => undefined;
  const watchdog = new Watchdog(clientConfig, bounds, () => listener);
  // Reported by the connection's own listener below (which an idle connection has too).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', (err) => listener(err, 'a PostgreSQL connection failed'));
    watchdog.added(client);
    const query = client.query;
    // Promise-returning calls only (every call of Kysely's and pg-statements.ts'); callbacks and
    // submittables (cursors) pass through unwatched.
    (client as { query: unknown }).query = function boundedQuery(...args: unknown[]) {
      const result = (query as (...a: unknown[]) => unknown).apply(client, args);
      return result instanceof Promise ? watchdog.watch(client, result) : result;
    };
    options.setup?.(client);
  });
  pool.on('remove', (client) => watchdog.removed(client));
  const connectTimeoutMs = bounds.connectTimeoutMs;
  return {
    pool: {
      connect: () =>
        pool.connect().catch((err: unknown) => {
          if (isServerError(err)) throw err;
          throw new DatabaseUnavailableError(`could not get a database connection (connect timeout ${connectTimeoutMs} ms)`, { cause: err });
        }),
      end: () => pool.end(),
    },
    onConnectionError(next) {
      listener = next;
    },
  };
}
