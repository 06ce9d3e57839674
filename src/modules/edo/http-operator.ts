/**
 * The HTTP connector: the EDO operator port spoken to a remote gateway over the small JSON
 * protocol of docs/edo-operator-protocol.md (the gateway fronts Diadoc, СБИС, Контур, …).
 *
 * Every answer is read with a size bound and checked against the wire schemas below before it
 * is mapped to the port's types; whatever goes wrong becomes an EdoOperatorError with a closed
 * code. The bearer token never appears in an error message, even when the gateway echoes it.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { systemClock, type Clock } from '../../shared/clock.js';
import {
  EdoOperatorError,
  type EdoErrorCode,
  type EdoEvent,
  type EdoFeedPage,
  type EdoOperator,
  type EdoOutgoingDocument,
  type EdoSendReceipt,
} from './edo-operator.js';

export interface HttpEdoOperatorOptions {
  /** The gateway's base URL, http(s), without a trailing slash (one is dropped if given). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; never logged nor put in an error message. */
  token: string;
  /** Bounds each call as a whole: connecting, the answer's headers and its body. */
  timeoutMs: number;
  /** Turns a Retry-After given as an HTTP-date into a delay. */
  clock?: Clock;
}

/** The most of an answer's body that is read; a larger one is a protocol error. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Retry-After is honoured up to this; a longer wait is cut to it. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

const USER_AGENT = 'invoicing-edo-connector/1';
const MAX_OPERATOR_TEXT = 300;
/** `edo_feeds.feed` is varchar(200) and holds `http:` + the base URL. */
const MAX_BASE_URL_LENGTH = 195;

// ---- Wire schemas (snake_case, as the gateway speaks); limits follow the columns they land in.

const DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?([Zz]|[+-]\\d{2}:\\d{2})$';
const CALENDAR_DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
const Nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });
const OperatorDocumentId = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

const Party = (inn: 'required' | 'nullable') =>
  Type.Object({
    name: Type.String({ description: 'Name as printed on the document.' }),
    inn: inn === 'required' ? Type.String({ description: 'ИНН.' }) : Nullable(Type.String(), 'ИНН, when known.'),
    kpp: Nullable(Type.String(), 'КПП, when the party has one.'),
  });

const SendDocumentRequest = Type.Object({
  job_id: Type.String({ description: 'Our send job id; the idempotency key (also sent as `Idempotency-Key`).' }),
  sender: Type.String({ description: 'Seller participant id.' }),
  recipient: Type.String({ description: 'Buyer participant id.' }),
  document: Type.Object({
    kind: Type.Literal('invoice', { description: 'Always `invoice` («Счёт на оплату»).' }),
    public_id: Type.String({ description: 'Our id of the document.' }),
    revision: Type.Integer({ description: 'The revision sent; a new revision is a new job.' }),
    number: Type.String({ description: 'Document number.' }),
    date: Type.String({ description: 'Document date, YYYY-MM-DD.' }),
    currency: Type.String({ description: 'ISO 4217 code.' }),
    total: Type.String({ description: 'Decimal string, two fraction digits.' }),
    title: Type.String({ description: 'Human-readable title.' }),
    seller: Party('required'),
    buyer: Party('nullable'),
  }),
  file: Type.Object({
    name: Type.String({ description: 'File name.' }),
    content_type: Type.Literal('application/pdf', { description: 'Media type of the file.' }),
    content_base64: Type.String({ description: 'The file, base64.' }),
  }),
});
type SendDocumentRequest = Static<typeof SendDocumentRequest>;

const SendReceipt = Type.Object({
  document_id: OperatorDocumentId("The operator's id of the sent document; the same for a repeated job_id."),
  status: Type.Union([Type.Literal('sent'), Type.Literal('delivered')], { description: '`sent` or `delivered`.' }),
});

const eventBase = {
  id: Type.String({ minLength: 1, description: 'Stable event id, unique within the feed.' }),
  job_id: Type.Optional(Nullable(Type.String(), 'Our job id, when the gateway knows it.')),
  document_id: OperatorDocumentId("The operator's id of our document."),
  at: Type.String({ pattern: DATE_TIME, description: 'When it happened, RFC 3339 date-time.' }),
};

const StatusEvent = Type.Object({
  ...eventBase,
  type: Type.Literal('status'),
  status: Type.Union([Type.Literal('delivered'), Type.Literal('accepted'), Type.Literal('rejected')], {
    description: 'Delivery or the buyer’s decision.',
  }),
  reason: Type.Optional(Nullable(Type.String(), 'Why, for a rejection.')),
});

const LinkEvent = Type.Object({
  ...eventBase,
  type: Type.Literal('link'),
  link: Type.Object({
    document_id: OperatorDocumentId("The operator's id of the linked document."),
    kind: Type.String({ minLength: 1, maxLength: 60, description: 'e.g. `receipt_notice`, `act`, `upd`.' }),
    title: Type.String({ description: 'Title of the linked document.' }),
    number: Type.Optional(Nullable(Type.String({ maxLength: 200 }), 'Its number, when it has one.')),
    date: Type.Optional(Nullable(Type.String({ pattern: CALENDAR_DATE }), 'Its date, YYYY-MM-DD.')),
  }),
});

