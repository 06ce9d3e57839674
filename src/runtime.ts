/**
 * Start-up shared by `npm start`, `invoicing serve` and the tests that run the real process:
 * open and migrate the database, apply the bootstrap file, seed the demo team on a first
 * start, choose the rate-limit store, build the app.
 */
import fs from 'node:fs';
import { Redis } from 'ioredis';
import type { App } from './app.js';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import { MemoryStore } from './http/rate-limit/memory-store.js';
import type { RateLimitStore } from './http/rate-limit/rate-limit.types.js';
import { RedisStore } from './http/rate-limit/redis-store.js';
import { applyBootstrap, parseBootstrap, seedDemoTeamIfEmpty } from './modules/teams/bootstrap.js';
import { systemClock } from './shared/clock.js';

export interface Runtime {
  app: App;
  database: DatabaseHandle;
  close(): Promise<void>;
}

/** Reads and applies the bootstrap file; throws BootstrapError naming the bad field. */
export async function importBootstrapFile(database: DatabaseHandle, file: string): Promise<void> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read bootstrap file ${file}: ${(err as Error).message}`);
  }
  await applyBootstrap(database.db, parseBootstrap(text), systemClock);
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
function announceDemoKey(config: Config, secret: string): void {
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

export async function startRuntime(config: Config): Promise<Runtime> {
  const database = openDatabase(config.database);
  try {
    await migrateToLatest(database.db);
    if (config.bootstrapFile) {
      await importBootstrapFile(database, config.bootstrapFile);
    } else {
      const demo = await seedDemoTeamIfEmpty(database.db, systemClock);
      if (demo) announceDemoKey(config, demo.secret);
    }
  } catch (err) {
    await database.close();
    throw err;
  }
  const limiter = createRateLimitStore(config);
  const app = await buildApp({ config, database, rateLimitStore: limiter.store });
  return {
    app,
    database,
    async close() {
      await app.close();
      await limiter.close();
      await database.close();
    },
  };
}
