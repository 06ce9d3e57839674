/**
 * The share and portal pages over HTTP: parse → SharingService → HTML, PDF or image.
 *
 * Where they live: under the path of each configured base (`/s` and `/portal` by default, ``
 * for a base that is a host of its own), on whatever host the request names, so the one server
 * answers every URL the API returns when the share or portal host points at it. When both bases
 * have the same path (e.g. two hosts at `/`), one scope serves both sets of routes; they never
 * collide (share tokens are random base64url, portal routes start with fixed words), so no
 * Host-based dispatch is needed and the pages also work when a proxy rewrites the Host.
 *
 * Each scope has its own: form body parser (`application/x-www-form-urlencoded`, which the
 * JSON API keeps refusing), HTML error and 404 pages, and security headers (a strict CSP
 * allowing only the same-origin stylesheet, script and images, no referrer, no caching, no
 * indexing). These routes are not part of the JSON API's OpenAPI description (docs/sharing.md).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestInfo } from '../invoices/index.js';
import { databaseUnavailableReason } from '../../db/errors.js';
import { ApiError } from '../../shared/errors.js';
import { renderMessagePage, renderNotFoundPage, renderShareDisabledPage, STATIC_ASSETS, type PostedFields } from './pages/index.js';
import { RENDER_BUSY_RETRY_MS, RenderQueueFullError, RenderTimeoutError } from '../rendering/index.js';
import { PageError, type PageProblem, type PortalRoute, type RenderedFile, type SharingService } from './sharing.service.js';

/** Seconds a client is asked to wait when the PDF render queue is full, a render was stopped, or the database cannot serve the page now. */
const RENDER_RETRY_AFTER_SEC = RENDER_BUSY_RETRY_MS / 1000;

/** 503 in the API's error shape, never cached, for a PDF that cannot be rendered now. */
function renderRefusal(reply: FastifyReply, code: 'render_queue_full' | 'render_timeout', details: string) {
  const busy = new ApiError(code, { details, retry_after_sec: RENDER_RETRY_AFTER_SEC }, { 'retry-after': String(RENDER_RETRY_AFTER_SEC) });
  return reply.code(503).headers(busy.headers).header('cache-control', 'no-store').send(busy.body);
}

/** The per-link rate limit (INVOICING_LINK_RATE_PER_MIN), run on every route with a token. */
export type LinkLimiter = (request: FastifyRequest, reply: FastifyReply, token: string) => Promise<void>;

/** CSP of the HTML pages: nothing inline, nothing from elsewhere, no framing, forms post home. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** CSP of the QR images (an SVG is a document too): nothing at all. */
const IMAGE_CSP = "default-src 'none'; frame-ancestors 'none'";

const HTML = 'text/html; charset=utf-8';
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface TokenParams {
  token: string;
}

/** HTML routes stay out of the JSON API's OpenAPI description (docs/sharing.md describes them). */
const tokenSchema = { hide: true } as const;

function info(request: FastifyRequest): RequestInfo {
  return { host: request.host, requestId: String(request.id) };
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).type(HTML).send(html);
}

/**
 * A PDF or QR image: `ETag` (the hash of what it is rendered from, read from the database on
 * this request), `Cache-Control: private, no-cache` (a browser keeps it but asks again each
 * time, so a revoked link or a disabled share is never served from its cache), and 304 for a
 * matching `If-None-Match`, without rendering.
 */
