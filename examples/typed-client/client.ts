/**
 * A typed client for the Invoicing API: `openapi-fetch` over the types that `openapi-typescript`
 * generated from the service's own OpenAPI description (`schema.d.ts`, see `generate.sh`). Paths,
 * query parameters, headers, bodies and responses are all checked by the compiler; a change to the
 * API that breaks this file breaks the build, and test/examples/typed-client.test.ts fails when
 * `schema.d.ts` no longer matches what the service serves.
 *
 * Run it against a running service (defaults: http://localhost:8080 and the demo token, so it works
 * against any instance in dry-run mode and stores nothing):
 *
 *   INVOICING_URL=http://localhost:8080 INVOICING_API_KEY=ak_... npx tsx examples/typed-client/client.ts
 *
 * Every call returns an `ApiResult`: the typed success body, or the error body (schema `ErrorBody`)
 * with its HTTP status. Callers branch on `result.ok` and then on `error.error`, the closed error
 * identifier (`describeError` below shows every one of them).
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type InvoicingClient = Client<paths>;
export type ErrorBody = components['schemas']['ErrorBody'];
/** What a failed call carries: the service's ErrorBody, or `http_<status>` for a body that is not one (a proxy page). */
export type ClientError = Omit<ErrorBody, 'error'> & { error: ErrorBody['error'] | `http_${number}` };
export type InvoicePayload = components['schemas']['InvoicePayload'];
export type InvoiceWriteResponse = components['schemas']['InvoiceWriteResponse'];
export type InvoiceDetail = components['schemas']['InvoiceDetail'];
export type InvoiceList = components['schemas']['InvoiceList'];
export type ListQuery = NonNullable<paths['/api/v1/invoices']['get']['parameters']['query']>;

export interface ApiSuccess<T> {
  ok: true;
  /** 200, or 207 for a write whose document was saved while some planned e-mails were not sent. */
  status: number;
  data: T;
  /** The document's ETag (single-document responses); send it back in If-Match on PUT. */
  etag: string | null;
}

export interface ApiFailure {
  ok: false;
  status: number;
  error: ClientError;
  /** Seconds to wait before retrying (429, and 409 idempotency_request_in_progress); null otherwise. */
  retryAfterSec: number | null;
}

export type ApiResult<T> = ApiSuccess<T> | ApiFailure;

