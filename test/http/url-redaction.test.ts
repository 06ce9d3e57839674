/** The URL redactor of the logs, for every place the share and portal bases may sit. */
import { describe, expect, it } from 'vitest';
import { createUrlRedactor, redactUrl } from '../../src/http/logging.js';

describe('createUrlRedactor', () => {
  it('redacts the defaults (/s, /portal) and keeps the pages’ static files', () => {
    expect(redactUrl('/s/Tok_en-123')).toBe('/s/[REDACTED]');
    expect(redactUrl('/s/Tok_en-123/qr.svg')).toBe('/s/[REDACTED]');
    expect(redactUrl('/s/assets/pages.0123456789.css')).toBe('/s/assets/pages.0123456789.css');
    expect(redactUrl('/portal/view/a.b/document.pdf')).toBe('/portal/view/[REDACTED]');
    expect(redactUrl('/portal/document/edit/a.b?saved=1')).toBe('/portal/document/edit/[REDACTED]?saved=1');
    expect(redactUrl('/sx/not-a-share-path')).toBe('/sx/not-a-share-path');
  });

  it('follows configured paths, longest first', () => {
    const redact = createUrlRedactor(['/links', '/links/team']);
    expect(redact('/links/team/view/abc')).toBe('/links/team/view/[REDACTED]');
    expect(redact('/links/abc')).toBe('/links/[REDACTED]');
    expect(redact('/s/abc')).toBe('/s/abc');
  });

  it('with a base at the root, redacts every path but the service’s own', () => {
    const redact = createUrlRedactor(['', '/portal']);
    expect(redact('/AbCdEf0123456789')).toBe('/[REDACTED]');
    expect(redact('/AbCdEf0123456789/document.pdf')).toBe('/[REDACTED]');
    expect(redact('/view/abc.def')).toBe('/view/[REDACTED]');
    expect(redact('/api/v1/invoices?api_key=secret&limit=2')).toBe('/api/v1/invoices?api_key=[REDACTED]&limit=2');
    expect(redact('/healthz')).toBe('/healthz');
    expect(redact('/metrics')).toBe('/metrics');
    expect(redact('/metricsToken123')).toBe('/[REDACTED]');
    expect(redact('/portal/edit/abc')).toBe('/portal/edit/[REDACTED]');
  });
});
