/**
 * buildApp(deps): the HTTP application. Registers the http plugins and each module's routes
 * explicitly; everything it needs (config, database, limiter store, clock) is passed in.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction } from 'fastify';
import { Transform, type Duplex } from 'node:stream';
import type { DestinationStream } from 'pino';
import pino from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config/config.js';
import type { DatabaseHandle } from './db/database.js';
import { documentFiles } from './document-files.js';
import { createStores, type Stores } from './stores.js';
import { registerInputGuard, registerJsonParser } from './http/input-guard.js';
import { registerSchemaBounds } from './shared/schema-bounds.js';
import { MAX_PARAM_LENGTH, onFrameworkError, registerErrorHandling } from './http/error-handler.js';
import { authHook } from './http/auth.js';
import { createUrlRedactor, lazyChildLogger, logDestination, loggerOptions, RequestLogController } from './http/logging.js';
import { helmetHeaders, staticHeaders } from './http/security-headers.js';
import { createMetrics, registerRequestMetrics } from './http/metrics.js';
import { registerOperationsMetrics } from './http/operations-metrics.js';
import { trackRoutesForMethodNotAllowed } from './http/method-not-allowed.js';
import { registerOpenApi } from './http/openapi.js';
import { createRateLimitHooks } from './http/rate-limit/rate-limit.hooks.js';
import type { RateLimitStore } from './http/rate-limit/rate-limit.types.js';
import { generateRequestId } from './http/request-id.js';
import { registerOperationsRoutes } from './http/operations.routes.js';
import { catalogRoutes, CatalogService } from './modules/catalog/index.js';
import { DocumentPrints, documentStatusPort, invoiceRoutes, InvoiceService } from './modules/invoices/index.js';
import { createEdo, type EdoDeps, type EdoRuntime } from './modules/edo/index.js';
import { createPdfRenderer, pdfPoolOptions, RenderCache, type PdfRenderer } from './modules/rendering/index.js';
import { createNotifications, type NotificationsDeps, type Notifier } from './modules/notifications/index.js';
import { basePath } from './modules/links/index.js';
import { SharingService, sharingRoutes } from './modules/sharing/index.js';
import { AuthService } from './modules/teams/index.js';
import { createWebhooks, eventRoutes, webhookRoutes, type WebhooksRuntime } from './modules/webhooks/index.js';
import { ErrorBody } from './shared/errors.js';
import { systemClock, type Clock } from './shared/clock.js';
import { ApiError } from './shared/errors.js';

/** 5 MB as the spec counts it: 5 × 1024 × 1024 bytes. */
export const BODY_LIMIT_BYTES = 5_242_880;

/** The published demo token's write body (contract section 7): 256 KB. */
export const DEMO_BODY_LIMIT_BYTES = 262_144;

function demoTooLarge(): ApiError {
  return new ApiError('payload_too_large', { details: `with the demo token the body may be at most ${DEMO_BODY_LIMIT_BYTES} bytes (256 KB)` }, { connection: 'close' });
}

/** Refuses a demo write whose Content-Length passes the demo bound, before any of it is read. */
function refuseLargeDemoBody(request: FastifyRequest): void {
  const length = Number(request.headers['content-length'] ?? 0);
  if (Number.isFinite(length) && length > DEMO_BODY_LIMIT_BYTES) throw demoTooLarge();
}

