/**
 * The app on a freshly migrated database, bootstrapped with the fixture teams, driven with
 * `inject()`. Every response that `call()` returns has been checked against the published
 * OpenAPI document.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { MemoryStore } from '../../src/http/rate-limit/memory-store.js';
import type { RateLimitStore } from '../../src/http/rate-limit/rate-limit.types.js';
import type { EdoDeps } from '../../src/modules/edo/index.js';
import { createPdfRenderer, inlinePdfRenderer, pdfPoolOptions } from '../../src/modules/rendering/pdf-pool.js';
import type { NotificationsDeps } from '../../src/modules/notifications/index.js';
import { createWebhooks, type WebhooksDeps } from '../../src/modules/webhooks/index.js';
import { applyBootstrap, parseBootstrap } from '../../src/modules/teams/bootstrap.js';
import { systemClock, type Clock } from '../../src/shared/clock.js';
import { openDatabase } from '../../src/db/database.js';
import { createStores, type Stores } from '../../src/stores.js';
import { createTestDb, type TestDatabase } from './db.js';
import { bootstrapFixture } from './fixtures.js';
import { SpecValidator } from './openapi.js';

/** The portal-link signing secret of test apps. */
export const TEST_SECRET = 'test-secret-0123456789abcdef0123456789abcdef';

export interface TestApp {
  app: App;
  db: TestDatabase;
  /** The stores the app runs on (src/stores.ts). */
  stores: Stores;
  config: Config;
  /** Every log line the app wrote. */
  logs: string[];
  call(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  bootstrap?: unknown | null;
  rateLimitStore?: RateLimitStore;
  db?: TestDatabase;
  /** Runs after buildApp and before ready(), e.g. to register a test-only route. */
  beforeReady?: (app: App) => void | Promise<void>;
  /** E-mail delivery built from the config with these settings (short timeouts, fast retries). */
  notifications?: Partial<Pick<NotificationsDeps, 'policy' | 'smtpTimeouts' | 'clock' | 'logger'>>;
  /**
   * PDFs in worker threads (the production default) instead of inline. In-process test apps
   * render inline so that timing bounds do not include a thread starting under tsx; the pool
   * has its own tests, and the process tests run it as production does.
   */
  pdfThreads?: number;
  /** With `pdfThreads`: the threads' task module (test/modules/rendering/slow-pdf-worker.ts can hold a thread). */
  pdfTaskFile?: URL;
  /** The application's clock (the share pages' and links' time); the system clock by default. */
  clock?: Clock;
  /** EDO sync built from the config with these settings (an operator, fast retries, a clock). */
  edo?: Partial<Pick<EdoDeps, 'policy' | 'clock' | 'operator'>>;
  /** Webhook delivery with these settings (a clock, fast polling). */
  webhooks?: Partial<Pick<WebhooksDeps, 'policy' | 'clock' | 'lookup'>>;
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await createTestDb());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-data-'));
  const config: Config = {
    ...loadConfig({ INVOICING_IP_RATE_PER_SEC: '100000', INVOICING_DEMO_RATE_PER_SEC: '100000', LOG_LEVEL: 'info', INVOICING_DATA_DIR: dataDir, ...options.env }),
    database: db.target,
  };
  const bootstrap = options.bootstrap === undefined ? bootstrapFixture() : options.bootstrap;
  if (bootstrap !== null) await applyBootstrap(db.db, parseBootstrap(JSON.stringify(bootstrap)), systemClock);

  const logs: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logs.push(...chunk.toString('utf8').split('\n').filter(Boolean)));

  const store = options.rateLimitStore ?? new MemoryStore();
  const stores = createStores(db);
  // A service built with settings of its own logs nothing unless given a logger.
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const notifications = options.notifications
    ? {
        clock: options.notifications.clock ?? systemClock,
        policy: options.notifications.policy,
        smtpTimeouts: options.notifications.smtpTimeouts,
        logger: options.notifications.logger ?? silent,
      }
    : undefined;
  const edo = options.edo ? { clock: options.edo.clock ?? systemClock, policy: options.edo.policy, operator: options.edo.operator, logger: silent } : undefined;
  const webhooks = options.webhooks
    ? createWebhooks({
        database: db,
        stores: createStores(db),
        clock: options.webhooks.clock ?? systemClock,
        config,
        secret: TEST_SECRET,
        policy: options.webhooks.policy,
        ...(options.webhooks.lookup ? { lookup: options.webhooks.lookup } : {}),
      })
    : undefined;
  const app = await buildApp({
    config,
    database: db,
    stores,
    ...(options.clock ? { clock: options.clock } : {}),
    rateLimitStore: store,
    logStream,
    secret: TEST_SECRET,
    ...(notifications ? { notifications } : {}),
    ...(edo ? { edo } : {}),
    ...(webhooks ? { webhooks } : {}),
    pdf: options.pdfThreads
      ? createPdfRenderer({ ...pdfPoolOptions(config), threads: options.pdfThreads, ...(options.pdfTaskFile ? { taskFile: options.pdfTaskFile } : {}) })
      : inlinePdfRenderer,
  });
  await options.beforeReady?.(app);
  await app.ready();
  const validator = new SpecValidator(app.swagger() as never);

  return {
    app,
    db,
    stores,
    config,
    logs,
    async call(injectOptions) {
      const response = await app.inject(injectOptions);
      const contentType = String(response.headers['content-type'] ?? '');
      if (contentType.startsWith('application/json')) {
        validator.check(String(injectOptions.method ?? 'GET'), String(injectOptions.url), response.statusCode, contentType, response.json());
      }
      return response;
    },
    async close() {
      await app.close();
      if (!options.rateLimitStore) await store.close();
      if (!options.db) await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Three apps on ONE database, as three nodes sharing it: `a` (with its own fresh database) and
 * `b` keep their caches, `rebuild` has them off (`INVOICING_READ_CACHE_MB=0`), so every
 * answer it gives is built afresh. For the tests that a cached answer equals a rebuild and that
 * a change on one node shows on the next read of every node.
 */
export interface ThreeNodes {
  a: TestApp;
  b: TestApp;
  rebuild: TestApp;
  close(): Promise<void>;
}

export async function threeNodesOnOneDatabase(): Promise<ThreeNodes> {
  const a = await buildTestApp();
  const node = (): TestDatabase => ({ ...openDatabase(a.db.target), target: a.db.target, url: a.db.url, drop: async () => undefined });
  const b = await buildTestApp({ db: node(), bootstrap: null });
  const rebuild = await buildTestApp({ db: node(), bootstrap: null, env: { INVOICING_READ_CACHE_MB: '0' } });
  return {
    a,
    b,
    rebuild,
    async close() {
      for (const t of [rebuild, b]) {
        await t.close();
        await t.db.close();
      }
      await a.close();
    },
  };
}
