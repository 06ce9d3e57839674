/**
 * The service's own spans (docs/operations.md, "Tracing"), through `@opentelemetry/api` only:
 * modules never import the SDK. The SDK is loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (src/tracing/); it then calls `enableSpans()`. Until then every helper here returns at its
 * first line: no span object, no context lookup, no traceparent string, so the hot paths (the
 * group commit, a create's row) cost one boolean test.
 *
 * What a span may carry (operating contract, section 8): the team id and a document's public id
 * (`ATTR`), counts and outcomes. Never an API key, a token, an e-mail address or a document's
 * content; an error is recorded by its class name and code, never its message (an SMTP reply
 * quotes the address).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

let enabled = false;

/** Called once by the SDK's start (src/tracing/sdk.ts). */
export function enableSpans(): void {
  enabled = true;
}

export function spansEnabled(): boolean {
  return enabled;
}

/** The names of our own spans. */
export const SPAN = {
  /** A write through the group commit: waiting for its batch, the batch, the COMMIT. */
  groupCommit: 'invoicing.group_commit',
  /** A PDF rendered in the thread pool (waiting for a thread included). */
  pdfRender: 'invoicing.pdf.render',
  /** One delivery attempt of an outbox row or a webhook, continuing the trace of the write that queued it. */
  emailDelivery: 'invoicing.email.deliver',
  edoDelivery: 'invoicing.edo.deliver',
  webhookDelivery: 'invoicing.webhook.deliver',
  /** The rate-limit check of a request (the shared store's round trip). */
  rateLimit: 'invoicing.rate_limit',
  /** A bank statement's import (payments): parse, match, write. */
  statementImport: 'invoicing.statement.import',
} as const;

/** The attribute names a span may carry. */
export const ATTR = {
  teamId: 'invoicing.team_id',
  publicId: 'invoicing.public_id',
  batchSize: 'invoicing.batch_size',
  outcome: 'invoicing.outcome',
  errorCode: 'invoicing.error_code',
} as const;

const tracer = () => trace.getTracer('invoicing');

export interface SpanOptions {
  attributes?: Attributes;
  /** Continue this W3C traceparent (work queued by an earlier request) instead of the active context. */
  traceparent?: string | null;
  kind?: SpanKind;
}

/** Marks `span` failed with what may be recorded of `err`: its class and code, never its message. */
function recordFailure(span: Span, err: unknown): void {
  const e = err as { name?: unknown; code?: unknown };
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof e?.name === 'string' ? e.name : 'Error' });
  if (typeof e?.code === 'string' || typeof e?.code === 'number') span.setAttribute(ATTR.errorCode, String(e.code));
}

/** Runs `work` inside a span named `name` (just `work()` when tracing is off). */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span | null) => Promise<T>): Promise<T> {
  if (!enabled) return work(null);
  const parent = options.traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.traceparent }) : context.active();
  const spanOptions = { attributes: options.attributes ?? {}, kind: options.kind ?? SpanKind.INTERNAL };
  return tracer().startActiveSpan(name, spanOptions, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span started now and ended by the caller (for work that ends in a callback); null when tracing is off. */
export function startSpan(name: string, attributes: Attributes = {}): Span | null {
  if (!enabled) return null;
  return tracer().startSpan(name, { attributes }, context.active());
}

/** Ends a span from `startSpan`, failed when `err` is given. */
export function endSpan(span: Span | null, err?: unknown): void {
  if (span === null) return;
  if (err !== undefined) recordFailure(span, err);
  span.end();
}

/** Sets attributes on the active span (the request's), e.g. the team and document a write named. */
export function annotateActiveSpan(attributes: Attributes): void {
  if (!enabled) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active context as a W3C traceparent, to store with queued work; null when tracing is off. */
export function currentTraceparent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}
