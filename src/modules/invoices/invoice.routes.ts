/** Documents API routes (spec section 4): parse → service → reply. */
import { TypeBoxValidatorCompiler, type FastifyPluginAsyncTypebox, type TSchema } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { API_SECURITY, API_WRITE_SECURITY } from '../../shared/api-security.js';
import { errorResponses, ref } from '../../shared/schemas.js';
import { requireAuth } from '../teams/index.js';
import {
  CreateInvoiceBody,
  InvoiceList,
  InvoiceListItem,
  InvoicePayload,
  InvoiceRevisionDetail,
  InvoiceRevisionList,
  RevisionParams,
  RevisionsQuery,
  ListQuery,
  PublicIdParams,
  UpdateInvoiceBody,
  CreateHeaders,
  UpdateHeaders,
} from './invoice-requests.schemas.js';
import { InvoiceDetail, InvoiceWriteResponse } from './invoice.schemas.js';
import type { InvoiceService, RequestInfo, WriteOutcome } from './invoice.service.js';
import { extended } from '../../shared/objects.js';
import { annotateActiveSpan, ATTR } from '../../shared/tracing.js';

/**
 * Write routes check params and headers with TypeBox and leave the body to the service, which
 * reports every problem at once and coerces nothing. The app's ajv coerces types in place
 * (`"2"` → 2, `[false]` → false, `0` → `"0"`), which would change the document before the
 * service sees it; the body schema stays on the route for the OpenAPI description only.
 */
function writeValidatorCompiler<T>(route: Parameters<FastifySchemaCompiler<T>>[0]): ReturnType<FastifySchemaCompiler<T>> {
  if (route.httpPart === 'body') return (value: unknown) => ({ value });
  return TypeBoxValidatorCompiler(route as unknown as Parameters<FastifySchemaCompiler<TSchema>>[0]);
}

function requestInfo(request: FastifyRequest): RequestInfo {
  return { host: request.host, requestId: String(request.id) };
}

function sendWrite(reply: FastifyReply, outcome: WriteOutcome, teamId: string) {
  // The request's trace names the team and the document written (never the key or the content).
  annotateActiveSpan({ [ATTR.teamId]: teamId, [ATTR.publicId]: outcome.body.public_id ?? '' });
  reply.header('ETag', outcome.etag);
  if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}

const writeDescription = (what: string) =>
  `${what} The seller must match an active organization of the team by INN (403 seller_org_not_allowed) within the tariff's organization limit (403 seller_org_over_tariff_limit); a write that would take the team's stored documents and revisions past the tariff's max_storage_mb is refused (403 storage_over_tariff_limit, nothing saved); seller requisites the payload omits are filled from the organization and its default bank account. Totals are computed in decimal arithmetic, rounded half-up to kopecks per line. 207 means the document is saved and some planned e-mails were not sent. With the demo token nothing is stored (dry-run).`;

