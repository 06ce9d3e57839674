/**
 * Configuration: the only module that reads the environment. Every variable of the
 * operating contract (section 2) is parsed and validated once; a bad value throws a
 * ConfigError whose message is one line naming the variable.
 */
import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { parseDatabase, postgresIsLocal, type DatabaseTarget } from './database-target.js';
import { ConfigError, parseBoolean, parseInteger, read, shown, type Env } from './env-values.js';

export { DEFAULT_PG_BOUNDS, DEFAULT_PG_POOL_SIZE, postgresIsLocal, type DatabaseTarget, type PgBounds } from './database-target.js';
export { ConfigError } from './env-values.js';

/** INVOICING_PROCESSES=auto: one API process per core the machine offers, at most this many (autoProcesses). */
export const AUTO_PROCESSES_MAX = 16;
/** INVOICING_PROCESSES: the most API processes one `invoicing serve` runs. */
export const PROCESSES_MAX = 64;

export interface Config {
  port: number;
  host: string;
  /**
   * INVOICING_PROCESSES, resolved: how many API processes `invoicing serve` runs on this
   * machine (src/cluster/). 1: the one process serves; more: a primary forks them.
   */
  processes: number;
  database: DatabaseTarget;
  redisUrl: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  publicUrl: string;
  shareUrl: string;
  portalUrl: string;
  bootstrapFile: string | null;
  demoToken: string;
  demoPublicId: string;
  /** INVOICING_DEMO_RATE_PER_SEC: requests a second per client with the published demo token (counted per node). */
  demoRatePerSec: number;
  ipRatePerSec: number;
  /**
   * INVOICING_TRUST_PROXY: false (the socket address is the client), a hop count N (the client
   * is the N-th address from the right of X-Forwarded-For), or the trusted proxies' addresses
   * and CIDRs. `true` means 1 hop; "trust every hop" does not exist (docs/security.md).
   */
  trustProxy: false | number | string[];
  /** Hardening (docs/security.md, docs/operations.md): timeouts, connections, caches, limits. */
  limits: LimitsConfig;
  /** INVOICING_METRICS_TOKEN: when set, /metrics (of API nodes and of the worker's metrics port) needs `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** INVOICING_METRICS_PUBLIC: /metrics may be served without a token on a HOST that is not loopback (checkMetricsExposure). */
  metricsPublic: boolean;
  /** INVOICING_REVISIONS_KEEP: previous revisions kept per document (0: all). */
  revisionsKeep: number;
  /** From INVOICING_SECRET; when null the service generates one and keeps it in the database. */
  secret: string | null;
  logLevel: string;
  /** Directory for the embedded default's files (SQLite database, .eml outbox). */
  dataDir: string;
  /** INVOICING_IN_PROCESS_WORKER: whether `serve` also runs the background jobs (e-mail retries, EDO sync). */
  inProcessWorker: boolean;
  /** EDO synchronization (INVOICING_EDO_*, docs/edo.md): an extension of the contract's variables. */
  edo: EdoConfig;
  /** Webhooks and the events feed (INVOICING_WEBHOOK_*, INVOICING_EVENT_RETENTION_DAYS; docs/webhooks.md). */
  webhooks: WebhookConfig;
  /** INVOICING_WORKER_METRICS_PORT: `invoicing worker` serves /metrics on this port when set. */
  workerMetricsPort: number | null;
  /**
   * INVOICING_DELIVERY_RETENTION_DAYS: days webhook deliveries and their attempts, and sent or
   * failed e-mails (their outbox rows), are kept; the workers' retention passes delete older ones.
   */
  deliveryRetentionDays: number;
}

export interface WebhookConfig {
  /** INVOICING_WEBHOOK_ALLOW_HTTP: plain http:// endpoint URLs allowed (otherwise https:// only). */
  allowHttp: boolean;
  /** INVOICING_WEBHOOK_ALLOW_PRIVATE: addresses/CIDRs endpoints may resolve to although not public. */
  allowPrivate: string[];
  /** INVOICING_WEBHOOK_TIMEOUT_MS: one attempt, connect to last byte. */
  timeoutMs: number;
  /** INVOICING_WEBHOOK_RETRY_BASE_MS: the first retry delay; each next one doubles (with jitter). */
  retryBaseMs: number;
  /** INVOICING_WEBHOOK_DNS_TIMEOUT_MS: one resolution of an endpoint's host name (saving it, or an attempt). */
  dnsTimeoutMs: number;
  /** INVOICING_EVENT_RETENTION_DAYS. */
  eventRetentionDays: number;
}

