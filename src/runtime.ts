/**
 * Start-up shared by `npm start`, `invoicing serve` and the tests that run the real process.
 * Two parts: what happens once per start (open and migrate the database, apply the bootstrap
 * file, seed the demo team on a first start, settle the service secret: `prepareDatabase`)
 * and what every API process does (open its database connections, choose the rate-limit
 * store, build the app, start the background loops). One process does both (`startRuntime`);
 * with several (INVOICING_PROCESSES, src/cluster/) the primary prepares and each API process
 * builds (`startApiProcess`), with what it shares with the others passed in.
 */
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { App } from './app.js';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { openDatabase, type DatabaseHandle, type OpenOptions } from './db/database.js';
import { migrateService } from './db/migrator.js';
import { createStores } from './stores.js';
import type { WriteLock } from './db/write-lock.js';
import { MemoryStore } from './http/rate-limit/memory-store.js';
import type { RateLimitStore } from './http/rate-limit/rate-limit.types.js';
import { RedisStore } from './http/rate-limit/redis-store.js';
import { FallbackRateLimitStore } from './http/rate-limit/fallback-store.js';
import { ensureSetting, getSetting, importBootstrapFile, seedDemoTeamIfEmpty, type DemoTeam } from './modules/teams/index.js';
import { systemClock } from './shared/clock.js';
import { randomToken } from './shared/tokens.js';

export { BootstrapFileUnreadableError, importBootstrapFile } from './modules/teams/index.js';

export interface Runtime {
  app: App;
  database: DatabaseHandle;
  /** The configuration the app runs with: `secret` is always set. */
  config: Config & { secret: string };
  /** Set when this start created the demo team: its key, to be printed once. */
  demo: DemoTeam | null;
  close(): Promise<void>;
}

/** The once-only part of a start, done: the database is migrated and bootstrapped. */
export interface PreparedDatabase {
  database: DatabaseHandle;
  config: Config & { secret: string };
  /** Set when this start created the demo team: its key, to be printed once. */
  demo: DemoTeam | null;
  /** Short legacy secrets of the bootstrap file, named by their JSON path (never the secret). */
  bootstrapWarnings: string[];
}

/**
 * What an API process of several shares with the others through the primary (src/cluster/)
 * instead of keeping for itself.
 */
export interface SharedServices {
  /** The primary's rate-limit counters; null with REDIS_URL (Redis is shared already). */
  rateLimitStore: RateLimitStore | null;
  /** SQLite: the primary's write lock; null on PostgreSQL. */
  writeLock: WriteLock | null;
  /** Given this process's metrics registry, what `/metrics` answers: the whole machine's. */
  exposeMetrics: (local: Registry) => () => Promise<string>;
  /** Fields added to every log line of this process (its number among the API processes). */
  logBase: Record<string, string | number>;
  /** Settles when the primary opens the service (every API process listens); requests wait for it. */
  opened: Promise<void>;
}

const SERVICE_SECRET_SETTING = 'service_secret';

/**
 * INVOICING_SECRET when set; otherwise one generated on the first start and kept in the
 * database, so every instance sharing the database signs portal links with the same secret
 * (the first writer wins when several start together).
 */
export async function resolveServiceSecret(database: DatabaseHandle, config: Config): Promise<string> {
  if (config.secret !== null) return config.secret;
  return ensureSetting(database.db, SERVICE_SECRET_SETTING, randomToken(32));
}

/**
 * INVOICING_SECRET, or the one the primary settled in the database before starting this API
 * process. Read only: a process that generated one here would sign with a secret its siblings
 * do not know.
 */
async function readServiceSecret(database: DatabaseHandle, config: Config): Promise<string> {
  if (config.secret !== null) return config.secret;
  const stored = await getSetting(database.db, SERVICE_SECRET_SETTING);
  if (stored === undefined) throw new Error(`the service secret (settings.${SERVICE_SECRET_SETTING}) is missing from the database`);
  return stored;
}

export function createRateLimitStore(config: Config, shared: RateLimitStore | null = null): { store: RateLimitStore; close(): Promise<void> } {
  if (!config.redisUrl) {
    const store = shared ?? new MemoryStore();
    return { store, close: () => store.close() };
  }
  // No offline queue: while ioredis reconnects, a count fails at once and the request is counted in
  // this process (FallbackRateLimitStore); a Redis that stops answering fails a count after the
  // store's own timeout (RedisStore `timeoutMs`, 500 ms), not ioredis'.
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const store = new FallbackRateLimitStore(new RedisStore(redis));
  return {
    store,
    close: async () => {
      await store.close();
      redis.disconnect();
    },
  };
}

