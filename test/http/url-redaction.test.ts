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

describe('a token however its path is written', () => {
  const TOKEN = 'Tok3n_aBcDeF0123456789xyz';
  const PORTAL = 'eyJ0IjoiYWNtZSJ9.c2lnX0FCQw';
  /** Every URL the router could take to a share or portal page (or a 404 that would still log it). */
  const WRITTEN: Array<[string, string]> = [
    [`/%73/${TOKEN}`, '/s/[REDACTED]'],
    [`/%53/${TOKEN}`, '/s/[REDACTED]'],
    [`/s/%${TOKEN.charCodeAt(0).toString(16)}${TOKEN.slice(1)}`, '/s/[REDACTED]'],
    [`/s/%${TOKEN.charCodeAt(0).toString(16).toUpperCase()}${TOKEN.slice(1)}/document.pdf`, '/s/[REDACTED]'],
    [`/%2573/${TOKEN}`, '/s/[REDACTED]'],
    [`//s//${TOKEN}`, '/s/[REDACTED]'],
    [`/s/${TOKEN}/`, '/s/[REDACTED]'],
    [`/s/${TOKEN}?x=1&token=abc`, '/s/[REDACTED]?x=1&token=[REDACTED]'],
    [`/S/${TOKEN}`, '/s/[REDACTED]'],
    [`/s%2F${TOKEN}`, '/s/[REDACTED]'],
    [`/s%2f${TOKEN}/qr.png`, '/s/[REDACTED]'],
    [`/s\\${TOKEN}`, '/s/[REDACTED]'],
    [`/./s/./${TOKEN}`, '/s/[REDACTED]'],
    [`/x/../s/${TOKEN}`, '/s/[REDACTED]'],
    [`/s/assets/../${TOKEN}`, '/s/[REDACTED]'],
    [`/s;v=1/${TOKEN}`, '/s/[REDACTED]'],
    [`http://share.example/s/${TOKEN}`, '/s/[REDACTED]'],
    [`/%70ortal/%76iew/${PORTAL}`, '/portal/view/[REDACTED]'],
    [`/PORTAL/Document/EDIT/${PORTAL}?saved=1`, '/portal/document/edit/[REDACTED]?saved=1'],
    [`/portal//view//${PORTAL}/document.pdf`, '/portal/view/[REDACTED]'],
    [`/portal/view%2F${PORTAL}`, '/portal/view/[REDACTED]'],
  ];

  it('is redacted: percent-encoded (once or twice, either case), doubled or back slashes, dot segments, any case, a trailing slash, a query', () => {
    for (const [url, logged] of WRITTEN) {
      const out = redactUrl(url);
      expect(out, url).toBe(logged);
      expect(out, url).not.toContain(TOKEN.slice(1));
      expect(out, url).not.toContain(PORTAL.slice(1));
    }
  });

  it('leaves other paths as they are written, the static files included', () => {
    for (const url of ['/api/v1/invoices/%73', '/s', '/portal', '/s/assets/pages.0123456789.css', '/%73/assets/pages.css', '/healthz', '/sx/y']) {
      expect(redactUrl(url), url).toBe(url);
    }
    const root = createUrlRedactor(['', '/portal']);
    expect(root(`/%61pi/../${TOKEN}`)).toBe('/[REDACTED]');
    expect(root('/api/v1/invoices')).toBe('/api/v1/invoices');
    expect(root(`/API/${TOKEN}`)).toBe('/[REDACTED]');
  });
});
