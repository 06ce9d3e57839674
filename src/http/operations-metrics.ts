/**
 * The gauges the alerting rules (deploy/prometheus/alerts.yml) watch, beyond request counts:
 * delivery backlog age, whether the database and Redis answer, and, on SQLite, the disk. Each is
 * collected when /metrics is scraped (prom-client's `collect`), never on a request's path.
 *
 * With several API processes the primary aggregates every process's values (cluster/metrics.ts);
 * each gauge says how: the same backlog and disk seen by every process (`max`), and a dependency
 * is up only when every process reaches it (`min`).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { Gauge, type Registry } from 'prom-client';
import type { DatabaseHandle } from '../db/database.js';
import { deliveryBacklogAges, type BacklogChannel } from '../db/backlog.js';

export interface OperationsMetricsDeps {
  database: Pick<DatabaseHandle, 'db'>;
  /** The embedded database's file (its disk is watched), or null on a database server. */
  embeddedDatabaseFile: string | null;
  /** Redis, when REDIS_URL is set: whether its connection is up now. */
  redis: { reachable(): boolean } | null;
}

const CHANNELS: readonly BacklogChannel[] = ['email', 'edo', 'webhook'];

/** How long a scrape waits for the database's answer before reporting it down. */
const PROBE_TIMEOUT_MS = 2_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function fileBytes(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return 0;
  }
}

export function registerOperationsMetrics(registry: Registry, deps: OperationsMetricsDeps): void {
  const up = new Gauge({
    name: 'invoicing_dependency_up',
    help: 'Whether the database (and Redis, when REDIS_URL is set) answered at this scrape: 1 yes, 0 no',
    labelNames: ['dependency'],
    aggregator: 'min',
    registers: [registry],
    async collect() {
      let database = 1;
      try {
        await withTimeout(sql`select 1`.execute(deps.database.db), PROBE_TIMEOUT_MS);
      } catch {
        database = 0;
      }
      this.set({ dependency: 'database' }, database);
      if (deps.redis) this.set({ dependency: 'redis' }, deps.redis.reachable() ? 1 : 0);
    },
  });
  void up;

  new Gauge({
    name: 'invoicing_delivery_backlog_age_seconds',
    help: 'How long the oldest due e-mail, EDO send or webhook delivery has waited for a worker (0 when none is due)',
    labelNames: ['channel'],
    aggregator: 'max',
    registers: [registry],
    async collect() {
      try {
        const ages = await withTimeout(deliveryBacklogAges(deps.database.db, new Date()), PROBE_TIMEOUT_MS);
        for (const channel of CHANNELS) this.set({ channel }, ages[channel]);
      } catch {
        // The database did not answer: `invoicing_dependency_up` says so; the last values stay.
      }
    },
  });

  const file = deps.embeddedDatabaseFile;
  if (file === null || file === ':memory:') return;
  new Gauge({
    name: 'invoicing_sqlite_filesystem_avail_bytes',
    help: 'Bytes available to the service on the filesystem holding the SQLite database',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const stats = await fs.statfs(path.dirname(file));
      this.set(stats.bavail * stats.bsize);
    },
  });
  new Gauge({
    name: 'invoicing_sqlite_filesystem_size_bytes',
    help: 'Size of the filesystem holding the SQLite database',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const stats = await fs.statfs(path.dirname(file));
      this.set(stats.blocks * stats.bsize);
    },
  });
  new Gauge({
    name: 'invoicing_sqlite_database_bytes',
    help: 'Size of the SQLite database file and its WAL',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      this.set((await fileBytes(file)) + (await fileBytes(`${file}-wal`)));
    },
  });
}