/** Prints the demo team's key once, with a ready curl line. */
export function announceDemoKey(config: Config, secret: string): void {
  const lines = [
    '',
    'A demo team was created on this empty database. Its API key (shown only this once):',
    `  ${secret}`,
    'Try it:',
    `  curl -H 'x-api-key: ${secret}' ${config.publicUrl}/api/v1/ref/catalog`,
    `API description: ${config.publicUrl}/api/docs`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

/** Opens the database for the service (with several processes on a SQLite file, the shared write lock). */
function openServiceDatabase(config: Config, writeLock: WriteLock | null): DatabaseHandle {
  const options: OpenOptions = {};
  if (writeLock !== null && config.database.kind === 'sqlite') options.writeLock = writeLock;
  return openDatabase(config.database, options);
}

/**
 * The once-only part of a start: open and migrate the database, apply the bootstrap file or
 * seed the demo team on an empty database, settle the service secret. The database stays open
 * (the caller closes it); on failure it is closed and the error thrown.
 */
export async function prepareDatabase(baseConfig: Config): Promise<PreparedDatabase> {
  const database = openServiceDatabase(baseConfig, null);
  try {
    await migrateService(baseConfig.database, database);
    let demo: DemoTeam | null = null;
    let bootstrapWarnings: string[] = [];
    if (baseConfig.bootstrapFile) {
      bootstrapWarnings = (await importBootstrapFile(database, baseConfig.bootstrapFile)).warnings;
    } else {
      demo = await seedDemoTeamIfEmpty(database.db, systemClock);
    }
    const config = { ...baseConfig, secret: await resolveServiceSecret(database, baseConfig) };
    return { database, config, demo, bootstrapWarnings };
  } catch (err) {
    await database.close();
    throw err;
  }
}

/**
 * Everything up to listening, in one process. The caller prints `demo` (after listening, so the
 * printed curl line works the moment it appears) and calls `close()` on shutdown.
 */
export async function startRuntime(baseConfig: Config): Promise<Runtime> {
  const prepared = await prepareDatabase(baseConfig);
  return buildRuntime(prepared, null);
}

/**
 * One API process of several (src/cluster/): the primary has prepared the database; this one
 * opens its own connections (with the shared write lock on SQLite), reads the settled secret
 * and builds the app with the shared rate-limit counters and metrics.
 */
export async function startApiProcess(baseConfig: Config, shared: SharedServices): Promise<Runtime> {
  const database = openServiceDatabase(baseConfig, shared.writeLock);
  let config: Config & { secret: string };
  try {
    config = { ...baseConfig, secret: await readServiceSecret(database, baseConfig) };
  } catch (err) {
    await database.close();
    throw err;
  }
  return buildRuntime({ database, config, demo: null, bootstrapWarnings: [] }, shared);
}

async function buildRuntime(prepared: PreparedDatabase, shared: SharedServices | null): Promise<Runtime> {
  const { database, config, demo, bootstrapWarnings } = prepared;
  const limiter = createRateLimitStore(config, shared?.rateLimitStore ?? null);
  let app: App;
  try {
    app = await buildApp({
      config,
      database,
      stores: createStores(database),
      rateLimitStore: limiter.store,
      secret: config.secret,
      ...(shared ? { exposeMetrics: shared.exposeMetrics, logBase: shared.logBase, holdRequestsUntil: shared.opened } : {}),
    });
    // Short legacy secrets: imported, logged as warnings naming their JSON path (never the secret).
    for (const warning of bootstrapWarnings) app.log.warn({ bootstrap_file: config.bootstrapFile }, warning);
    // The in-process workers retry failed e-mails and run EDO sync; `invoicing worker` runs the
    // same loops alone, for deployments whose API nodes set INVOICING_IN_PROCESS_WORKER=false.
    // With several API processes each runs them, as separate nodes on one database would:
    // rows are claimed with leases, the EDO feed is read by one at a time.
    if (config.inProcessWorker) {
      app.notifier.worker.start();
      app.edo.worker.start();
      app.webhooks.worker.start();
    }
  } catch (err) {
    await limiter.close();
    await database.close();
    throw err;
  }
  return {
    app,
    database,
    config,
    demo,
    async close() {
      await app.close();
      await limiter.close();
      await database.close();
    },
  };
}