async function sendFile(request: FastifyRequest, reply: FastifyReply, file: RenderedFile, type: string) {
  reply.header('etag', file.etag).header('cache-control', 'private, no-cache');
  if (file.filename) reply.header('content-disposition', contentDisposition(file.filename));
  if (etagMatches(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  return reply.type(type).send(await file.load());
}

/** `If-None-Match`: `*` or a list of (weak or strong) tags, compared weakly (RFC 9110, 13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** `inline`, with the ASCII fallback name and the real one in RFC 5987 form. */
export function contentDisposition(filename: { name: string; ascii: string }): string {
  const encoded = encodeURIComponent(filename.name).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `inline; filename="${filename.ascii.replace(/[^A-Za-z0-9._-]/g, '_')}"; filename*=UTF-8''${encoded}`;
}

/** The posted form as name → value(s); a null prototype keeps `__proto__` an ordinary name. */
export function parseFormBody(body: string): PostedFields {
  const fields = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(body)) {
    const prev = fields[name];
    if (prev === undefined) fields[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else fields[name] = [prev, value];
  }
  return fields;
}

function postedFields(body: unknown): PostedFields {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as PostedFields) : {};
}

function problemPage(problem: PageProblem, assetPrefix: string): { status: number; html: string } {
  switch (problem) {
    case 'not_found':
      return { status: 404, html: renderNotFoundPage({ assetPrefix }) };
    case 'share_forbidden':
      return { status: 403, html: renderShareDisabledPage({ assetPrefix }) };
    case 'view_only':
      return {
        status: 403,
        html: renderMessagePage({
          title: 'Только просмотр',
          message: 'Эта ссылка позволяет только просматривать счёт, но не изменять его.',
          hint: 'Для изменений откройте ссылку на редактирование из последнего ответа API.',
          assetPrefix,
        }),
      };
    case 'csrf_failed':
      return {
        status: 403,
        html: renderMessagePage({
          title: 'Форма устарела',
          message: 'Изменения не сохранены: форма отправлена не со страницы редактирования или устарела.',
          hint: 'Откройте страницу редактирования заново и повторите изменения.',
          assetPrefix,
        }),
      };
  }
}

interface SiteOptions {
  service: SharingService;
  limitLink?: LinkLimiter | undefined;
  share: boolean;
  portal: boolean;
  /** The scope's path prefix ('' at the root), for the pages' asset links. */
  path: string;
}

async function site(app: FastifyInstance, { service, share, portal, path, limitLink }: SiteOptions): Promise<void> {
  if (limitLink) {
    // Per token, on top of the per-IP limit: one leaked link cannot be hammered from many addresses.
    app.addHook('onRequest', async (request, reply) => {
      const token = (request.params as Partial<TokenParams> | undefined)?.token;
      if (typeof token === 'string' && token !== '') await limitLink(request, reply, token);
    });
  }
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseFormBody(body as string));
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    const type = String(reply.getHeader('content-type') ?? '');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-robots-tag', 'noindex, nofollow');
    if (reply.getHeader('cache-control') === undefined) reply.header('cache-control', 'no-store');
    if (type.startsWith('text/html')) {
      reply.header('content-security-policy', PAGE_CSP);
    } else if (type.startsWith('image/')) {
      reply.header('content-security-policy', IMAGE_CSP);
      // The QR may be embedded by the seller's own pages (`qr.url`).
      reply.header('cross-origin-resource-policy', 'cross-origin');
    } else if (type.startsWith('application/pdf')) {
      // A CSP on a PDF can stop the browser's built-in viewer; a PDF runs no page script.
      reply.removeHeader('content-security-policy');
      reply.header('cross-origin-resource-policy', 'cross-origin');
    }
    return payload;
  });

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof PageError) {
      const page = problemPage(error.problem, path);
      return sendPage(reply, page.status, page.html);
    }
    if (error instanceof RenderQueueFullError) {
      return renderRefusal(reply, 'render_queue_full', 'every PDF renderer is busy and the queue is full; try again shortly');
    }
    if (error instanceof RenderTimeoutError) {
      request.log.warn({ timeout_ms: error.timeoutMs }, 'PDF render stopped at its timeout');
      return renderRefusal(reply, 'render_timeout', `the PDF took longer than ${error.timeoutMs} ms to render and was stopped; try again shortly`);
    }
    // The rate limits answer in the API's shape on every route (operating contract, section 4).
    if (error instanceof ApiError && (error.status === 429 || error.status === 503)) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return reply.code(error.status).send(error.body);
    }
    // The database cannot serve the page now (src/db/errors.ts): a page saying so, never a 500.
    if (databaseUnavailableReason(error) !== null) {
      request.log.error({ err: error }, 'page failed: the database is unavailable');
      reply.header('retry-after', String(RENDER_RETRY_AFTER_SEC));
      return sendPage(
        reply,
        503,
        renderMessagePage({ title: 'Сервис временно недоступен', message: 'Не удалось показать страницу. Попробуйте обновить её через минуту.', assetPrefix: path }),
      );
    }
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendPage(
        reply,
        status,
        renderMessagePage({ title: 'Запрос не принят', message: 'Страница не может обработать такой запрос.', assetPrefix: path }),
      );
    }
    request.log.error({ err: error }, 'page failed');
    return sendPage(
      reply,
      500,
      renderMessagePage({
        title: 'Ошибка сервиса',
        message: 'Не удалось показать страницу. Попробуйте обновить её через минуту.',
        hint: `Номер запроса: ${String(request.id)}`,
        assetPrefix: path,
      }),
    );
  });

  // A scope at the root shares the application's JSON 404; elsewhere unknown paths get the page.
  if (path !== '') {
    app.setNotFoundHandler((_request, reply) => sendPage(reply, 404, renderNotFoundPage({ assetPrefix: path })));
  }

  for (const asset of STATIC_ASSETS) {
    app.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(asset.contentType).header('cache-control', IMMUTABLE).send(asset.body),
    );
  }

  if (share) registerShareRoutes(app, service);
  if (portal) registerPortalRoutes(app, service);
}

