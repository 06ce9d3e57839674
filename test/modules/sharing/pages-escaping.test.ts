/**
 * No user text reaches a page unescaped: hostile payloads go into every string of the print
 * model, the portal input and the edit form's document, messages and parameters, and every
 * page is inspected for the raw payloads and for markup they could have injected.
 */
import { describe, expect, it } from 'vitest';
import { toPrintModel } from '../../../src/modules/invoices/read/print-model.js';
import {
  escapeHtml,
  html,
  portalViewInput,
  renderMessagePage,
  renderPortalEditPage,
  renderPortalViewPage,
  renderSharePage,
  safeUrl,
  trustedHtml,
} from '../../../src/modules/sharing/pages/index.js';
import { HOSTILE, attributes, XSS_ATTR, XSS_ATTR_ESCAPED, XSS_SCRIPT, XSS_SCRIPT_ESCAPED, mapStrings, sampleDocument, sampleResponse } from './page-fixtures.js';

const hostile = (s: string) => `${s}${HOSTILE}`;

function expectSafe(page: string, { scripts = 0 } = {}): void {
  expect(page).not.toContain(XSS_SCRIPT);
  expect(page).not.toContain(XSS_ATTR);
  // Real tags (text has no raw "<" left) carry no event handler attribute.
  for (const m of page.matchAll(/<[a-zA-Z][^>]*>/g)) {
    for (const name of Object.keys(attributes(m[0]))) expect(name).not.toMatch(/^on/i);
  }
  expect(page).toContain(XSS_SCRIPT_ESCAPED);
  expect(page).toContain(XSS_ATTR_ESCAPED);
  // The only scripts are the static ones, by src; no inline code, no inline styles.
  const tags = [...page.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  expect(tags).toHaveLength(scripts);
  for (const tag of tags) expect(tag).toMatch(/^<script src="\/assets\/[\w.-]+\.js" defer>$/);
  expect(page).not.toMatch(/<style\b|\sstyle=/i);
  // Every image is the QR, from an http(s) or same-origin URL.
  for (const m of page.matchAll(/<img\b[^>]*>/g)) {
    expect(m[0]).toMatch(/^<img src="(https?:\/\/|\/)/);
    expect(Object.keys(attributes(m[0])).sort()).toEqual(['alt', 'height', 'src', 'width']);
  }
}

const hostileModel = () => mapStrings(toPrintModel(sampleResponse()), hostile);

describe('HTML escaping', () => {
  it('escapes & < > " and \' and leaves trusted markup alone', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    expect(html`<p title="${XSS_ATTR}">${XSS_SCRIPT}</p>`.value).toBe(`<p title="${XSS_ATTR_ESCAPED}">${XSS_SCRIPT_ESCAPED}</p>`);
    expect(html`<p>${[XSS_SCRIPT, html`<b>${'x'}</b>`]}${null}${false}${0}</p>`.value).toBe(`<p>${XSS_SCRIPT_ESCAPED}<b>x</b>0</p>`);
    expect(html`${trustedHtml('<hr>')}`.value).toBe('<hr>');
  });

  it('lets only http(s) and same-origin URLs into links', () => {
    expect(safeUrl('https://share.example/s/t')).toBe('https://share.example/s/t');
    expect(safeUrl('/assets/x.css')).toBe('/assets/x.css');
    expect(safeUrl('javascript:alert(1)')).toBe('#');
    expect(safeUrl(' JavaScript:alert(1)')).toBe('#');
    expect(safeUrl('data:text/html,<script>')).toBe('#');
    expect(safeUrl('//evil.example/x')).toBe('#');
    expect(safeUrl(null)).toBe('#');
  });

  it('share page escapes every model string', () => {
    const model = hostileModel();
    const page = renderSharePage({ model, pdfUrl: hostile('https://s.example/t/document.pdf'), qrImageUrl: 'https://s.example/t/qr.png', paymentReportUrl: hostile('/t/paid') });
    expectSafe(page);
    // Status values are in class names too: an unknown value gets no modifier at all.
    expect(page).not.toContain('badge--&');
  });

  it('share page in every payment state escapes the model', () => {
    for (const seller of ['paid', 'cancelled', 'issued']) {
      const model = { ...hostileModel(), status: { ...hostileModel().status, seller } };
      expectSafe(renderSharePage({ model, pdfUrl: '/d.pdf', qrImageUrl: '/q.png', paymentReportUrl: '/p', justReported: seller === 'issued' }));
    }
  });

  it('portal view page escapes the model, metadata, links and warnings', () => {
    const response = mapStrings(sampleResponse(), hostile);
    // The response's QR payload must stay a GOST string for the model to show the QR.
    const input = portalViewInput(response, { editUrl: hostile('/edit/x') });
    expect(input.model.buyer.name).toContain(XSS_SCRIPT);
    const withWarnings = {
      ...input,
      warnings: [{ field: hostile('seller.inn'), code: hostile('code'), message: hostile('bad') }],
      shareUnavailableReason: hostile('x'),
      saved: true,
      // What an operator reports (titles, numbers, reasons, errors) is untrusted text too.
      edo: mapStrings(
        {
          status: 'rejected' as const,
          operator: 'http',
          job_id: 'j',
          revision: 1,
          seller_edo_id: 's',
          buyer_edo_id: 'b',
          operator_document_id: 'd',
          attempts: 2,
          max_attempts: 10,
          next_attempt_at: null,
          last_error: 'e',
          last_error_code: 'operator_unavailable',
          rejection_reason: 'r',
          queued_at: '2026-03-02T09:00:00.000Z',
          sent_at: '2026-03-02T09:00:01.000Z',
          delivered_at: '2026-03-02T09:00:02.000Z',
          accepted_at: null,
          rejected_at: '2026-03-02T09:00:03.000Z',
          failed_at: null,
          updated_at: '2026-03-02T09:00:03.000Z',
          links: [{ document_id: 'l', kind: 'act', title: 't', number: 'n', date: 'd', linked_at: '2026-03-02T09:00:03.000Z', received_at: '2026-03-02T09:00:03.000Z' }],
        },
        hostile,
      ),
    };
    const page = renderPortalViewPage(withWarnings);
    expectSafe(page);
    expect(page).toContain('ЭДО');
  });

  it('edit page escapes every document field, message and parameter', () => {
    const doc = mapStrings(
      {
        ...sampleDocument(),
        due_date: '2026-03-12',
        comment: 'c',
        purpose: 'p',
        buyer_edo_id: 'e',
        api_recipients: [{ email: 'a@b.example', name: 'n', position: 'p' }],
        // Raw text typed into numeric fields is shown again after a refused save.
        items: [{ name: 'n', qty: '1,5', unit: 'шт', price: '10', vat_pct: '22' }],
      },
      hostile,
    );
    const page = renderPortalEditPage({
      title: hostile('Счёт'),
      document: doc,
      errors: { [hostile('items[0].price')]: hostile('error'), number: hostile('required') },
      warnings: { 'seller.inn': hostile('checksum') },
      formError: hostile('conflict'),
      csrfToken: hostile('csrf'),
      actionUrl: hostile('/edit/t'),
      cancelUrl: hostile('/view/t'),
      etag: hostile('"etag"'),
      currentSellerStatus: hostile('issued'),
    });
    expectSafe(page, { scripts: 1 });
    // Values are inside quoted attributes or textarea text, never markup.
    expect(page).toContain(`value="n${XSS_SCRIPT_ESCAPED}${XSS_ATTR_ESCAPED}"`);
    expect(page).toMatch(/<textarea[^>]*name="comment"[^>]*>c&lt;script&gt;/);
  });

  it('message pages escape their text', () => {
    expectSafe(renderMessagePage({ title: HOSTILE, message: HOSTILE, hint: HOSTILE }));
  });
});
