/**
 * Start-up shared by `npm start`, `invoicing serve` and the tests that run the real process:
 * open and migrate the database, apply the bootstrap file, seed the demo team on a first
 * start, settle the service secret, choose the rate-limit store, build the app.
 */
import { Redis } from 'ioredis';
import type { App } from './app.js';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import { MemoryStore } from './http/rate-limit/memory-store.js';
import type { RateLimitStore } from './http/rate-limit/rate-limit.types.js';
import { RedisStore } from './http/rate-limit/redis-store.js';
import { ensureSetting, importBootstrapFile, seedDemoTeamIfEmpty, type DemoTeam } from './modules/teams/index.js';
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

export function createRateLimitStore(config: Config): { store: RateLimitStore; close(): Promise<void> } {
  if (!config.redisUrl) {
    const store = new MemoryStore();
    return { store, close: () => store.close() };
  }
  // Fail fast when Redis is unreachable so the limiter can fail open instead of stalling requests.
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 });
  redis.on('error', () => undefined);
  const store = new RedisStore(redis);
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

/**
 * Everything up to listening. The caller prints `demo` (after listening, so the printed curl
 * line works the moment it appears) and calls `close()` on shutdown.
 */
export async function startRuntime(baseConfig: Config): Promise<Runtime> {
  // INVOICING_SQLITE_CHECKPOINT_THREAD: WAL checkpoints on a thread, not in a request's COMMIT (src/db/wal-checkpointer.ts).
  const database = openDatabase(baseConfig.database, { backgroundCheckpoints: baseConfig.sqliteCheckpointThread });
  let config: Config & { secret: string };
  let demo: DemoTeam | null = null;
  let bootstrapWarnings: string[] = [];
  try {
    await migrateToLatest(database.db);
    if (baseConfig.bootstrapFile) {
      bootstrapWarnings = (await importBootstrapFile(database, baseConfig.bootstrapFile)).warnings;
    } else {
      demo = await seedDemoTeamIfEmpty(database.db, systemClock);
    }
    config = { ...baseConfig, secret: await resolveServiceSecret(database, baseConfig) };
  } catch (err) {
    await database.close();
    throw err;
  }
  const limiter = createRateLimitStore(config);
  let app: App;
  try {
    app = await buildApp({ config, database, rateLimitStore: limiter.store, secret: config.secret });
    // Short legacy secrets: imported, logged as warnings naming their JSON path (never the secret).
    for (const warning of bootstrapWarnings) app.log.warn({ bootstrap_file: config.bootstrapFile }, warning);
    // The in-process workers retry failed e-mails and run EDO sync; `invoicing worker` runs the
    // same loops alone, for deployments whose API nodes set INVOICING_IN_PROCESS_WORKER=false.
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
