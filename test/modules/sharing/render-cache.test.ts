/**
 * Public PDFs and QR images are cached by what they are rendered from, carry
 * an ETag answered with 304, are never stale after an update, the render queue is bounded
 * (503 with Retry-After in the API's error shape), and each link token has its own rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { RenderCache } from '../../../src/modules/rendering/render-cache.js';
import type { InjectOptions } from 'fastify';
import { ACME, buildSharingApp, createDocument, documentWithRecipients, request } from './link-helpers.js';

/** A request whose JSON answer is not checked against the API description (pages are not in it). */
function raw(t: TestApp, url: string, options: Omit<InjectOptions, 'url' | 'path' | 'query'> = {}) {
  const u = new URL(url);
  return t.app.inject({ method: 'GET', ...options, url: u.pathname, headers: { ...options.headers, host: u.host } });
}

describe('rendered files', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildSharingApp();
  });
  afterAll(async () => t?.close());

  it('carry an ETag; If-None-Match answers 304 without a body; a new revision gives a new ETag and new bytes', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const urls = [doc.document_url, `${doc.invoice_url}/qr.png`, `${doc.invoice_url}/qr.svg`, `${doc.portal_view_url}/document.pdf`, `${doc.portal_view_url}/qr.png`];
    const tags: string[] = [];
    for (const url of urls) {
      // The first open of the buyer's PDF marks the document viewed (a change of what is rendered).
      await request(t, url);
      const first = await request(t, url);
      expect(first.statusCode, url).toBe(200);
      const etag = String(first.headers.etag);
      expect(etag, url).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      expect(first.headers['cache-control'], url).toBe('private, no-cache');
      const again = await request(t, url, { headers: { 'if-none-match': etag } });
      expect(again.statusCode, url).toBe(304);
      expect(again.body, url).toBe('');
      expect(again.headers.etag).toBe(etag);
      const weak = await request(t, url, { headers: { 'if-none-match': `"other", W/${etag}` } });
      expect(weak.statusCode, url).toBe(304);
      tags.push(etag);
    }
    // The share and the portal PDF are the same document: the same bytes and tag.
    expect(tags[3]).toBe(tags[0]);

    const put = await t.call({
      method: 'PUT',
      url: `/api/v1/invoices/${doc.public_id}`,
      headers: { ...ACME, host: 'api.test' },
      payload: { invoice: { ...doc.invoice, number: '16' } } as never,
    });
    expect(put.statusCode).toBe(200);
    const fresh = await request(t, doc.document_url, { headers: { 'if-none-match': tags[0] as string } });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers.etag).not.toBe(tags[0]);
    expect(String(fresh.headers['content-disposition'])).toContain('invoice-16-');
  });
});

describe('the render cache', () => {
  it('is bounded in bytes (least recently used goes first) and shares one render between concurrent callers', async () => {
    const cache = new RenderCache(250);
    let renders = 0;
    const render = (n: number) => async () => {
      renders += 1;
      await new Promise((r) => setTimeout(r, 10));
      return Buffer.alloc(n);
    };
    const [a, b] = await Promise.all([cache.get('a', render(100)), cache.get('a', render(100))]);
    expect(a).toBe(b);
    expect(renders).toBe(1);
    await cache.get('b', render(100));
    await cache.get('a', render(100)); // a is now the most recent
    await cache.get('c', render(100)); // 300 > 250: b goes
    expect(cache.size).toBe(200);
    const before = renders;
    await cache.get('a', render(100));
    expect(renders).toBe(before);
    await cache.get('b', render(100));
    expect(renders).toBe(before + 1);
    await cache.get('huge', render(1000));
    expect(cache.size).toBeLessThanOrEqual(250);
  });
});

describe('the bounded render queue', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildSharingApp({ pdfThreads: 1, env: { INVOICING_PDF_QUEUE_MAX: '1', INVOICING_RENDER_CACHE_MB: '0' } });
  });
  afterAll(async () => t?.close());

  it('answers 503 with Retry-After in the error shape when every renderer is busy and the queue is full', async () => {
    const docs = await Promise.all(Array.from({ length: 6 }, (_, i) => createDocument(t, documentWithRecipients({ number: `Q-${i}` }))));
    const answers = await Promise.all(docs.map((d) => raw(t, d.document_url)));
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    const busy = answers.filter((a) => a.statusCode === 503);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const b of busy) {
      expect(b.headers['retry-after']).toBe('2');
      expect(b.json()).toMatchObject({ ok: false, error: 'render_queue_full', retry_after_sec: 2 });
    }
    // Once the queue drains, the same links render.
    for (const d of docs) expect((await request(t, d.document_url)).statusCode).toBe(200);
  });
});

describe('the per-link rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildSharingApp({ env: { INVOICING_LINK_RATE_PER_MIN: '3' } });
  });
  afterAll(async () => t?.close());

  it('refuses the fourth request to one token within a minute from any address, in the API shape; other tokens pass', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    for (let i = 0; i < 3; i++) {
      const ok = await request(t, doc.invoice_url, { remoteAddress: `10.0.0.${i + 1}` });
      expect(ok.statusCode).toBe(200);
    }
    const refused = await raw(t, `${doc.invoice_url}/qr.png`, { remoteAddress: '10.0.0.9' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ ok: false, error: 'rate_limited', code: 'link_per_min' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await request(t, doc.share_links.colleague_url)).statusCode).toBe(200);
  });
});
