/**
 * Every link the API returns opens something real: the share pages, PDFs and QR
 * images under the share base, the portal pages under the portal base, each on a host of its
 * own, through the app on a freshly migrated database. Also the statuses the links set, the
 * QR and PDF content as real decoders read them, the portal edit round trip, escaping of
 * hostile text on every page, that no token reaches the logs, and the demo links. Who the
 * links open for (share gate, bad tokens, rotation) is in link-access.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { PAGE_CSP } from '../../../src/modules/sharing/index.js';
import { decodeQrPng, pdfText } from '../rendering/native-tools.js';
import {
  ACME,
  buildSharingApp,
  collectUrls,
  createDocument,
  documentWithRecipients,
  expectedType,
  getDocument,
  request,
  urlencoded,
} from './link-helpers.js';
import { formFields, XSS_ATTR, XSS_SCRIPT, XSS_SCRIPT_ESCAPED } from './page-fixtures.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildSharingApp();
});

afterAll(async () => {
  await t?.close();
});

describe('every URL of a create response', () => {
  let doc: Record<string, any>;
  let urls: Array<{ path: string; url: string }>;

  beforeAll(async () => {
    doc = await createDocument(t, documentWithRecipients());
    urls = collectUrls(doc);
  });

  it('includes the top-level, share_links, recipients, metadata and QR URLs, on the configured hosts', () => {
    const paths = urls.map((u) => u.path);
    for (const expected of [
      '$.invoice_url',
      '$.document_url',
      '$.portal_view_url',
      '$.portal_document_view_url',
      '$.portal_edit_url',
      '$.portal_document_edit_url',
      '$.share_links.colleague_url',
      '$.share_links.colleague_document_url',
      '$.share_links.buyer_url',
      '$.share_links.buyer_document_url',
      '$.share_links.recipients[0].url',
      '$.share_links.recipients[1].document_url',
      '$.metadata.api_recipients[0].buyer_invoice_url',
      '$.metadata.api_recipients[1].buyer_document_url',
      '$.metadata.links.share_url',
      '$.metadata.links.portal_document_edit_url',
      '$.metadata.links.qr_url',
      '$.metadata.links.api_url',
      '$.qr.url',
      '$.qr.svg_url',
    ]) {
      expect(paths).toContain(expected);
    }
    for (const { url } of urls) {
      const host = new URL(url).host;
      if (url.includes('/portal/')) expect(host).toBe('portal.test');
      else if (url.includes('/api/')) expect(host).toBe('api.test');
      else expect(host).toBe('share.test');
    }
  });

  it('answers 200 with the right content type for each of them', async () => {
    for (const { path, url } of urls) {
      const res = await request(t, url, { headers: ACME });
      expect(res.statusCode, `${path} ${url}`).toBe(200);
      expect(String(res.headers['content-type']), path).toContain(expectedType(url));
      if (expectedType(url) === 'application/pdf') expect(res.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      if (expectedType(url) === 'image/png') expect(res.rawPayload.subarray(1, 4).toString('latin1')).toBe('PNG');
      if (expectedType(url) === 'image/svg+xml') expect(res.body).toMatch(/^<svg[\s>]/);
      if (expectedType(url) === 'text/html') expect(res.body).toMatch(/^<!doctype html>/);
    }
  });

  it('serves the stylesheet and script the pages link to, on the same host, cached for good', async () => {
    for (const page of [doc.invoice_url, doc.portal_edit_url]) {
      const res = await request(t, page);
      const assets = [...res.body.matchAll(/(?:href|src)="(\/[^"]*\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
      expect(assets.length).toBeGreaterThan(0);
      for (const asset of assets) {
        const file = await request(t, new URL(asset, page).toString());
        expect(file.statusCode, asset).toBe(200);
        expect(String(file.headers['content-type'])).toMatch(/^text\/(css|javascript)/);
        expect(file.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      }
    }
  });

  it('sends the strict CSP, no referrer, no caching and no indexing with the pages', async () => {
    for (const url of [doc.invoice_url, doc.share_links.colleague_url, doc.portal_view_url, doc.portal_edit_url]) {
      const res = await request(t, url);
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-robots-tag']).toBe('noindex, nofollow');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    const pdf = await request(t, doc.document_url);
    expect(pdf.headers['content-disposition']).toBe(
      `inline; filename="invoice-15-2026-03-02.pdf"; filename*=UTF-8''${encodeURIComponent('Счёт № 15 от 02.03.2026.pdf')}`,
    );
    // Kept by the browser but revalidated on every open (ETag, 304): never stale after an update.
    expect(pdf.headers['cache-control']).toBe('private, no-cache');
    const qr = await request(t, doc.qr.url);
    expect(qr.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(qr.headers['cross-origin-resource-policy']).toBe('cross-origin');
  });

  it('decodes the QR PNG to exactly qr.payload (zbarimg)', async () => {
    expect(doc.qr.enabled).toBe(true);
    expect(doc.qr.payload).toMatch(/^ST00012\|/);
    const png = await request(t, doc.qr.url);
    expect(await decodeQrPng(png.rawPayload)).toBe(doc.qr.payload);
    const portalQr = /src="([^"]+\/qr\.png)"/.exec((await request(t, doc.portal_view_url)).body)?.[1];
    expect(portalQr).toBeDefined();
    const fromPortal = await request(t, new URL(portalQr as string, doc.portal_view_url).toString());
    expect(await decodeQrPng(fromPortal.rawPayload)).toBe(doc.qr.payload);
  });

  it('prints the number, parties, totals and amount in words in the PDF (pdftotext)', async () => {
    for (const url of [doc.document_url, doc.share_links.colleague_document_url, doc.share_links.recipients[0].document_url]) {
      const text = (await pdfText((await request(t, url)).rawPayload)).replace(/\s+/g, ' ');
      for (const expected of [
        'Счёт на оплату № 15 от 2 марта 2026 г.',
        'ООО «Ромашка»',
        'ИНН 7707083893',
        'ООО «Покупатель», ИНН 7736207543, КПП 773601001',
        'Итого: 16 499,99',
        'Сумма НДС 22%: 3 190,00',
        'Всего к оплате: 19 789,99',
        doc.totals.amount_in_words,
      ]) {
        expect(text, url).toContain(expected);
      }
    }
    expect(doc.totals.amount_in_words).toBe('Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек');
  });
});

describe('statuses set through the links', () => {
  it('marks the document viewed on the first open by the buyer, not by a colleague or a HEAD', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    expect((await request(t, doc.share_links.colleague_url)).statusCode).toBe(200);
    expect((await request(t, doc.share_links.colleague_document_url)).statusCode).toBe(200);
    expect((await request(t, doc.invoice_url, { method: 'HEAD' })).statusCode).toBe(200);
    expect((await request(t, doc.qr.url)).statusCode).toBe(200);
    let now = await getDocument(t, doc.public_id);
    expect(now.status.buyer_status).toBe('not_sent');
    expect(now.metadata.viewed_at).toBeNull();

    expect((await request(t, doc.invoice_url)).statusCode).toBe(200);
    now = await getDocument(t, doc.public_id);
    expect(now.status.buyer_status).toBe('viewed');
    expect(now.status.buyer_status_label).toBe('Просмотрен');
    const viewedAt = now.metadata.viewed_at as string;
    expect(viewedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Not a document edit: same revision, ETag and modification time.
    expect(now.metadata.revision).toBe(1);
    expect(now.metadata.last_modified_at).toBe(doc.metadata.last_modified_at);

    await new Promise((r) => setTimeout(r, 5));
    await request(t, doc.invoice_url);
    expect((await getDocument(t, doc.public_id)).metadata.viewed_at).toBe(viewedAt);
  });

  it('marks it viewed when a recipient opens their link', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    await request(t, doc.share_links.recipients[1].url);
    const now = await getDocument(t, doc.public_id);
    expect(now.status.buyer_status).toBe('viewed');
    expect(now.metadata.viewed_at).not.toBeNull();
  });

  it('records "I have paid" from the buyer page: payment_reported, then the page thanks the buyer', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const page = await request(t, doc.invoice_url);
    expect(page.body).toContain('Я оплатил');
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1] as string;
    expect(action).toBe(`${new URL(doc.invoice_url).pathname}/payment-reported`);
    const res = await request(t, new URL(action, doc.invoice_url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(new URL(doc.invoice_url).pathname);
    const now = await getDocument(t, doc.public_id);
    expect(now.status.buyer_status).toBe('payment_reported');
    expect(now.status.buyer_status_label).toBe('Сообщил об оплате');
    expect(now.metadata.viewed_at).not.toBeNull();
    const after = await request(t, doc.invoice_url);
    expect(after.body).toContain('Спасибо! Продавец получил сообщение об оплате');
    expect(after.body).not.toContain('Я оплатил');
    // Opening again does not take the report back.
    expect((await getDocument(t, doc.public_id)).status.buyer_status).toBe('payment_reported');
  });

  it('has no payment button on the colleague page, and a colleague post changes nothing', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const page = await request(t, doc.share_links.colleague_url);
    expect(page.body).not.toContain('Я оплатил');
    const res = await request(t, `${doc.share_links.colleague_url}/payment-reported`, { method: 'POST' });
    expect(res.statusCode).toBe(303);
    expect((await getDocument(t, doc.public_id)).status.buyer_status).toBe('not_sent');
  });

  it('does not report payment on a paid document', async () => {
    const doc = await createDocument(t, documentWithRecipients({ seller_status: 'paid' }));
    expect((await request(t, doc.invoice_url)).body).not.toContain('Я оплатил');
    await request(t, `${doc.invoice_url}/payment-reported`, { method: 'POST' });
    expect((await getDocument(t, doc.public_id)).status.buyer_status).toBe('viewed');
  });
});

describe('the portal edit URL of the response', () => {
  // The full set of edit-form cases is in portal-edit.test.ts; this is the walk's round trip.
  it('saves (editor_mode portal), shows field errors, refuses a bad CSRF token and a stale _etag', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const form = formFields((await request(t, doc.portal_edit_url)).body);
    const post = (fields: Record<string, string | string[]>) =>
      request(t, doc.portal_edit_url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: urlencoded(fields) });

    const bad = await post({ ...form, 'items[0].price': 'дорого' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('<p class="error" id="f-items-0-price-error">Введите число, например 1 500,50</p>');
    expect((await post({ ...form, _csrf: 'forged' })).statusCode).toBe(403);

    const saved = await post({ ...form, 'buyer.name': 'ООО «Из портала»' });
    expect(saved.statusCode).toBe(303);
    const now = await getDocument(t, doc.public_id);
    expect(now.invoice.buyer.name).toBe('ООО «Из портала»');
    expect(now.metadata).toMatchObject({ editor_mode: 'portal', revision: 2 });

    const stale = await post({ ...form, 'buyer.name': 'ООО «Устаревшая форма»' });
    expect(stale.statusCode).toBe(409);
    expect(stale.body).toContain('Пока вы редактировали, документ изменили в другом месте.');
    expect((await getDocument(t, doc.public_id)).invoice.buyer.name).toBe('ООО «Из портала»');
  });
});

describe('hostile text', () => {
  const HOSTILE = `${XSS_SCRIPT}${XSS_ATTR}`;
  const hostileDocument = () =>
    documentWithRecipients({
      number: HOSTILE,
      seller: { name: HOSTILE, inn: '7707083893', address: HOSTILE, kpp: HOSTILE },
      buyer: { name: HOSTILE, inn: HOSTILE, kpp: HOSTILE, address: HOSTILE, email: HOSTILE },
      items: [
        { name: HOSTILE, qty: 1, unit: XSS_SCRIPT, price: 100, vat_pct: 22 },
        { name: `Вторая ${HOSTILE}`, qty: 2, unit: 'шт', price: 50 },
      ],
      api_recipients: [{ email: `a${HOSTILE}@example.com`, name: HOSTILE, position: HOSTILE }],
      signers: [{ role: HOSTILE, name: HOSTILE, position: HOSTILE }],
      purpose: HOSTILE,
      comment: HOSTILE,
      basis: HOSTILE,
      buyer_edo_id: XSS_SCRIPT,
      document_title: HOSTILE,
      information_system: HOSTILE,
      manager: { name: HOSTILE, email: HOSTILE, phone: HOSTILE },
      x_note: HOSTILE,
      // Envelope: shown on the portal as who created and last changed the document.
      actor_login: HOSTILE,
    });

  it('appears only escaped on every page, in every string field', async () => {
    const doc = await createDocument(t, hostileDocument());
    expect(doc.metadata.created_by_login).toBe(HOSTILE);
    const pages = collectUrls(doc).filter(({ url }) => expectedType(url) === 'text/html');
    expect(pages.length).toBeGreaterThanOrEqual(10);
    for (const { path, url } of pages) {
      const res = await request(t, url);
      expect(res.statusCode, path).toBe(200);
      expect(res.body, path).not.toContain('<script>alert');
      expect(res.body, path).not.toContain('<img src=x');
      expect(res.body, path).not.toMatch(/"'>/);
      expect(res.body, path).toContain(XSS_SCRIPT_ESCAPED);
    }
    const pdf = await request(t, doc.document_url);
    expect(pdf.statusCode).toBe(200);
    const disposition = String(pdf.headers['content-disposition']);
    expect(disposition).toMatch(/^inline; filename="invoice-[A-Za-z0-9_-]+-2026-03-02\.pdf"; filename\*=UTF-8''[A-Za-z0-9%._~-]+$/);
  });

  it('appears escaped in the pages every string field feeds: the share page shows each', async () => {
    const doc = await createDocument(t, hostileDocument());
    const page = (await request(t, doc.invoice_url)).body;
    const count = page.split(XSS_SCRIPT_ESCAPED).length - 1;
    // number (title, header), seller name/address/kpp, buyer name/inn/kpp/address, items, purpose, comment, basis, signers.
    expect(count).toBeGreaterThanOrEqual(12);
  });
});

describe('tokens in the logs', () => {
  it('never writes a share or portal token', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    for (const { url } of collectUrls(doc)) await request(t, url, { headers: ACME });
    const tokens = collectUrls(doc)
      .filter(({ url }) => !url.includes('/api/'))
      .map(({ url }) => new URL(url).pathname.split('/').find((s) => s.length >= 20) as string);
    expect(tokens.length).toBeGreaterThan(10);
    const log = t.logs.join('\n');
    expect(log).toContain('/s/[REDACTED]');
    expect(log).toContain('/portal/document/edit/[REDACTED]');
    for (const token of tokens) expect(log).not.toContain(token);
  });
});

describe('demo links', () => {
  const demo = { 'x-api-key': 'demo-token' };

  it('open the sample read-only: every URL of the demo GET and of a dry-run create answers 200', async () => {
    const sample = await getDocument(t, 'demo-invoice', demo);
    const created = await createDocument(t, documentWithRecipients(), demo);
    expect(created.demo_mode).toBe(true);
    expect(created.share_links.recipients[1].url).toBe('http://share.test/s/demo-recipient-2');
    // A dry-run document is stored nowhere, so its api_url answers 404 with demo_public_id
    // (operating contract: demo mode); every page, PDF and QR link opens the sample.
    const pages = collectUrls(created).filter(({ url }) => !url.includes('/api/'));
    for (const { path, url } of [...collectUrls(sample), ...pages]) {
      const res = await request(t, url, { headers: demo });
      expect(res.statusCode, `${path} ${url}`).toBe(200);
      expect(String(res.headers['content-type']), path).toContain(expectedType(url));
    }
    const page = await request(t, sample.invoice_url);
    expect(page.body).toContain('Консультационные услуги');
    const report = await request(t, `${sample.invoice_url}/payment-reported`, { method: 'POST' });
    expect(report.statusCode).toBe(303);
    expect((await getDocument(t, 'demo-invoice', demo)).status.buyer_status).toBe('not_sent');
    expect((await request(t, 'http://share.test/s/demo-recipient-0')).statusCode).toBe(404);
  });
});
