/** loadConfig against the operating contract, section 2: defaults and overrides (bad values: config-refusals.test.ts). */
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { autoProcesses, ConfigError, DEFAULT_PG_POOL_SIZE, loadConfig, postgresIsLocal } from '../src/config/config.js';

const CWD = '/srv/invoicing';

describe('loadConfig defaults (contract section 2)', () => {
  const config = loadConfig({}, CWD);

  it('listens on 127.0.0.1:8080', () => {
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
  });

  it('uses the SQLite file ./data/invoicing.sqlite, resolved against the working directory', () => {
    expect(config.database).toEqual({ kind: 'sqlite', file: path.resolve(CWD, 'data/invoicing.sqlite') });
  });

  it('derives the public, share and portal bases from the port', () => {
    expect(config.publicUrl).toBe('http://localhost:8080');
    expect(config.shareUrl).toBe('http://localhost:8080/s');
    expect(config.portalUrl).toBe('http://localhost:8080/portal');
  });

  it('has the published demo token and id, a per-IP rate of 10, no proxy trust', () => {
    expect(config.demoToken).toBe('demo-token');
    expect(config.demoPublicId).toBe('demo-invoice');
    expect(config.ipRatePerSec).toBe(10);
    expect(config.trustProxy).toBe(false);
  });

  it('has no Redis, SMTP, bootstrap file or configured secret; mail from invoices@localhost', () => {
    expect(config.redisUrl).toBeNull();
    expect(config.smtpUrl).toBeNull();
    expect(config.bootstrapFile).toBeNull();
    expect(config.secret).toBeNull();
    expect(config.mailFrom).toBe('invoices@localhost');
    expect(config.logLevel).toBe('info');
    expect(config.dataDir).toBe(path.resolve(CWD, 'data'));
  });

  it('treats empty and blank variables as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '  ', INVOICING_TRUST_PROXY: '' }, CWD)).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      trustProxy: false,
    });
  });

  it('derives the public URL from PORT when only PORT is set', () => {
    const c = loadConfig({ PORT: '9090' }, CWD);
    expect(c.publicUrl).toBe('http://localhost:9090');
    expect(c.shareUrl).toBe('http://localhost:9090/s');
    expect(c.portalUrl).toBe('http://localhost:9090/portal');
  });
});

