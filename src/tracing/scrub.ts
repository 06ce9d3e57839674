/**
 * The last word on what a span carries (operating contract, section 8: never an API key, a
 * token, an e-mail address or a document's content), applied to every span as it ends, before
 * the exporter's batch takes it, whatever an instrumentation recorded:
 *
 * - URL attributes lose the tokens of share and portal paths and the secret query parameters
 *   (the logs' redactor, url-redaction.ts); an outgoing request's URL keeps only its origin,
 *   since a webhook endpoint's path or query may itself be a credential;
 * - attributes named like a credential (authorization, cookie, api key, token, secret,
 *   password) are replaced;
 * - any e-mail address in a string attribute, or in an event's attributes (an exception
 *   message quoting an SMTP reply), is replaced.
 */
import { SpanKind, type AttributeValue, type Attributes, type Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createUrlRedactor } from '../http/url-redaction.js';

const REDACTED = '[REDACTED]';
const URL_KEYS = new Set(['http.url', 'http.target', 'url.full', 'url.path', 'url.query', 'http.request.header.referer']);
const SECRET_KEY = /authorization|cookie|api[._-]?key|token|secret|password/i;
const EMAIL = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[A-Za-z]{2,}/g;

function scrubValue(value: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof value === 'string') return value.replace(EMAIL, REDACTED);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v.replace(EMAIL, REDACTED) : v)) as AttributeValue;
  return value;
}

function originOf(url: string): string {
  try {
    return `${new URL(url).origin}/${REDACTED}`;
  } catch {
    return REDACTED;
  }
}

export class ScrubbingSpanProcessor implements SpanProcessor {
  private readonly redactUrl: (url: string) => string;

  constructor(tokenPaths: readonly string[]) {
    this.redactUrl = createUrlRedactor(tokenPaths);
  }

  /** A URL attribute of a request to the service: its path's tokens and secret parameters go. */
  private redactIncoming(key: string, value: string): string {
    if (key === 'url.query') return this.redactUrl(`?${value}`).slice(1);
    if (/^https?:\/\//i.test(value)) {
      try {
        const url = new URL(value);
        return `${url.origin}${this.redactUrl(url.pathname + url.search)}`;
      } catch {
        return REDACTED;
      }
    }
    return this.redactUrl(value);
  }

  scrub(attributes: Attributes, outgoing: boolean): void {
    for (const key of Object.keys(attributes)) {
      const value = attributes[key];
      if (SECRET_KEY.test(key) && !key.startsWith('invoicing.')) attributes[key] = REDACTED;
      else if (URL_KEYS.has(key) && typeof value === 'string') {
        if (outgoing) attributes[key] = key === 'url.full' || key === 'http.url' ? originOf(value) : REDACTED;
        else attributes[key] = this.redactIncoming(key, value).replace(EMAIL, REDACTED);
      } else attributes[key] = scrubValue(value);
    }
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    // The attributes of an ended span are no longer written by anyone: scrubbed in place, before
    // the next processor (the batch for the exporter) sees them.
    this.scrub(span.attributes as Attributes, span.kind === SpanKind.CLIENT);
    for (const event of span.events) if (event.attributes) this.scrub(event.attributes as Attributes, false);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