function registerShareRoutes(app: FastifyInstance, service: SharingService): void {
  app.get<{ Params: TokenParams }>('/:token', { schema: tokenSchema }, async (request, reply) =>
    sendPage(reply, 200, await service.sharePage(request.params.token, info(request), { countOpen: request.method === 'GET' })),
  );
  app.get<{ Params: TokenParams }>('/:token/document.pdf', { schema: tokenSchema }, async (request, reply) =>
    sendFile(request, reply, await service.sharePdf(request.params.token, info(request), { countOpen: request.method === 'GET' }), 'application/pdf'),
  );
  app.get<{ Params: TokenParams }>('/:token/qr.png', { schema: tokenSchema }, async (request, reply) =>
    sendFile(request, reply, await service.shareQr(request.params.token, 'png', info(request)), 'image/png'),
  );
  app.get<{ Params: TokenParams }>('/:token/qr.svg', { schema: tokenSchema }, async (request, reply) =>
    sendFile(request, reply, await service.shareQr(request.params.token, 'svg', info(request)), 'image/svg+xml; charset=utf-8'),
  );
  app.post<{ Params: TokenParams }>('/:token/payment-reported', { schema: tokenSchema }, async (request, reply) => {
    const page = await service.reportPayment(request.params.token, info(request));
    return reply.code(303).header('location', page).send();
  });
}

function registerPortalRoutes(app: FastifyInstance, service: SharingService): void {
  for (const route of [{ document: false }, { document: true }] as PortalRoute[]) {
    const at = route.document ? '/document' : '';
    app.get<{ Params: TokenParams; Querystring: { saved?: string } }>(`${at}/view/:token`, { schema: tokenSchema }, async (request, reply) =>
      sendPage(reply, 200, await service.portalViewPage(request.params.token, route, info(request), { saved: request.query.saved === '1' })),
    );
    app.get<{ Params: TokenParams }>(`${at}/edit/:token`, { schema: tokenSchema }, async (request, reply) =>
      sendPage(reply, 200, await service.portalEditPage(request.params.token, route, info(request))),
    );
    app.post<{ Params: TokenParams }>(`${at}/edit/:token`, { schema: tokenSchema }, async (request, reply) => {
      const outcome = await service.savePortalEdit(request.params.token, route, postedFields(request.body), info(request));
      if (outcome.kind === 'saved') return reply.code(303).header('location', outcome.location).send();
      return sendPage(reply, outcome.status, outcome.html);
    });
  }
  app.get<{ Params: TokenParams }>('/view/:token/document.pdf', { schema: tokenSchema }, async (request, reply) =>
    sendFile(request, reply, await service.portalPdf(request.params.token, info(request)), 'application/pdf'),
  );
  app.get<{ Params: TokenParams }>('/view/:token/qr.png', { schema: tokenSchema }, async (request, reply) =>
    sendFile(request, reply, await service.portalQr(request.params.token, info(request)), 'image/png'),
  );
}

/**
 * Registers the pages under the share and portal bases' paths (one scope per distinct path).
 * Register it on the application root, outside the API's authenticated scope.
 */
export async function sharingRoutes(app: FastifyInstance, { service, limitLink }: { service: SharingService; limitLink?: LinkLimiter }): Promise<void> {
  const { share, portal } = service.paths;
  const paths = share === portal ? [share] : [share, portal];
  for (const path of paths) {
    await app.register(site, { prefix: path, service, share: path === share, portal: path === portal, path, limitLink });
  }
}