/** The body stream, failed with 413 once more than the demo bound has arrived. */
function limitDemoBody(payload: NodeJS.ReadableStream): NodeJS.ReadableStream {
  let seen = 0;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > DEMO_BODY_LIMIT_BYTES) callback(demoTooLarge());
      else callback(null, chunk);
    },
  });
  payload.on('error', (err) => limited.destroy(err));
  return payload.pipe(limited);
}

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  /** The modules' stores of `database` (src/stores.ts); made here when not given. */
  stores?: Stores;
  rateLimitStore: RateLimitStore;
  /** Signs portal links: INVOICING_SECRET, or the one generated and kept in the database. */
  secret: string;
  clock?: Clock;
  /** Where JSON log lines go (default stdout); tests pass a stream to inspect them. */
  logStream?: DestinationStream;
  /** E-mail delivery's settings besides the configuration (tests: a policy, SMTP timeouts, a clock, a logger). */
  notifications?: Partial<Pick<NotificationsDeps, 'policy' | 'smtpTimeouts' | 'clock' | 'logger'>>;
  /** EDO sync's settings besides the configuration (tests: an operator, a policy, a clock, a logger). */
  edo?: Partial<Pick<EdoDeps, 'policy' | 'clock' | 'operator' | 'logger'>>;
  /** Where PDFs are rendered; by default a pool of worker threads (closed with the app). */
  pdf?: PdfRenderer;
  /** Webhook endpoints and their delivery worker (tests pass one with their own clock and policy). */
  webhooks?: WebhooksRuntime;
  /**
   * Given this process's metrics registry, what `/metrics` answers. By default that registry;
   * an API process of several answers for the whole machine (src/cluster/).
   */
  exposeMetrics?: (local: Registry) => () => Promise<string>;
  /** Fields added to every log line (with several API processes: this one's number). */
  logBase?: Record<string, string | number>;
  /** Requests wait until this settles (an API process of several: until the primary opens the service). */
  holdRequestsUntil?: Promise<void>;
}

export type App = FastifyInstance;

/**
 * INVOICING_TRUST_PROXY for Fastify: never `true` (which trusts every hop, so a client could
 * pick its own address with X-Forwarded-For). A hop count N trusts the N nearest hops (the
 * client is the N-th address from the right); a list trusts those proxies' addresses only.
 */
/**
 * Errors before a request exists (a timed-out or malformed request on the socket): the spec's
 * JSON error shape, then the connection is closed. 408 for a request that did not arrive in
 * time, 431 for oversized headers, 400 otherwise.
 */
function onClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, body] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', { ok: false, error: 'request_timeout', details: 'the request did not arrive within INVOICING_REQUEST_TIMEOUT_MS' }]
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', { ok: false, error: 'invalid_request', details: 'the request headers are too large' }]
        : [400, 'Bad Request', { ok: false, error: 'invalid_request', details: 'the request could not be parsed' }];
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

