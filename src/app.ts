/**
 * buildApp(deps): the HTTP application. Registers the http plugins and each module's routes
 * explicitly; everything it needs (config, database, limiter store, clock) is passed in.
 */
import helmet from '@fastify/helmet';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import pino from 'pino';
import type { Config } from './config/config.js';
import type { DatabaseHandle } from './db/database.js';
import { MAX_PARAM_LENGTH, onFrameworkError, registerErrorHandling } from './http/error-handler.js';
import { authHook } from './http/auth.js';
import { loggerOptions } from './http/logging.js';
import { createMetrics, registerRequestMetrics } from './http/metrics.js';
import { trackRoutesForMethodNotAllowed } from './http/method-not-allowed.js';
import { registerOpenApi } from './http/openapi.js';
import { createRateLimitHooks } from './http/rate-limit/rate-limit.hooks.js';
import type { RateLimitStore } from './http/rate-limit/rate-limit.types.js';
import { generateRequestId } from './http/request-id.js';
import { registerOperationsRoutes } from './http/operations.routes.js';
import { catalogRoutes, CatalogService } from './modules/catalog/index.js';
import { eventRoutes } from './modules/events/index.js';
import { invoiceRoutes, InvoiceService } from './modules/invoices/index.js';
import { createEdo, type EdoRuntime } from './modules/edo/index.js';
import { createPdfRenderer, type PdfRenderer } from './modules/rendering/pdf-pool.js';
import { createNotifications, type Notifier } from './modules/notifications/index.js';
import { basePath } from './modules/sharing/index.js';
import { edoDocumentFiles, pdfAttachments, SharingService, sharingRoutes } from './modules/sharing/web.js';
import { AuthService } from './modules/teams/index.js';
import { createWebhooks, webhookRoutes, type WebhooksRuntime } from './modules/webhooks/index.js';
import { ErrorBody } from './shared/schemas.js';
import { systemClock, type Clock } from './shared/clock.js';

/** 5 MB as the spec counts it: 5 × 1024 × 1024 bytes. */
export const BODY_LIMIT_BYTES = 5_242_880;

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  rateLimitStore: RateLimitStore;
  /** Signs portal links: INVOICING_SECRET, or the one generated and kept in the database. */
  secret: string;
  clock?: Clock;
  /** Where JSON log lines go (default stdout); tests pass a stream to inspect them. */
  logStream?: DestinationStream;
  /** E-mail delivery; by default built from the configuration (SMTP_URL or .eml files). */
  notifier?: Notifier;
  /** EDO sync (tests pass one with their own operator and policy). */
  edo?: EdoRuntime;
  /** Where PDFs are rendered; by default a pool of worker threads (closed with the app). */
  pdf?: PdfRenderer;
  /** Webhook endpoints and their delivery worker (tests pass one with their own clock and policy). */
  webhooks?: WebhooksRuntime;
}

export type App = FastifyInstance;

declare module 'fastify' {
  interface FastifyInstance {
    /** The e-mail service and its retry worker (started by the runtime, not by buildApp). */
    notifier: Notifier;
    /** EDO sync and its worker (started by the runtime, not by buildApp). */
    edo: EdoRuntime;
    /** Webhook endpoints and their delivery worker (started by the runtime, not by buildApp). */
    webhooks: WebhooksRuntime;
  }
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  const clock = deps.clock ?? systemClock;
  // Share and portal tokens travel in the path under these bases: the logs redact them.
  const tokenPaths = [basePath(config.shareUrl), basePath(config.portalUrl)];
  const logger: FastifyBaseLogger = pino(loggerOptions(config.logLevel, tokenPaths), deps.logStream ?? pino.destination(1));

  const app = Fastify({
    loggerInstance: logger,
    genReqId: generateRequestId,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    frameworkErrors: onFrameworkError,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: true } },
  });

  registerErrorHandling(app);
  const methodGuard = trackRoutesForMethodNotAllowed(app);
  app.addSchema(ErrorBody);

  const metrics = createMetrics();
  registerRequestMetrics(app, metrics);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  await app.register(helmet, {
    // JSON API: nothing may be framed or loaded; the docs and the share and portal pages set their own CSP.
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginEmbedderPolicy: false,
    hsts: { maxAge: 15552000, includeSubDomains: true },
  });

  const limiter = createRateLimitHooks({
    store: deps.rateLimitStore,
    ipRatePerSec: config.ipRatePerSec,
    onRefused: (code) => metrics.rateLimitRefusals.inc({ code }),
    log: app.log,
  });
  app.addHook('onRequest', limiter.limitByIp);
  app.addHook('onSend', limiter.addHeaders);

  await registerOpenApi(app, config);
  registerOperationsRoutes(app, { database, metrics });

  const bases = { publicUrl: config.publicUrl, shareUrl: config.shareUrl, portalUrl: config.portalUrl, secret: deps.secret };
  // PDFs (share pages, e-mail attachments, EDO sends) render in worker threads, off the event
  // loop. onClose hooks run last-registered first: the pool closes after the workers below
  // have finished their batches.
  const pdf = deps.pdf ?? createPdfRenderer();
  app.addHook('onClose', async () => pdf.close());
  const notifier =
    deps.notifier ?? createNotifications({ database, clock, bases, config, logger: app.log.child({ component: 'notifications' }) });
  app.decorate('notifier', notifier);
  app.addHook('onClose', async () => notifier.close());
  const edo = deps.edo ?? createEdo({ database, clock, config, logger: app.log.child({ component: 'edo' }) });
  app.decorate('edo', edo);
  app.addHook('onClose', async () => edo.close());
  const webhooks =
    deps.webhooks ?? createWebhooks({ database, clock, config, secret: deps.secret, logger: app.log.child({ component: 'webhooks' }) });
  app.decorate('webhooks', webhooks);
  app.addHook('onClose', async () => webhooks.close());

  const auth = new AuthService(database.db, config.demoToken);
  const invoices = new InvoiceService({
    db: database.db,
    clock,
    bases,
    demoPublicId: config.demoPublicId,
    notifications: notifier.service,
    edo: edo.service,
  });
  await app.register(async (api) => {
    api.decorateRequest('auth', null);
    api.addHook('onRequest', authHook(auth));
    api.addHook('onRequest', limiter.limitByKeyAndTeam);
    await api.register(catalogRoutes, { catalog: new CatalogService(database.db) });
    await api.register(invoiceRoutes, { invoices });
    await api.register(eventRoutes, { db: database.db, retentionDays: config.webhooks.eventRetentionDays });
    await api.register(webhookRoutes, { webhooks: webhooks.service });
  });
  // Share and portal pages: outside the API's key check; their tokens are the credential.
  const sharing = new SharingService({ db: database.db, clock, bases, invoices, auth, demoPublicId: config.demoPublicId, pdf });
  await app.register(sharingRoutes, { service: sharing });
  notifier.service.useAttachments(pdfAttachments(sharing));
  edo.service.useFiles(edoDocumentFiles(sharing));
  methodGuard.addRefusals();
  return app;
}