/** Events are only checked for `type` here: an unknown type is skipped, the known ones are checked in full. */
const FeedPage = Type.Object({
  events: Type.Array(Type.Object({ type: Type.String({ description: 'Event type.' }) })),
  next_cursor: Nullable(Type.String({ minLength: 1 }), 'Where to read next; null: keep the previous cursor.'),
  has_more: Type.Boolean({ description: 'More events are ready now.' }),
});

const ErrorBody = Type.Object({
  error: Type.String({ description: 'Machine-readable error code.' }),
  message: Type.Optional(Type.String({ description: 'Human-readable explanation.' })),
});

const checks = {
  receipt: TypeCompiler.Compile(SendReceipt),
  feed: TypeCompiler.Compile(FeedPage),
  status: TypeCompiler.Compile(StatusEvent),
  link: TypeCompiler.Compile(LinkEvent),
  error: TypeCompiler.Compile(ErrorBody),
};

type Endpoint = 'send' | 'feed';

export class HttpEdoOperator implements EdoOperator {
  readonly kind = 'http' as const;
  readonly feedName: string;
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly clock: Clock;

  constructor(options: HttpEdoOperatorOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!/^https?:\/\/[^/?#]+/.test(baseUrl) || /[?#]/.test(baseUrl) || baseUrl.length > MAX_BASE_URL_LENGTH) {
      throw new TypeError(`baseUrl must be an http(s) URL without query or fragment, at most ${MAX_BASE_URL_LENGTH} characters`);
    }
    // Checked here so that a malformed header never reaches fetch, whose error would quote it.
    if (!/^[\x21-\x7e]+$/.test(options.token)) throw new TypeError('token must be non-empty visible ASCII');
    if (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0) throw new TypeError('timeoutMs must be a positive integer');
    this.baseUrl = baseUrl;
    this.feedName = `http:${baseUrl}`;
    this.token = options.token;
    this.timeoutMs = options.timeoutMs;
    this.clock = options.clock ?? systemClock;
  }