describe('loadConfig overrides', () => {
  it('takes every variable', () => {
    const secret = 'x'.repeat(40);
    const c = loadConfig(
      {
        PORT: '3000',
        HOST: '0.0.0.0',
        DATABASE_URL: 'postgres://app:pw@db.internal:5432/invoicing',
        REDIS_URL: 'redis://cache:6379/0',
        SMTP_URL: 'smtp://user:pass@mail.example:587',
        INVOICING_MAIL_FROM: 'billing@example.com',
        INVOICING_PUBLIC_URL: 'https://api.example.com/',
        INVOICING_SHARE_URL: 'https://share.example.com',
        INVOICING_PORTAL_URL: 'https://portal.example.com/p/',
        INVOICING_BOOTSTRAP_FILE: 'config/bootstrap.json',
        INVOICING_DEMO_TOKEN: 'public-demo',
        INVOICING_DEMO_PUBLIC_ID: 'sample-1',
        INVOICING_IP_RATE_PER_SEC: '250',
        INVOICING_DEMO_RATE_PER_SEC: '3',
        INVOICING_TRUST_PROXY: 'true',
        INVOICING_SECRET: secret,
        LOG_LEVEL: 'warn',
        INVOICING_DATA_DIR: '/var/lib/invoicing',
        INVOICING_PG_POOL_SIZE: '4',
        INVOICING_PG_NAMED_STATEMENTS: 'false',
        INVOICING_PG_CONNECT_TIMEOUT_MS: '2000',
        INVOICING_PG_STATEMENT_TIMEOUT_MS: '15000',
        INVOICING_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: '20000',
        INVOICING_IN_PROCESS_WORKER: 'false',
        INVOICING_REQUEST_TIMEOUT_MS: '20000',
        INVOICING_KEEP_ALIVE_TIMEOUT_MS: '4000',
        INVOICING_MAX_CONNECTIONS: '500',
        INVOICING_PDF_QUEUE_MAX: '8',
        INVOICING_PDF_BACKGROUND_QUEUE_MAX: '4',
        INVOICING_PDF_RENDER_TIMEOUT_MS: '3000',
        INVOICING_RENDER_CACHE_MB: '16',
        INVOICING_LINK_RATE_PER_MIN: '30',
        INVOICING_READ_CACHE_MB: '32',
        INVOICING_REFERENCE_CACHE_MB: '8',
        INVOICING_CACHE_ENTRY_MAX_KB: '128',
        INVOICING_METRICS_TOKEN: 'metrics-token-0123456789',
        INVOICING_REVISIONS_KEEP: '50',
        INVOICING_WEBHOOK_ALLOW_HTTP: 'true',
        INVOICING_WEBHOOK_ALLOW_PRIVATE: '10.0.0.0/8, 127.0.0.1,::1',
        INVOICING_WEBHOOK_TIMEOUT_MS: '5000',
        INVOICING_WEBHOOK_RETRY_BASE_MS: '1000',
        INVOICING_EVENT_RETENTION_DAYS: '7',
        INVOICING_WEBHOOK_DNS_TIMEOUT_MS: '1500',
        INVOICING_DELIVERY_RETENTION_DAYS: '14',
        INVOICING_WORKER_METRICS_PORT: '9464',
        INVOICING_PROCESSES: '3',
      },
      CWD,
    );
    expect(c).toEqual({
      port: 3000,
      host: '0.0.0.0',
      processes: 3,
      database: {
        kind: 'postgres',
        url: 'postgres://app:pw@db.internal:5432/invoicing',
        poolSize: 4,
        namedStatements: false,
        bounds: { connectTimeoutMs: 2_000, statementTimeoutMs: 15_000, idleInTransactionTimeoutMs: 20_000 },
      },
      redisUrl: 'redis://cache:6379/0',
      smtpUrl: 'smtp://user:pass@mail.example:587',
      mailFrom: 'billing@example.com',
      publicUrl: 'https://api.example.com',
      shareUrl: 'https://share.example.com',
      portalUrl: 'https://portal.example.com/p',
      bootstrapFile: path.resolve(CWD, 'config/bootstrap.json'),
      demoToken: 'public-demo',
      demoPublicId: 'sample-1',
      ipRatePerSec: 250,
      demoRatePerSec: 3,
      trustProxy: 1,
      limits: {
        requestTimeoutMs: 20_000,
        keepAliveTimeoutMs: 4_000,
        maxConnections: 500,
        pdfQueueMax: 8,
        pdfBackgroundQueueMax: 4,
        pdfRenderTimeoutMs: 3_000,
        renderCacheBytes: 16 * 1024 * 1024,
        linkRatePerMin: 30,
        readCacheBytes: 32 * 1024 * 1024,
        referenceCacheBytes: 8 * 1024 * 1024,
        cacheEntryMaxBytes: 128 * 1024,
      },
      metricsToken: 'metrics-token-0123456789',
      metricsPublic: false,
      revisionsKeep: 50,
      secret,
      logLevel: 'warn',
      dataDir: '/var/lib/invoicing',
      inProcessWorker: false,
      edo: {
        operator: 'sandbox',
        url: null,
        token: null,
        timeoutMs: 15_000,
        pollIntervalMs: 5_000,
        maxAttempts: 10,
        sandboxDeliveryMs: 2_000,
        sandboxDecisionMs: 10_000,
      },
      webhooks: { allowHttp: true, allowPrivate: ['10.0.0.0/8', '127.0.0.1', '::1'], timeoutMs: 5000, retryBaseMs: 1000, dnsTimeoutMs: 1500, eventRetentionDays: 7 },
      workerMetricsPort: 9464,
      deliveryRetentionDays: 14,
    });
  });

  it('refuses a bad webhook allow list naming the variable', () => {
    expect(() => loadConfig({ INVOICING_WEBHOOK_ALLOW_PRIVATE: '10.0.0.0/8,not-an-ip' }, CWD)).toThrow(/INVOICING_WEBHOOK_ALLOW_PRIVATE/);
    expect(() => loadConfig({ INVOICING_EVENT_RETENTION_DAYS: '0' }, CWD)).toThrow(/INVOICING_EVENT_RETENTION_DAYS/);
    expect(() => loadConfig({ INVOICING_DELIVERY_RETENTION_DAYS: '0' }, CWD)).toThrow(/^Invalid configuration: INVOICING_DELIVERY_RETENTION_DAYS /);
    expect(() => loadConfig({ INVOICING_DELIVERY_RETENTION_DAYS: 'month' }, CWD)).toThrow(/INVOICING_DELIVERY_RETENTION_DAYS/);
    expect(() => loadConfig({ INVOICING_WEBHOOK_DNS_TIMEOUT_MS: '2s' }, CWD)).toThrow(/^Invalid configuration: INVOICING_WEBHOOK_DNS_TIMEOUT_MS /);
    expect(loadConfig({}, CWD)).toMatchObject({ deliveryRetentionDays: 30, webhooks: { dnsTimeoutMs: 2000 } });
  });

  it('takes the EDO variables (an extension of the contract)', () => {
    const c = loadConfig(
      {
        INVOICING_EDO_OPERATOR: 'http',
        INVOICING_EDO_URL: 'https://edo-gw.internal/base/',
        INVOICING_EDO_TOKEN: 'gw-token-1',
        INVOICING_EDO_TIMEOUT_MS: '2500',
        INVOICING_EDO_POLL_INTERVAL_MS: '1000',
        INVOICING_EDO_MAX_ATTEMPTS: '3',
        INVOICING_EDO_SANDBOX_DELIVERY_MS: '0',
        INVOICING_EDO_SANDBOX_DECISION_MS: '50',
      },
      CWD,
    );
    expect(c.edo).toEqual({
      operator: 'http',
      url: 'https://edo-gw.internal/base',
      token: 'gw-token-1',
      timeoutMs: 2_500,
      pollIntervalMs: 1_000,
      maxAttempts: 3,
      sandboxDeliveryMs: 0,
      sandboxDecisionMs: 50,
    });
  });

  it('derives share and portal from an overridden public URL', () => {
    const c = loadConfig({ INVOICING_PUBLIC_URL: 'https://inv.example.com/base' }, CWD);
    expect(c.shareUrl).toBe('https://inv.example.com/base/s');
    expect(c.portalUrl).toBe('https://inv.example.com/base/portal');
  });

  it('accepts sqlite: with relative and absolute paths, and postgresql://', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:db/x.sqlite' }, CWD).database).toEqual({ kind: 'sqlite', file: path.resolve(CWD, 'db/x.sqlite') });
    expect(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.sqlite' }, CWD).database).toEqual({ kind: 'sqlite', file: '/tmp/x.sqlite' });
    expect(loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.sqlite' }, CWD).database).toEqual({ kind: 'sqlite', file: '/tmp/x.sqlite' });
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db' }, CWD).database).toEqual({
      kind: 'postgres',
      url: 'postgresql://h/db',
      poolSize: DEFAULT_PG_POOL_SIZE,
      namedStatements: true,
      bounds: { connectTimeoutMs: 5_000, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000 },
    });
  });

  it('refuses a PostgreSQL bound outside its range in one line naming it, whichever database is named', () => {
    const cases: Array<[string, string, string]> = [
      ['INVOICING_PG_CONNECT_TIMEOUT_MS', '99', 'from 100 to 600000'],
      ['INVOICING_PG_CONNECT_TIMEOUT_MS', '5s', 'from 100 to 600000'],
      ['INVOICING_PG_STATEMENT_TIMEOUT_MS', '0', 'from 100 to 86400000'],
      ['INVOICING_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS', '86400001', 'from 100 to 86400000'],
    ];
    for (const [name, bad, range] of cases) {
      for (const url of ['postgres://h/db', 'sqlite:x.sqlite']) {
        let message = '';
        try {
          loadConfig({ DATABASE_URL: url, [name]: bad }, CWD);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          message = (err as Error).message;
        }
        expect(message).toBe(`Invalid configuration: ${name} must be an integer ${range} (got ${JSON.stringify(bad)})`);
      }
    }
  });

  it('refuses a bad INVOICING_PG_NAMED_STATEMENTS naming it', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://h/db', INVOICING_PG_NAMED_STATEMENTS: 'sometimes' }, CWD)).toThrow(
      /^Invalid configuration: INVOICING_PG_NAMED_STATEMENTS must be true or false/,
    );
  });

  it('takes INVOICING_PG_POOL_SIZE from 1 to 1000 and refuses anything else in one line naming it', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://h/db', INVOICING_PG_POOL_SIZE: '1' }, CWD).database).toMatchObject({ poolSize: 1 });
    expect(loadConfig({ DATABASE_URL: 'postgres://h/db', INVOICING_PG_POOL_SIZE: '1000' }, CWD).database).toMatchObject({ poolSize: 1000 });
    for (const bad of ['0', '1001', '-3', 'ten', '2.5']) {
      for (const url of ['postgres://h/db', 'sqlite:x.sqlite']) {
        let message = '';
        try {
          loadConfig({ DATABASE_URL: url, INVOICING_PG_POOL_SIZE: bad }, CWD);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          message = (err as Error).message;
        }
        expect(message).toMatch(/^Invalid configuration: INVOICING_PG_POOL_SIZE must be an integer from 1 to 1000/);
        expect(message).not.toContain('\n');
      }
    }
  });

  it('takes INVOICING_PROCESSES as auto (one per core, at most 16) or 1 to 64, and refuses anything else in one line naming it', () => {
    const auto = Math.min(os.availableParallelism(), 16);
    expect(loadConfig({}, CWD).processes).toBe(auto);
    expect(loadConfig({ INVOICING_PROCESSES: 'auto' }, CWD).processes).toBe(auto);
    expect(loadConfig({ INVOICING_PROCESSES: 'AUTO' }, CWD).processes).toBe(auto);
    expect(loadConfig({ INVOICING_PROCESSES: '1' }, CWD).processes).toBe(1);
    expect(loadConfig({ INVOICING_PROCESSES: '64' }, CWD).processes).toBe(64);
    for (const bad of ['0', '65', '-1', '2.5', 'all', '1 2']) {
      expect(() => loadConfig({ INVOICING_PROCESSES: bad }, CWD), bad).toThrow(
        /^Invalid configuration: INVOICING_PROCESSES must be auto or an integer from 1 to 64 \(got "[^"\n]*"\)$/,
      );
    }
  });

  it('resolves auto to one process fewer beside a PostgreSQL server on this machine, never below one', () => {
    const cores = os.availableParallelism();
    const local = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/app' };
    expect(loadConfig(local, CWD).processes).toBe(Math.max(1, Math.min(cores - 1, 16)));
    expect(loadConfig({ ...local, INVOICING_PROCESSES: 'auto' }, CWD).processes).toBe(Math.max(1, Math.min(cores - 1, 16)));
    // An explicit number is taken as given.
    expect(loadConfig({ ...local, INVOICING_PROCESSES: '3' }, CWD).processes).toBe(3);
    expect(loadConfig({ DATABASE_URL: 'postgres://app@db.internal:5432/app' }, CWD).processes).toBe(Math.min(cores, 16));

    const sqlite = { kind: 'sqlite', file: '/tmp/x.sqlite' } as const;
    const pg = (url: string) => ({ kind: 'postgres', url }) as const;
    expect(autoProcesses(2, sqlite)).toBe(2);
    expect(autoProcesses(2, pg('postgres://u@localhost/app'))).toBe(1);
    expect(autoProcesses(1, pg('postgres://u@localhost/app'))).toBe(1);
    expect(autoProcesses(8, pg('postgres://u@127.0.0.1/app'))).toBe(7);
    expect(autoProcesses(8, pg('postgres://u@10.0.0.5/app'))).toBe(8);
    expect(autoProcesses(64, pg('postgres://u@db/app'))).toBe(16);
    expect(autoProcesses(64, pg('postgres://u@localhost/app'))).toBe(16);

    const localUrls = [
      'postgres://u@localhost/app',
      'postgres://u@LOCALHOST:5433/app',
      'postgresql://u@127.0.0.1/app',
      'postgres://u@127.1.2.3/app',
      'postgres://u@[::1]:5432/app',
      'postgresql:///app',
      'postgres://%2Fvar%2Frun%2Fpostgresql/app',
      'postgres://u@db/app?host=/var/run/postgresql',
      'socket:/var/run/postgresql?db=app',
    ];
    for (const url of localUrls) expect(postgresIsLocal(url), url).toBe(true);
    const remoteUrls = [
      'postgres://u@db.internal/app',
      'postgres://u@10.0.0.5/app',
      'postgres://u@127.0.0.1.example.com/app',
      'postgres://u@[2001:db8::1]/app',
      'postgres://u@localhost/app?host=db.internal',
      'postgres://u@%E0/app',
      'not a url',
    ];
    for (const url of remoteUrls) expect(postgresIsLocal(url), url).toBe(false);
    // A URL without a host connects where PGHOST says (node-postgres reads it), else to localhost.
    expect(postgresIsLocal('postgresql:///app', 'db.internal')).toBe(false);
    expect(postgresIsLocal('postgresql:///app', '/var/run/postgresql')).toBe(true);
    expect(postgresIsLocal('postgresql:///app', '127.0.0.1')).toBe(true);
    expect(postgresIsLocal('postgres://u@localhost/app', 'db.internal')).toBe(true);
    const auto = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'postgresql:///app', ...env }, CWD).processes;
    expect(auto({ PGHOST: 'db.internal' })).toBe(Math.min(os.availableParallelism(), 16));
    expect(auto({})).toBe(Math.max(1, Math.min(os.availableParallelism() - 1, 16)));
  });

  it('reads true and false spelled several ways', () => {
    // `true` trusts one hop, never "every hop": a client could otherwise name its own address.
    for (const yes of ['true', 'TRUE', '1', 'yes', 'on']) expect(loadConfig({ INVOICING_TRUST_PROXY: yes }, CWD).trustProxy).toBe(1);
    for (const no of ['false', 'False', '0', 'no', 'off']) expect(loadConfig({ INVOICING_TRUST_PROXY: no }, CWD).trustProxy).toBe(false);
    expect(loadConfig({ INVOICING_TRUST_PROXY: '2' }, CWD).trustProxy).toBe(2);
    expect(loadConfig({ INVOICING_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1' }, CWD).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.7', '::1']);
    for (const bad of ['10.0.0.0/99', 'proxy.example', '33', '1.2.3.4,nope']) {
      expect(() => loadConfig({ INVOICING_TRUST_PROXY: bad }, CWD), bad).toThrow(/INVOICING_TRUST_PROXY/);
    }
  });

  it('accepts rediss:// and smtps://', () => {
    const c = loadConfig({ REDIS_URL: 'rediss://cache:6380', SMTP_URL: 'smtps://mail.example:465' }, CWD);
    expect(c.redisUrl).toBe('rediss://cache:6380');
    expect(c.smtpUrl).toBe('smtps://mail.example:465');
  });
});