export function trustProxyOption(value: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (value === false) return false;
  if (typeof value === 'number') return (_address: string, hop: number) => hop < value;
  return value;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The e-mail service and its retry worker (started by the runtime, not by buildApp). */
    notifier: Notifier;
    /** EDO sync and its worker (started by the runtime, not by buildApp). */
    edo: EdoRuntime;
    /** Webhook endpoints and their delivery worker (started by the runtime, not by buildApp). */
    webhooks: WebhooksRuntime;
    /** The documents service (its read caches' counters, for tests and diagnostics). */
    invoices: InvoiceService;
    /** The catalog service (its cache's counters, for tests and diagnostics). */
    catalog: CatalogService;
  }
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  const clock = deps.clock ?? systemClock;
  // Share and portal tokens travel in the path under these bases: the logs redact them.
  const tokenPaths = [basePath(config.shareUrl), basePath(config.portalUrl)];
  const logStream = deps.logStream ?? logDestination();
  const logger = pino(loggerOptions(config.logLevel, tokenPaths, deps.logBase), logStream);

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    genReqId: generateRequestId,
    requestIdHeader: false,
    // The two request lines built as strings, and a request's child logger made only when used
    // (src/http/logging.ts): the same lines, a fraction of the cost.
    logController: new RequestLogController(logger, logStream, createUrlRedactor(tokenPaths)),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(config.trustProxy),
    // Slow clients cannot hold a node (docs/security.md): the headers and the body must arrive
    // within INVOICING_REQUEST_TIMEOUT_MS (408 where an answer can still be written), idle
    // keep-alive connections close after INVOICING_KEEP_ALIVE_TIMEOUT_MS, and the number of
    // open connections is capped (INVOICING_MAX_CONNECTIONS, below).
    requestTimeout: config.limits.requestTimeoutMs,
    keepAliveTimeout: config.limits.keepAliveTimeoutMs,
    http: {
      requestTimeout: config.limits.requestTimeoutMs,
      headersTimeout: config.limits.requestTimeoutMs,
      keepAliveTimeout: config.limits.keepAliveTimeoutMs,
      // How often Node checks the timeouts above: at most a second late.
      connectionsCheckingInterval: Math.min(1_000, config.limits.requestTimeoutMs),
    },
    clientErrorHandler: onClientError,
    // Fastify's own 503 while closing is not in the spec's shape: the hook below answers instead.
    return503OnClosing: false,
    frameworkErrors: onFrameworkError,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: true } },
  });

  app.server.maxConnections = config.limits.maxConnections;
  // PostgreSQL: a lost connection or a server that stopped answering is logged, never thrown (src/db/pg-pool.ts).
  database.onConnectionError?.((err, what) => app.log.warn({ err }, what));
  registerErrorHandling(app);
  // Set when the server starts closing (SIGTERM): see the first onRequest hook below.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  registerInputGuard(app);
  registerJsonParser(app);
  registerSchemaBounds(app);
  const methodGuard = trackRoutesForMethodNotAllowed(app);
  app.addSchema(ErrorBody);

  const metrics = createMetrics();
  registerRequestMetrics(app, metrics);
  registerOperationsMetrics(metrics.registry, {
    database,
    embeddedDatabaseFile: config.database.kind === 'sqlite' ? config.database.file : null,
    // Redis counts shared limits while `ok`; `degraded` means this process counts alone (fallback-store.ts).
    redis: deps.rateLimitStore.redisState ? { reachable: () => deps.rateLimitStore.redisState?.() === 'ok' } : null,
  });

  // CORS: only the service's own origin (its docs page) may read responses in a browser; the
  // API is for servers (ERPs, CRMs, shops), so no other origin is granted (docs/security.md).
  const allowedOrigin = new URL(config.publicUrl).origin;
  // Helmet's headers, computed once with its options (src/http/security-headers.ts).
  const securityHeaders = staticHeaders(
    await helmetHeaders({
      // JSON API: nothing may be framed or loaded; the docs and the share and portal pages set their own CSP.
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginEmbedderPolicy: false,
      hsts: { maxAge: 15552000, includeSubDomains: true },
    }),
  );
  // The first hook of every request, in one synchronous call (one hook, not three, per request):
  // while the server closes (SIGTERM), requests still arriving on open connections get the
  // spec's error shape instead of Fastify's own 503 body; else the request id, CORS and
  // security headers, in that order.
  const admit = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (closing) {
      reply.header('connection', 'close');
      done(new ApiError('shutting_down', { details: 'the server is shutting down; retry on another instance', retry_after_sec: 1 }, { 'retry-after': '1' }));
      return;
    }
    reply.header('X-Request-Id', request.id);
    reply.header('Access-Control-Allow-Origin', allowedOrigin);
    reply.headers(securityHeaders);
    done();
  };
  // An API process of several holds the requests it receives until the primary opens the
  // service (every process listens, the demo key is printed): an answer means the service is up.
  let held = deps.holdRequestsUntil ?? null;
  void held?.then(() => (held = null));
  app.addHook('onRequest', (request, reply, done) => {
    if (held === null) admit(request, reply, done);
    else void held.then(() => admit(request, reply, done));
  });

  const limiter = createRateLimitHooks({
    store: deps.rateLimitStore,
    ipRatePerSec: config.ipRatePerSec,
    demoRatePerSec: config.demoRatePerSec,
    onRefused: (code) => metrics.rateLimitRefusals.inc({ code }),
    log: app.log,
  });
  app.addHook('onRequest', limiter.limitByIp);
  app.addHook('onSend', limiter.addHeaders);

  await registerOpenApi(app, config);
  const metricsText = deps.exposeMetrics?.(metrics.registry) ?? (() => metrics.registry.metrics());
  const rateLimitStore = deps.rateLimitStore;
  registerOperationsRoutes(app, {
    database,
    metrics,
    metricsText,
    metricsToken: config.metricsToken,
    redisState: () => rateLimitStore.redisState?.() ?? 'none',
  });

  const bases = { publicUrl: config.publicUrl, shareUrl: config.shareUrl, portalUrl: config.portalUrl, secret: deps.secret };
  // PDFs (share pages, e-mail attachments, EDO sends) render in worker threads, off the event
  // loop. onClose hooks run last-registered first: the pool closes after the workers below
  // have finished their batches.
  const pdf = deps.pdf ?? createPdfRenderer(pdfPoolOptions(config));
  app.addHook('onClose', async () => pdf.close());
  const stores = deps.stores ?? createStores(database);
  // Catalogs, seller references and callers share INVOICING_REFERENCE_CACHE_MB, a third each.
  const referenceCache = { maxBytes: Math.floor(config.limits.referenceCacheBytes / 3), maxEntryBytes: config.limits.cacheEntryMaxBytes };
  const auth = new AuthService(database.db, stores.teams, config.demoToken, referenceCache);
  // The PDFs of the share pages and of the background jobs share one render cache (a DoS bound).
  const renderCache = new RenderCache(config.limits.renderCacheBytes);
  // E-mail attachments and EDO files: the document's PDF from its print model (src/document-files.ts).
  const files = documentFiles({ auth, prints: new DocumentPrints({ store: stores.invoices, bases, clock }), pdf, cache: renderCache });
  const notifier = createNotifications({
    database,
    stores: stores.notifications,
    clock,
    bases,
    config,
    documents: documentStatusPort,
    attachments: files.attachments,
    logger: app.log.child({ component: 'notifications' }),
    ...deps.notifications,
  });
  app.decorate('notifier', notifier);
  app.addHook('onClose', async () => notifier.close());
  const edo = createEdo({
    database,
    stores: stores.edo,
    clock,
    config,
    documents: documentStatusPort,
    files: files.edoFiles,
    logger: app.log.child({ component: 'edo' }),
    ...deps.edo,
  });
  app.decorate('edo', edo);
  app.addHook('onClose', async () => edo.close());
  const webhooks =
    deps.webhooks ?? createWebhooks({ database, stores, clock, config, secret: deps.secret, logger: app.log.child({ component: 'webhooks' }) });
  app.decorate('webhooks', webhooks);
  app.addHook('onClose', async () => webhooks.close());

  const invoices = new InvoiceService({
    store: stores.invoices,
    clock,
    bases,
    demoPublicId: config.demoPublicId,
    notifications: notifier.service,
    edo: edo.service,
    revisionsKeep: config.revisionsKeep,
    readCache: { maxBytes: config.limits.readCacheBytes, maxEntryBytes: config.limits.cacheEntryMaxBytes },
    referenceCache,
  });
  app.decorate('invoices', invoices);
  const catalog = new CatalogService(database.db, referenceCache);
  app.decorate('catalog', catalog);
  await app.register(async (api) => {
    api.decorateRequest('auth', null);
    // The API's routes count the caller's IP with its key and team rules, after authentication,
    // in one call to the limiter's store (src/http/rate-limit/rate-limit.hooks.ts).
    api.addHook('onRoute', (route) => {
      route.config = { ...route.config, rateLimitIpWithApi: true };
    });
    const authenticate = authHook(auth);
    api.addHook('onRequest', async (request, reply) => {
      try {
        await authenticate(request);
      } catch (err) {
        // Counted against the IP all the same; an IP refusal (429) wins, as when it came first.
        await limiter.limitPendingIp(request, reply);
        throw err;
      }
      await limiter.limitByKeyAndTeam(request, reply);
      if (request.auth?.mode === 'demo') refuseLargeDemoBody(request);
    });
    // A demo body sent without Content-Length (chunked) is cut at the same bound while it arrives.
    api.addHook('preParsing', async (request, _reply, payload) => (request.auth?.mode === 'demo' ? limitDemoBody(payload) : payload));
    await api.register(catalogRoutes, { catalog });
    await api.register(invoiceRoutes, { invoices });
    await api.register(eventRoutes, { db: database.db, events: stores.events, retentionDays: config.webhooks.eventRetentionDays, heavyReads: database.readThreads ?? null });
    await api.register(webhookRoutes, { webhooks: webhooks.service });
  });
  // Share and portal pages: outside the API's key check; their tokens are the credential.
  const sharing = new SharingService({
    db: database.db,
    clock,
    bases,
    invoices,
    auth,
    demoPublicId: config.demoPublicId,
    pdf,
    cache: renderCache,
  });
  await app.register(sharingRoutes, {
    service: sharing,
    limitLink: (request, reply, token) => limiter.limitByLink(request, reply, token, config.limits.linkRatePerMin),
  });
  methodGuard.addRefusals();
  return app;
}
