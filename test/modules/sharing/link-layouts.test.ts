/**
 * The share and portal bases may sit anywhere (operating contract, section 2): under the public
 * URL (the default), on hosts of their own at the root, or at the same path on two hosts. In
 * every layout each URL the API returns opens on the one server, the API keeps its JSON answers,
 * and the logs redact the tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { ACME, buildSharingApp, collectUrls, createDocument, documentWithRecipients, expectedType, request } from './link-helpers.js';

const LAYOUTS: Array<{ name: string; env: Record<string, string>; redacted: string }> = [
  {
    name: 'the defaults: /s and /portal under the public URL',
    env: { INVOICING_PUBLIC_URL: 'http://localhost:8080', INVOICING_SHARE_URL: '', INVOICING_PORTAL_URL: '' },
    redacted: '"url":"/s/[REDACTED]"',
  },
  {
    name: 'hosts of their own at the root',
    env: { INVOICING_PUBLIC_URL: 'http://api.test', INVOICING_SHARE_URL: 'https://share.example/', INVOICING_PORTAL_URL: 'https://portal.example' },
    redacted: '"url":"/[REDACTED]"',
  },
  {
    name: 'the same path on two hosts',
    env: { INVOICING_PUBLIC_URL: 'http://api.test', INVOICING_SHARE_URL: 'http://a.test/x', INVOICING_PORTAL_URL: 'http://b.test/x' },
    redacted: '"url":"/x/view/[REDACTED]"',
  },
];

for (const layout of LAYOUTS) {
  describe(layout.name, () => {
    let t: TestApp;
    let doc: Record<string, any>;

    beforeAll(async () => {
      t = await buildSharingApp({ env: layout.env });
      doc = await createDocument(t, documentWithRecipients());
    });

    afterAll(async () => {
      await t?.close();
    });

    it('opens every URL of the response with the right content type', async () => {
      const urls = collectUrls(doc);
      expect(urls.length).toBeGreaterThanOrEqual(25);
      for (const { path, url } of urls) {
        const res = await request(t, url, { headers: ACME });
        expect(res.statusCode, `${path} ${url}`).toBe(200);
        expect(String(res.headers['content-type']), path).toContain(expectedType(url));
      }
    });

    it('links the pages to assets, PDF, QR and forms that resolve on the same host', async () => {
      for (const page of [doc.invoice_url, doc.portal_view_url, doc.portal_edit_url]) {
        const body = (await request(t, page)).body;
        const links = [...body.matchAll(/(?:href|src|action)="(\/[^"]*)"/g)].map((m) => m[1] as string).filter((l) => !l.startsWith('/#'));
        expect(links.length).toBeGreaterThan(2);
        for (const link of links) {
          const method = /action="/.test(body) && body.includes(`action="${link}"`) ? 'POST' : 'GET';
          if (method === 'POST') continue;
          const res = await request(t, new URL(link, page).toString());
          expect(res.statusCode, `${page} → ${link}`).toBe(200);
        }
      }
    });

    it('keeps the API and the operations routes in JSON', async () => {
      const health = await t.call({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toMatchObject({ ok: true });
      const missing = await t.call({ method: 'GET', url: '/api/v1/nothing', headers: ACME });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ ok: false });
      const list = await t.call({ method: 'GET', url: '/api/v1/invoices', headers: ACME });
      expect(list.statusCode).toBe(200);
    });

    it('redacts the tokens in the logs', async () => {
      await request(t, doc.portal_view_url);
      const log = t.logs.join('\n');
      expect(log).toContain(layout.redacted);
      const token = (url: string) => new URL(url).pathname.split('/').reduce((a, b) => (b.length > a.length ? b : a), '');
      for (const { url } of collectUrls(doc)) {
        if (!url.includes('/api/')) expect(log).not.toContain(token(url));
      }
    });
  });
}