export interface LimitsConfig {
  /** INVOICING_REQUEST_TIMEOUT_MS: a request's headers and body must arrive within this time. */
  requestTimeoutMs: number;
  /** INVOICING_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** INVOICING_MAX_CONNECTIONS: open connections per process; more are refused at once. */
  maxConnections: number;
  /** INVOICING_PDF_QUEUE_MAX: share and portal PDF renders waiting for a worker thread; beyond it 503 + Retry-After. */
  pdfQueueMax: number;
  /** INVOICING_PDF_BACKGROUND_QUEUE_MAX: e-mail and EDO PDF renders waiting; beyond it the job is postponed. */
  pdfBackgroundQueueMax: number;
  /** INVOICING_PDF_RENDER_TIMEOUT_MS: a render running longer is stopped (its thread ended). */
  pdfRenderTimeoutMs: number;
  /** INVOICING_RENDER_CACHE_MB: bytes of rendered PDFs and QR images kept (LRU); 0 turns it off. */
  renderCacheBytes: number;
  /** INVOICING_LINK_RATE_PER_MIN: requests per minute to the pages of one share or portal token. */
  linkRatePerMin: number;
  /** INVOICING_READ_CACHE_MB: bytes of serialized document responses, list pages and items kept per process; 0 turns them off. */
  readCacheBytes: number;
  /** INVOICING_REFERENCE_CACHE_MB: bytes of catalogs, seller references and callers kept per process. */
  referenceCacheBytes: number;
  /** INVOICING_CACHE_ENTRY_MAX_KB: a response (or entry) above this is never cached. */
  cacheEntryMaxBytes: number;
}

export interface EdoConfig {
  /** `sandbox` (built in, the default) or `http` (a gateway speaking docs/edo-operator-protocol.md). */
  operator: 'sandbox' | 'http';
  /** The HTTP gateway's base URL and bearer token; set when operator is `http`. */
  url: string | null;
  token: string | null;
  /** One operator call. */
  timeoutMs: number;
  /** Pause between reads of the operator's change feed. */
  pollIntervalMs: number;
  /** Send attempts before a job is given up as failed. */
  maxAttempts: number;
  /** The sandbox: delay before a sent document is delivered, and before the buyer decides. */
  sandboxDeliveryMs: number;
  sandboxDecisionMs: number;
}

/** INVOICING_TRUST_PROXY: false | true (1 hop) | N hops | a list of addresses and CIDRs. */
function parseTrustProxy(env: Env): false | number | string[] {
  const name = 'INVOICING_TRUST_PROXY';
  const raw = read(env, name);
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (['false', 'no', 'off', '0'].includes(lower)) return false;
  if (['true', 'yes', 'on'].includes(lower)) return 1;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 32) throw new ConfigError(name, `hop count must be from 1 to 32 (got ${shown(raw)})`);
    return hops;
  }
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    const ok = entry.includes('/') ? isCidr(entry) : ipaddr.isValid(entry);
    if (!ok) {
      throw new ConfigError(name, `must be false, true, a hop count or a comma-separated list of addresses/CIDRs (got ${shown(entry)})`);
    }
  }
  if (entries.length === 0 || entries.length > 100) throw new ConfigError(name, 'must list 1 to 100 addresses/CIDRs');
  return entries;
}

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/**
 * INVOICING_PROCESSES: `auto` (the default) or 1 to 64. `auto` is one API process per core, at
 * most 16, and one fewer (at least one) when the PostgreSQL server is on this machine
 * (`postgresIsLocal`): its backends need cores of their own. On the 2-core bench machine, two API
 * processes beside a local PostgreSQL served reads 29–36 % slower than one at twice the CPU per
 * read, and creates no faster.
 */
function parseProcesses(env: Env, database: DatabaseTarget): number {
  const name = 'INVOICING_PROCESSES';
  const raw = read(env, name);
  if (raw === undefined || raw.toLowerCase() === 'auto') return autoProcesses(os.availableParallelism(), database, read(env, 'PGHOST'));
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= PROCESSES_MAX)) {
    throw new ConfigError(name, `must be auto or an integer from 1 to ${PROCESSES_MAX} (got ${shown(raw)})`);
  }
  return value;
}

/** What INVOICING_PROCESSES=auto resolves to on a machine with `cores` cores (`pgHost`: PGHOST). */
export function autoProcesses(cores: number, database: DatabaseTarget, pgHost?: string): number {
  const forDatabase = database.kind === 'postgres' && postgresIsLocal(database.url, pgHost) ? cores - 1 : cores;
  return Math.max(1, Math.min(forDatabase, AUTO_PROCESSES_MAX));
}

