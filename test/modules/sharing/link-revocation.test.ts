/**
 * `invoicing links rotate PUBLIC_ID` ends the document's share links and its
 * portal links (the link epoch in the signed token), and turning `public_share_enabled` off
 * ends the share pages (and their PDF and QR, cached or not) at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { rotateShareLinks } from '../../../src/modules/invoices/index.js';
import { ACME, buildSharingApp, createDocument, documentWithRecipients, getDocument, request } from './link-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildSharingApp();
});

afterAll(async () => {
  await t?.close();
});

describe('links rotate', () => {
  it('ends the portal view and edit links of that document only; the next GET returns working ones', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const other = await createDocument(t, documentWithRecipients());
    const pdfOf = (viewUrl: string) => `${viewUrl}/document.pdf`;
    for (const url of [doc.portal_view_url, doc.portal_edit_url, doc.portal_document_view_url, pdfOf(doc.portal_view_url), doc.invoice_url]) {
      expect((await request(t, url)).statusCode, url).toBe(200);
    }

    expect(await rotateShareLinks(t.db.db, doc.public_id)).not.toBeNull();

    for (const url of [doc.portal_view_url, doc.portal_edit_url, doc.portal_document_view_url, doc.portal_document_edit_url, pdfOf(doc.portal_view_url), doc.invoice_url]) {
      expect((await request(t, url)).statusCode, url).toBe(404);
    }
    // A save through the old edit link is refused as well.
    const save = await request(t, doc.portal_edit_url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'number=1' });
    expect(save.statusCode).toBe(404);

    const fresh = await getDocument(t, doc.public_id);
    expect(fresh.portal_view_url).not.toBe(doc.portal_view_url);
    for (const url of [fresh.portal_view_url, fresh.portal_edit_url, fresh.invoice_url]) expect((await request(t, url)).statusCode, url).toBe(200);
    // Another document's links are untouched.
    expect((await request(t, other.portal_view_url)).statusCode).toBe(200);
  });
});

describe('public_share_enabled off', () => {
  it('ends the share page, its PDF and its QR at once, even after they were served', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const urls = [doc.invoice_url, doc.document_url, `${doc.invoice_url}/qr.png`];
    for (const url of urls) expect((await request(t, url)).statusCode, url).toBe(200);
    const put = await t.call({
      method: 'PUT',
      url: `/api/v1/invoices/${doc.public_id}`,
      headers: { ...ACME, host: 'api.test' },
      payload: { invoice: { ...doc.invoice, public_share_enabled: false } } as never,
    });
    expect(put.statusCode).toBe(200);
    for (const url of urls) expect((await request(t, url)).statusCode, url).toBe(404);
  });
});