export const invoiceRoutes: FastifyPluginAsyncTypebox<{ invoices: InvoiceService }> = async (app, { invoices }) => {
  app.addSchema(InvoicePayload);
  app.addSchema(InvoiceDetail);
  app.addSchema(InvoiceWriteResponse);
  app.addSchema(InvoiceList);
  app.addSchema(InvoiceRevisionList);
  app.addSchema(InvoiceRevisionDetail);

  app.post(
    '/api/v1/invoices',
    {
      validatorCompiler: writeValidatorCompiler,
      // The team's stored bytes (tariff max_storage_mb) are read with the key, in one statement.
      config: { readsListState: true },
      schema: {
        operationId: 'createInvoice',
        summary: 'Create an invoice',
        description: writeDescription(
          'Creates a document (editor_mode=api). The document goes at the root or in `invoice`. `Idempotency-Key` makes retries safe.',
        ),
        tags: ['invoices'],
        security: API_WRITE_SECURITY,
        headers: CreateHeaders,
        body: CreateInvoiceBody,
        response: {
          200: ref(InvoiceWriteResponse, 'Created.'),
          207: ref(InvoiceWriteResponse, 'Created; some planned e-mails were not sent (see `notifications`).'),
          ...errorResponses(400, 401, 403, 409, 413, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const outcome = await invoices.create(
        auth,
        request.body,
        extended(requestInfo(request), { idempotencyKey: request.headers['idempotency-key'] ?? null }),
      );
      return sendWrite(reply, outcome, auth.teamId);
    },
  );

  app.put(
    '/api/v1/invoices/:public_id',
    {
      validatorCompiler: writeValidatorCompiler,
      config: { readsListState: true },
      schema: {
        operationId: 'updateInvoice',
        summary: 'Fully update an invoice',
        description: writeDescription(
          'Replaces the document with the full one in `invoice` (partial updates: 400 partial_update_not_supported). `If-Match` with the ETag refuses a lost update (409 revision_conflict). The previous revision is kept.',
        ),
        tags: ['invoices'],
        security: API_WRITE_SECURITY,
        params: PublicIdParams,
        headers: UpdateHeaders,
        body: UpdateInvoiceBody,
        response: {
          200: ref(InvoiceWriteResponse, 'Updated.'),
          207: ref(InvoiceWriteResponse, 'Updated; some planned e-mails were not sent.'),
          ...errorResponses(400, 401, 403, 404, 409, 413, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const outcome = await invoices.update(
        auth,
        request.params.public_id,
        request.body,
        extended(requestInfo(request), { ifMatch: request.headers['if-match'] ?? null }),
      );
      return sendWrite(reply, outcome, auth.teamId);
    },
  );

  app.get(
    '/api/v1/invoices/:public_id',
    {
      // The detail cache is validated by the team's list version: read with the key (one round trip).
      config: { readsListState: true },
      schema: {
        operationId: 'getInvoice',
        summary: 'Read an invoice',
        description:
          "The document with its links, status, validation, metadata, totals and QR. Another team's document is 404 document_not_found. With the demo token: the sample document for the demo id, 404 with `demo_public_id` otherwise.",
        tags: ['invoices'],
        security: API_SECURITY,
        params: PublicIdParams,
        response: { 200: ref(InvoiceDetail, 'The document.'), ...errorResponses(401, 403, 404, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      // Serialized by the route's own response serializer, so the cached text (read/read-caches.ts) is
      // byte for byte what Fastify would send for the object.
      const detail = await invoices.getJson(requireAuth(request), request.params.public_id, requestInfo(request), (body) =>
        String(reply.serialize(body)),
      );
      reply.header('ETag', detail.etag);
      reply.header('content-type', 'application/json; charset=utf-8');
      // The route declares the object it serializes; the text (or, from the cache, its UTF-8
      // bytes: Fastify sends a Buffer as it is, with the same headers) is that object serialized.
      return reply.send(detail.json as unknown as InvoiceDetail);
    },
  );

  app.get(
    '/api/v1/invoices/:public_id/revisions',
    {
      schema: {
        operationId: 'listInvoiceRevisions',
        summary: 'Previous revisions of an invoice',
        description:
          'A page of the revisions updates replaced, newest first, as summaries without the document (`GET …/revisions/{revision}` returns one with its document). `limit` 1–100 (default 20), `offset` ≥ 0, `total` counts every kept revision. Each document keeps its newest INVOICING_REVISIONS_KEEP previous revisions (default 100; older ones are deleted when an update is saved).',
        tags: ['invoices'],
        security: API_SECURITY,
        params: PublicIdParams,
        querystring: RevisionsQuery,
        response: { 200: ref(InvoiceRevisionList, 'A page of revisions.'), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => invoices.revisions(requireAuth(request), request.params.public_id, request.query),
  );

  app.get(
    '/api/v1/invoices/:public_id/revisions/:revision',
    {
      schema: {
        operationId: 'getInvoiceRevision',
        summary: 'One revision of an invoice',
        description:
          'One revision with the document as it was (`invoice`): a previous one still kept, or the current one (`superseded_at` null). An unknown revision, or one deleted by the retention rule, is 404 revision_not_found; another team\'s document is 404 document_not_found.',
        tags: ['invoices'],
        security: API_SECURITY,
        params: RevisionParams,
        response: { 200: ref(InvoiceRevisionDetail, 'The revision.'), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => invoices.revision(requireAuth(request), request.params.public_id, request.params.revision),
  );

  app.get(
    '/api/v1/invoices',
    {
      // The page cache is validated by the team's list version: read with the key (one round trip).
      config: { readsListState: true },
      schema: {
        operationId: 'listInvoices',
        summary: 'List invoices',
        description:
          '`q` matches a case-insensitive substring of the number, seller or buyer name or INN; `date_from`/`date_to` are inclusive bounds on the document date; `updated_since` returns documents modified at or after an instant. Ordered by date descending, then creation descending. `limit` 1–200 (default 50), `offset` ≥ 0; anything else is 400 invalid_query.',
        tags: ['invoices'],
        security: API_SECURITY,
        querystring: ListQuery,
        response: { 200: ref(InvoiceList, 'A page of documents.'), ...errorResponses(400, 401, 403, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      // Serialized by the route's serializers; items are reused per document, whole pages are
      // kept as UTF-8 bytes per team list version (read/read-caches.ts).
      const json = await invoices.listJson(requireAuth(request), request.query, requestInfo(request), {
        list: (body) => String(reply.serialize(body)),
        item: (item) => String(reply.serializeInput(item, InvoiceListItem)),
      });
      reply.header('content-type', 'application/json; charset=utf-8');
      return reply.send(json as unknown as InvoiceList);
    },
  );
};