/** An absolute http(s) base URL without a trailing slash, query or fragment. */
function parseBaseUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got ${shown(raw)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an absolute http(s) URL (got ${shown(raw)})`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(name, 'must not carry credentials, a query or a fragment');
  }
  return url.toString().replace(/\/+$/, '');
}

function parseUrlWithScheme(env: Env, name: string, schemes: string[]): string | null {
  const raw = read(env, name);
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`);
  }
  if (!schemes.includes(url.protocol.replace(/:$/, ''))) {
    throw new ConfigError(name, `must be a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`);
  }
  if (!url.hostname) throw new ConfigError(name, 'must name a host');
  return raw;
}

const EMAIL = /^[^\s@<>()",;]+@[^\s@<>()",;]+$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const port = parseInteger(env, 'PORT', 8080, 0, 65535);
  const host = read(env, 'HOST') ?? '127.0.0.1';
  const database = parseDatabase(env, cwd);
  const processes = parseProcesses(env, database);
  const redisUrl = parseUrlWithScheme(env, 'REDIS_URL', ['redis', 'rediss']);
  const smtpUrl = parseUrlWithScheme(env, 'SMTP_URL', ['smtp', 'smtps']);
  const mailFrom = read(env, 'INVOICING_MAIL_FROM') ?? 'invoices@localhost';
  if (!EMAIL.test(mailFrom)) throw new ConfigError('INVOICING_MAIL_FROM', `must be an e-mail address (got ${shown(mailFrom)})`);

  const publicRaw = read(env, 'INVOICING_PUBLIC_URL');
  const publicUrl = publicRaw ? parseBaseUrl('INVOICING_PUBLIC_URL', publicRaw) : `http://localhost:${port}`;
  const shareRaw = read(env, 'INVOICING_SHARE_URL');
  const shareUrl = shareRaw ? parseBaseUrl('INVOICING_SHARE_URL', shareRaw) : `${publicUrl}/s`;
  const portalRaw = read(env, 'INVOICING_PORTAL_URL');
  const portalUrl = portalRaw ? parseBaseUrl('INVOICING_PORTAL_URL', portalRaw) : `${publicUrl}/portal`;

  const bootstrapRaw = read(env, 'INVOICING_BOOTSTRAP_FILE');
  const demoToken = read(env, 'INVOICING_DEMO_TOKEN') ?? 'demo-token';
  const demoPublicId = read(env, 'INVOICING_DEMO_PUBLIC_ID') ?? 'demo-invoice';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(demoPublicId)) {
    throw new ConfigError('INVOICING_DEMO_PUBLIC_ID', 'must be 1-64 characters of A-Z, a-z, 0-9, _ and -');
  }
  const ipRatePerSec = parseInteger(env, 'INVOICING_IP_RATE_PER_SEC', 10, 1, 1_000_000);
  const demoRatePerSec = parseInteger(env, 'INVOICING_DEMO_RATE_PER_SEC', 2, 1, 1_000_000);
  const trustProxy = parseTrustProxy(env);
  const metricsToken = read(env, 'INVOICING_METRICS_TOKEN') ?? null;
  if (metricsToken !== null && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    throw new ConfigError('INVOICING_METRICS_TOKEN', 'must be 16-512 printable characters without spaces');
  }
  const metricsPublic = parseBoolean(env, 'INVOICING_METRICS_PUBLIC', false);
  const limits: LimitsConfig = {
    requestTimeoutMs: parseInteger(env, 'INVOICING_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    keepAliveTimeoutMs: parseInteger(env, 'INVOICING_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1_000, 600_000),
    maxConnections: parseInteger(env, 'INVOICING_MAX_CONNECTIONS', 1_024, 1, 1_000_000),
    pdfQueueMax: parseInteger(env, 'INVOICING_PDF_QUEUE_MAX', 32, 0, 100_000),
    pdfBackgroundQueueMax: parseInteger(env, 'INVOICING_PDF_BACKGROUND_QUEUE_MAX', 32, 0, 100_000),
    pdfRenderTimeoutMs: parseInteger(env, 'INVOICING_PDF_RENDER_TIMEOUT_MS', 5_000, 100, 600_000),
    renderCacheBytes: parseInteger(env, 'INVOICING_RENDER_CACHE_MB', 64, 0, 65_536) * 1024 * 1024,
    linkRatePerMin: parseInteger(env, 'INVOICING_LINK_RATE_PER_MIN', 120, 1, 1_000_000),
    readCacheBytes: parseInteger(env, 'INVOICING_READ_CACHE_MB', 64, 0, 65_536) * 1024 * 1024,
    referenceCacheBytes: parseInteger(env, 'INVOICING_REFERENCE_CACHE_MB', 16, 1, 65_536) * 1024 * 1024,
    cacheEntryMaxBytes: parseInteger(env, 'INVOICING_CACHE_ENTRY_MAX_KB', 256, 1, 1_048_576) * 1024,
  };
  const revisionsKeep = parseInteger(env, 'INVOICING_REVISIONS_KEEP', 100, 0, 1_000_000);
  const secret = read(env, 'INVOICING_SECRET') ?? null;
  if (secret !== null && secret.length < 32) {
    throw new ConfigError('INVOICING_SECRET', 'must be at least 32 characters long');
  }
  const logLevel = read(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const dataDir = path.resolve(cwd, read(env, 'INVOICING_DATA_DIR') ?? './data');
  const edo = parseEdo(env);
  const inProcessWorker = parseBoolean(env, 'INVOICING_IN_PROCESS_WORKER', true);
  const webhooks: WebhookConfig = {
    allowHttp: parseBoolean(env, 'INVOICING_WEBHOOK_ALLOW_HTTP', false),
    allowPrivate: parseCidrList(env, 'INVOICING_WEBHOOK_ALLOW_PRIVATE'),
    timeoutMs: parseInteger(env, 'INVOICING_WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
    retryBaseMs: parseInteger(env, 'INVOICING_WEBHOOK_RETRY_BASE_MS', 30_000, 1, 86_400_000),
    dnsTimeoutMs: parseInteger(env, 'INVOICING_WEBHOOK_DNS_TIMEOUT_MS', 2_000, 10, 60_000),
    eventRetentionDays: parseInteger(env, 'INVOICING_EVENT_RETENTION_DAYS', 30, 1, 3650),
  };
  const metricsPortRaw = read(env, 'INVOICING_WORKER_METRICS_PORT');
  const workerMetricsPort = metricsPortRaw === undefined ? null : parseInteger(env, 'INVOICING_WORKER_METRICS_PORT', 0, 1, 65535);
  const deliveryRetentionDays = parseInteger(env, 'INVOICING_DELIVERY_RETENTION_DAYS', 30, 1, 3650);

  return {
    port,
    host,
    processes,
    database,
    redisUrl,
    smtpUrl,
    mailFrom,
    publicUrl,
    shareUrl,
    portalUrl,
    bootstrapFile: bootstrapRaw ? path.resolve(cwd, bootstrapRaw) : null,
    demoToken,
    demoPublicId,
    ipRatePerSec,
    demoRatePerSec,
    trustProxy,
    limits,
    metricsToken,
    metricsPublic,
    revisionsKeep,
    secret,
    logLevel,
    dataDir,
    inProcessWorker,
    edo,
    webhooks,
    workerMetricsPort,
    deliveryRetentionDays,
  };
}

/** A comma-separated list of addresses or CIDRs (a bare address is one host). */
function parseCidrList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const out: string[] = [];
  for (const part of raw.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    try {
      if (part.includes('/')) ipaddr.parseCIDR(part);
      else ipaddr.parse(part);
    } catch {
      throw new ConfigError(name, `must be a comma-separated list of IP addresses or CIDRs (got ${shown(part)})`);
    }
    out.push(part);
  }
  return out;
}