  async send(document: EdoOutgoingDocument, signal: AbortSignal): Promise<EdoSendReceipt> {
    const body = await this.call('send', `${this.baseUrl}/v1/documents`, signal, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': document.jobId },
      body: JSON.stringify(toSendDocumentRequest(document)),
    });
    const receipt = this.validate('send', checks.receipt, body, '');
    return { operatorDocumentId: receipt.document_id, status: receipt.status };
  }

  async fetchEvents(cursor: string | null, limit: number, signal: AbortSignal): Promise<EdoFeedPage> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor !== null) query.set('after', cursor);
    const body = await this.call('feed', `${this.baseUrl}/v1/events?${query}`, signal, { method: 'GET' });
    const page = this.validate('feed', checks.feed, body, '');
    const events: EdoEvent[] = [];
    page.events.forEach((raw, i) => {
      const at = `/events/${i}`;
      if (raw.type === 'status') {
        const e = this.validate('feed', checks.status, raw, at);
        events.push({ type: 'status', ...this.eventBase(e, at), status: e.status, reason: e.reason ?? null });
      } else if (raw.type === 'link') {
        const e = this.validate('feed', checks.link, raw, at);
        const link = { operatorDocumentId: e.link.document_id, kind: e.link.kind, title: e.link.title, number: e.link.number ?? null, date: e.link.date ?? null };
        events.push({ type: 'link', ...this.eventBase(e, at), link });
      }
      // Any other type is a newer protocol's event: skipped, so that old clients keep reading.
    });
    return { events, nextCursor: page.next_cursor ?? cursor, hasMore: page.has_more };
  }

  private eventBase(e: Static<typeof StatusEvent> | Static<typeof LinkEvent>, path: string) {
    const at = Date.parse(e.at);
    if (Number.isNaN(at)) throw this.protocolError('feed', `${path}/at`, 'not a valid date-time');
    // Normalized to UTC so every timestamp stored has one format (and fits its column).
    return { eventId: e.id, jobId: e.job_id ?? null, operatorDocumentId: e.document_id, at: new Date(at).toISOString() };
  }

  /** One request; resolves with the parsed JSON of a 2xx answer, throws EdoOperatorError otherwise. */
  private async call(endpoint: Endpoint, url: string, signal: AbortSignal, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await fetch(url, {
        method: init.method,
        body: init.body,
        headers: { ...init.headers, Authorization: `Bearer ${this.token}`, Accept: 'application/json', 'User-Agent': USER_AGENT },
        // A redirect could carry the token elsewhere or turn the POST into a GET: not followed.
        redirect: 'manual',
        signal: AbortSignal.any([signal, timeout]),
      });
      const bytes = await readLimited(response, MAX_RESPONSE_BYTES);
      if (response.status >= 200 && response.status < 300) {
        if (bytes === null) throw this.fail(`operator answered ${response.status} with a body larger than ${MAX_RESPONSE_BYTES} bytes`, 'operator_protocol_error', false);
        const parsed = parseJson(bytes);
        if (parsed === undefined) throw this.fail(`operator answered ${response.status} with a body that is not JSON`, 'operator_protocol_error', false);
        return parsed;
      }
      throw this.statusError(endpoint, response, bytes);
    } catch (err) {
      if (err instanceof EdoOperatorError) throw err;
      if (signal.aborted) throw this.fail('the operator call was aborted by the caller', 'operator_timeout', false);
      if (timeout.aborted) throw this.fail(`operator did not answer within ${this.timeoutMs} ms`, 'operator_timeout', false);
      throw this.fail(`operator unreachable: ${describeNetworkError(err)}`, 'operator_unreachable', false);
    }
  }

  private statusError(endpoint: Endpoint, response: Response, bytes: Uint8Array | null): EdoOperatorError {
    const status = response.status;
    const parsed = bytes === null ? undefined : parseJson(bytes);
    const body = checks.error.Check(parsed) ? parsed : null;
    let code: EdoErrorCode;
    let permanent: boolean;
    if ((status === 404 || status === 422) && body?.error === 'participant_not_found') [code, permanent] = ['participant_not_found', true];
    else if ([400, 409, 413, 422].includes(status) || (status === 404 && endpoint === 'send')) [code, permanent] = ['operator_rejected', true];
    else if (status === 401 || status === 403) [code, permanent] = ['operator_auth_failed', false];
    else [code, permanent] = ['operator_unavailable', false]; // 408, 425, 429, 5xx and anything unexpected
    // The feed must never stop for good: whatever it answers, it is read again later.
    if (endpoint === 'feed') permanent = false;
    const text = body ? oneLine(body.message ?? body.error, MAX_OPERATOR_TEXT) : '';
    const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
    const retryAfterMs = permanent ? null : parseRetryAfter(response.headers.get('retry-after'), this.clock.now());
    return this.fail(`operator answered ${status}${redirect}${text ? `: ${text}` : ''}`, code, permanent, retryAfterMs);
  }

  private validate<T extends TSchema>(endpoint: Endpoint, check: TypeCheck<T>, value: unknown, path: string): Static<T> {
    if (check.Check(value)) return value;
    const first = check.Errors(value).First();
    throw this.protocolError(endpoint, `${path}${first?.path ?? ''}`, first?.message ?? 'unexpected value');
  }

  private protocolError(endpoint: Endpoint, path: string, problem: string): EdoOperatorError {
    const where = endpoint === 'send' ? 'send receipt' : 'event feed page';
    return this.fail(`operator's ${where} does not match the protocol at ${path || '/'}: ${problem}`, 'operator_protocol_error', false);
  }

  /** Every error leaves through here, so the token is scrubbed even from text the gateway echoed. */
  private fail(message: string, code: EdoErrorCode, permanent: boolean, retryAfterMs: number | null = null): EdoOperatorError {
    return new EdoOperatorError(oneLine(message.replaceAll(this.token, '[redacted]'), 1000), code, permanent, retryAfterMs);
  }
}

function toSendDocumentRequest(doc: EdoOutgoingDocument): SendDocumentRequest {
  const d = doc.document;
  return {
    job_id: doc.jobId,
    sender: doc.sender,
    recipient: doc.recipient,
    document: {
      kind: d.kind,
      public_id: d.publicId,
      revision: d.revision,
      number: d.number,
      date: d.date,
      currency: d.currency,
      total: d.total,
      title: d.title,
      seller: { name: d.seller.name, inn: d.seller.inn, kpp: d.seller.kpp },
      buyer: { name: d.buyer.name, inn: d.buyer.inn, kpp: d.buyer.kpp },
    },
    file: { name: doc.file.name, content_type: doc.file.contentType, content_base64: doc.file.content.toString('base64') },
  };
}

/** The body, or null when it is larger than `limit` (then it is not read further). */
async function readLimited(response: Response, limit: number): Promise<Uint8Array | null> {
  if (Number(response.headers.get('content-length') ?? 0) > limit) {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/** The parsed JSON of a UTF-8 body, or undefined when it is not that. */
function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}

/** Retry-After as delta-seconds or an HTTP-date, in ms from `now`, capped; null when absent or unreadable. */
function parseRetryAfter(value: string | null, now: Date): number | null {
  const text = value?.trim();
  if (!text) return null;
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now.getTime();
  if (Number.isNaN(ms)) return null;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** fetch's "fetch failed" carries the socket error as its cause: report that (ECONNREFUSED, ENOTFOUND, …). */
function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : null;
  const message = typeof cause?.message === 'string' ? cause.message : err instanceof Error ? err.message : String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : flat;
}