export interface ClientOptions {
  /** e.g. `http://localhost:8080`: the paths of the description already start with `/api`. */
  baseUrl: string;
  /** A team API key (or the demo token). Sent in `x-api-key`, the preferred way. */
  apiKey: string;
  /** Only for a service key: the team to act for. */
  tenantId?: string;
  /** A fetch to use instead of the global one (a proxy agent, logging, tests). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createInvoicingClient(options: ClientOptions): InvoicingClient {
  const headers: Record<string, string> = { 'x-api-key': options.apiKey };
  if (options.tenantId) headers['x-tenant-id'] = options.tenantId;
  return createClient<paths>({ baseUrl: options.baseUrl, headers, ...(options.fetch ? { fetch: options.fetch } : {}) });
}

/**
 * The error body as `ErrorBody`. Every error the service sends has that shape; anything else (a
 * proxy's HTML page, a connection cut mid-body) is wrapped so callers handle a single type.
 */
function toErrorBody(status: number, raw: unknown): ClientError {
  if (typeof raw === 'object' && raw !== null && (raw as { ok?: unknown }).ok === false && typeof (raw as { error?: unknown }).error === 'string') {
    return raw as ErrorBody;
  }
  return { ok: false, error: `http_${status}`, details: typeof raw === 'string' ? raw.slice(0, 500) : JSON.stringify(raw) };
}

function failure(response: Response, raw: unknown): ApiFailure {
  const error = toErrorBody(response.status, raw);
  const header = Number(response.headers.get('retry-after'));
  const retryAfterSec = error.retry_after_sec ?? (Number.isInteger(header) && header > 0 ? header : null);
  return { ok: false, status: response.status, error, retryAfterSec };
}

function success<T>(response: Response, data: T): ApiSuccess<T> {
  return { ok: true, status: response.status, data, etag: response.headers.get('etag') };
}

/** One line for a log or a UI, written from the error identifier and the fields it carries. */
export function describeError(failure: ApiFailure): string {
  const e = failure.error;
  switch (e.error) {
    case 'unauthorized':
      // e.code: api_key_missing | api_key_invalid | api_key_inactive | api_key_over_tariff_limit
      return `the API key was refused (${e.code ?? 'unknown reason'}): ${e.details ?? ''}`;
    case 'rate_limited':
      // e.code names the scope and window: ip_per_sec, key_per_min, team_per_day, …
      return `rate limited by ${e.code ?? 'a limit'}; retry in ${e.retry_after_sec ?? failure.retryAfterSec ?? 1} s`;
    case 'validation_failed': {
      const missing = e.missing_fields?.length ? `missing: ${e.missing_fields.join(', ')}` : '';
      const invalid = (e.errors ?? []).filter((x) => x.code !== 'required').map((x) => `${x.field} (${x.code})`);
      return `the document was refused: ${[missing, invalid.length ? `invalid: ${invalid.join(', ')}` : ''].filter(Boolean).join('; ')}`;
    }
    case 'prohibited_field':
      return `remove URLs and images from the document: ${(e.errors ?? []).map((x) => x.field).join(', ') || e.details}`;
    case 'seller_org_not_allowed':
    case 'seller_org_over_tariff_limit':
      return `seller.inn must be one of the team's organizations within the tariff (see GET /api/v1/ref/catalog): ${e.details ?? ''}`;
    case 'document_not_found':
      return e.demo_public_id
        ? `demo mode stores nothing; the only readable document is ${e.demo_public_id}`
        : `no document ${e.document_public_id ?? ''} in this team`;
    case 'revision_conflict':
      return 'the document changed since it was read: GET it again (new ETag), re-apply the change and PUT again';
    case 'idempotency_request_in_progress':
      return 'the first request with this Idempotency-Key is still running: retry the same request shortly';
    case 'idempotency_key_reused':
      return 'this Idempotency-Key was used for a different body: use a new key for a new document';
    case 'internal_error':
      return `internal error; quote request id ${e.request_id ?? '?'} to the operator`;
    default:
      return `${e.error}${e.details ? `: ${e.details}` : ''}`;
  }
}

/** Refusals worth retrying unchanged: rate limits, and a concurrent request with the same Idempotency-Key. */
function isRetryable(result: ApiFailure): boolean {
  return result.error.error === 'rate_limited' || result.error.error === 'idempotency_request_in_progress';
}

/** Runs `call`, waiting `Retry-After` and trying again (up to `attempts`) when the refusal is retryable. */
export async function withRetry<T>(call: () => Promise<ApiResult<T>>, attempts = 3, maxWaitSec = 10): Promise<ApiResult<T>> {
  for (let attempt = 1; ; attempt++) {
    const result = await call();
    if (result.ok || attempt >= attempts || !isRetryable(result)) return result;
    const waitSec = Math.min(result.retryAfterSec ?? 1, maxWaitSec);
    await new Promise((resolve) => setTimeout(resolve, waitSec * 1000));
  }
}

export interface CreateOptions {
  /**
   * Makes the create safe to retry: the same key and body within 24 h replays the first response
   * instead of creating a second document. Defaults to a new random key per call of createInvoice
   * (retries inside it reuse it); pass your own, e.g. your order id, to survive a crash of your side.
   */
  idempotencyKey?: string;
  /** Send the document by e-mail to `api_recipients` (or `buyer.email`). */
  notify?: boolean;
  /** Recorded as the creating login. */
  actorLogin?: string;
}

/** POST /api/v1/invoices with the document in the `invoice` envelope. */
export async function createInvoice(client: InvoicingClient, invoice: InvoicePayload, options: CreateOptions = {}): Promise<ApiResult<InvoiceWriteResponse>> {
  const idempotencyKey = options.idempotencyKey ?? randomUUID();
  return withRetry(async () => {
    const { data, error, response } = await client.POST('/api/v1/invoices', {
      params: { header: { 'idempotency-key': idempotencyKey } },
      body: {
        invoice,
        ...(options.notify !== undefined ? { notify_recipients: options.notify } : {}),
        ...(options.actorLogin !== undefined ? { actor_login: options.actorLogin } : {}),
      },
    });
    return data ? success(response, data) : failure(response, error);
  });
}

/** GET /api/v1/invoices/{public_id}; the result carries the ETag for a later PUT with If-Match. */
export async function getInvoice(client: InvoicingClient, publicId: string): Promise<ApiResult<InvoiceDetail>> {
  return withRetry(async () => {
    const { data, error, response } = await client.GET('/api/v1/invoices/{public_id}', {
      params: { path: { public_id: publicId } },
    });
    return data ? success(response, data) : failure(response, error);
  });
}

/** GET /api/v1/invoices: one page (q, date_from, date_to, updated_since, limit 1–200, offset). */
export async function listInvoices(client: InvoicingClient, query: ListQuery = {}): Promise<ApiResult<InvoiceList>> {
  return withRetry(async () => {
    const { data, error, response } = await client.GET('/api/v1/invoices', { params: { query } });
    return data ? success(response, data) : failure(response, error);
  });
}

export interface FlowOutcome {
  created: InvoiceWriteResponse;
  /** The document as read back (in demo mode: the published sample, since nothing is stored). */
  fetched: InvoiceDetail;
  etag: string | null;
  /** The list filtered by the new document's number. */
  listed: InvoiceList;
}

/** Create → read back → find in the list. Stops at the first refusal and returns it. */
export async function runExampleFlow(client: InvoicingClient, invoice: InvoicePayload, options: CreateOptions = {}): Promise<ApiResult<FlowOutcome>> {
  const created = await createInvoice(client, invoice, options);
  if (!created.ok) return created;

  let fetched = await getInvoice(client, created.data.public_id);
  if (!fetched.ok && fetched.error.error === 'document_not_found' && fetched.error.demo_public_id) {
    // Demo mode (dry-run) stored nothing; the service names the one document it can show.
    fetched = await getInvoice(client, fetched.error.demo_public_id);
  }
  if (!fetched.ok) return fetched;

  const listed = await listInvoices(client, { q: invoice.number, limit: 10 });
  if (!listed.ok) return listed;

  return {
    ok: true,
    status: created.status,
    data: { created: created.data, fetched: fetched.data, etag: fetched.etag, listed: listed.data },
    etag: fetched.etag,
  };
}

/** A document the demo catalog's (and the operating contract's example) organization can issue. */
export function sampleInvoice(number: string, date: string): InvoicePayload {
  return {
    number,
    date,
    currency: 'RUB',
    seller: { inn: '7707083893' },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500.5, vat_pct: 22 },
      { name: 'Доставка', qty: 1, price: 333.33 },
    ],
  };
}

async function main(): Promise<number> {
  const client = createInvoicingClient({
    baseUrl: process.env.INVOICING_URL ?? 'http://localhost:8080',
    apiKey: process.env.INVOICING_API_KEY ?? 'demo-token',
  });
  const today = new Date().toISOString().slice(0, 10);
  const result = await runExampleFlow(client, sampleInvoice(`EX-${Date.now()}`, today), { actorLogin: 'typed-client-example' });
  if (!result.ok) {
    console.error(`HTTP ${result.status} ${result.error.error}: ${describeError(result)}`);
    return 1;
  }
  const { created, fetched, etag, listed } = result.data;
  console.log(`created ${created.public_id} (HTTP ${result.status}${created.demo_mode ? ', demo mode: nothing stored' : ''})`);
  console.log(`  total ${created.totals.total} ${created.totals.currency}: ${created.totals.amount_in_words}`);
  console.log(`  buyer link ${created.invoice_url}`);
  console.log(`read back ${fetched.public_id}, status ${fetched.status.seller_status_label}, ETag ${etag ?? '-'}`);
  console.log(`list: ${listed.total} document(s) match`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