function parseEdo(env: Env): EdoConfig {
  const operator = read(env, 'INVOICING_EDO_OPERATOR') ?? 'sandbox';
  if (operator !== 'sandbox' && operator !== 'http') {
    throw new ConfigError('INVOICING_EDO_OPERATOR', `must be sandbox or http (got ${shown(operator)})`);
  }
  const urlRaw = read(env, 'INVOICING_EDO_URL');
  const url = urlRaw ? parseBaseUrl('INVOICING_EDO_URL', urlRaw) : null;
  const token = read(env, 'INVOICING_EDO_TOKEN') ?? null;
  if (operator === 'http') {
    if (!url) throw new ConfigError('INVOICING_EDO_URL', 'is required when INVOICING_EDO_OPERATOR is http');
    if (!token) throw new ConfigError('INVOICING_EDO_TOKEN', 'is required when INVOICING_EDO_OPERATOR is http');
  }
  if (token !== null && /[\s\u0000-\u001f\u007f]/.test(token)) {
    throw new ConfigError('INVOICING_EDO_TOKEN', 'must not contain spaces or control characters');
  }
  return {
    operator,
    url,
    token,
    timeoutMs: parseInteger(env, 'INVOICING_EDO_TIMEOUT_MS', 15_000, 100, 300_000),
    pollIntervalMs: parseInteger(env, 'INVOICING_EDO_POLL_INTERVAL_MS', 5_000, 100, 3_600_000),
    maxAttempts: parseInteger(env, 'INVOICING_EDO_MAX_ATTEMPTS', 10, 1, 100),
    sandboxDeliveryMs: parseInteger(env, 'INVOICING_EDO_SANDBOX_DELIVERY_MS', 2_000, 0, 86_400_000),
    sandboxDecisionMs: parseInteger(env, 'INVOICING_EDO_SANDBOX_DECISION_MS', 10_000, 0, 86_400_000),
  };
}
