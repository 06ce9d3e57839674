/**
 * Who the links open for: the share gate (404 when the document is not shared, 403 when the
 * tariff forbids it), links that open nothing (unknown, tampered, expired, foreign, view-only
 * on an edit page), and revoking share links by rotation through the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { TEST_SECRET } from '../../helpers/app.js';
import { runCli } from '../../helpers/process.js';
import { signPortalToken } from '../../../src/modules/links/index.js';
import { PAGE_CSP } from '../../../src/modules/sharing/index.js';
import { decodeQrPng } from '../rendering/native-tools.js';
import { buildSharingApp, collectUrls, createDocument, documentWithRecipients, GAMMA_KEY, getDocument, request, SEPARATE_HOSTS } from './link-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildSharingApp();
});

afterAll(async () => {
  await t?.close();
});

const html = (res: { headers: Record<string, unknown> }) => String(res.headers['content-type']).startsWith('text/html');

describe('the share gate', () => {
  const shareUrls = (doc: Record<string, any>) => [
    doc.invoice_url,
    doc.document_url,
    doc.share_links.colleague_url,
    doc.share_links.colleague_document_url,
    doc.share_links.recipients[0].url,
    doc.share_links.recipients[0].document_url,
    `${doc.invoice_url}/qr.png`,
    `${doc.invoice_url}/qr.svg`,
  ];

  it('answers 404 on every share link of a document with public_share_enabled: false; the portal still works', async () => {
    const doc = await createDocument(t, documentWithRecipients({ public_share_enabled: false }));
    expect(doc.share_gate).toMatchObject({ available: false, public_share_enabled: false, reason: 'public_share_disabled' });
    for (const url of shareUrls(doc)) {
      const res = await request(t, url);
      expect(res.statusCode, url).toBe(404);
      expect(html(res)).toBe(true);
      expect(res.body).toContain('Страница не найдена');
      expect(res.body).not.toContain('Покупатель');
    }
    expect((await request(t, `${doc.invoice_url}/payment-reported`, { method: 'POST' })).statusCode).toBe(404);
    expect((await getDocument(t, doc.public_id)).status.buyer_status).toBe('not_sent');
    for (const url of [doc.portal_view_url, doc.portal_edit_url, doc.portal_document_view_url, doc.portal_document_edit_url]) {
      expect((await request(t, url)).statusCode, url).toBe(200);
    }
    expect((await request(t, doc.portal_view_url)).body).toContain('публикация по ссылке выключена');
  });

  it('answers 403 with a page saying so when the tariff forbids external sharing; share_gate tells the API caller', async () => {
    const gamma = { 'x-api-key': GAMMA_KEY };
    const doc = await createDocument(t, documentWithRecipients(), gamma);
    expect(doc.share_gate).toMatchObject({ available: false, public_share_enabled: true, external_share_allowed: false, reason: 'tariff_external_share_disabled' });
    expect(doc.status.service_status).toBe('restricted');
    for (const url of shareUrls(doc)) {
      const res = await request(t, url);
      expect(res.statusCode, url).toBe(403);
      expect(html(res)).toBe(true);
      expect(res.body).toContain('Доступ к счёту ограничен');
      expect(res.body).toContain('тарифе продавца');
    }
    expect((await request(t, `${doc.invoice_url}/payment-reported`, { method: 'POST' })).statusCode).toBe(403);
    expect((await getDocument(t, doc.public_id, gamma)).status.buyer_status).toBe('not_sent');
    expect((await request(t, doc.portal_view_url)).statusCode).toBe(200);
  });
});

describe('links that open nothing', () => {
  it('answers 404 pages for unknown, malformed, tampered, expired and foreign-secret tokens', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const viewToken = new URL(doc.portal_view_url).pathname.split('/').pop() as string;
    const [payload, signature] = viewToken.split('.') as [string, string];
    const expired = signPortalToken(TEST_SECRET, { teamId: 'acme', publicId: doc.public_id, mode: 'view', exp: 1000, epoch: 0 });
    const foreign = signPortalToken('another-secret-0123456789abcdef0123456789', { teamId: 'acme', publicId: doc.public_id, mode: 'view', exp: 4_000_000_000, epoch: 0 });
    const otherTeam = signPortalToken(TEST_SECRET, { teamId: 'beta', publicId: doc.public_id, mode: 'view', exp: 4_000_000_000, epoch: 0 });
    for (const url of [
      'http://share.test/s/AAAAAAAAAAAAAAAAAAAAAA',
      'http://share.test/s/AAAAAAAAAAAAAAAAAAAAAA/document.pdf',
      'http://share.test/s/AAAAAAAAAAAAAAAAAAAAAA/qr.png',
      'http://share.test/s/not%20a%20token',
      'http://share.test/s/x/y/z',
      `http://portal.test/portal/view/${payload}.${signature.slice(1)}A`,
      `http://portal.test/portal/view/${expired}`,
      `http://portal.test/portal/view/${foreign}`,
      `http://portal.test/portal/view/${otherTeam}`,
      'http://portal.test/portal/view/garbage',
      'http://portal.test/portal/nothing',
    ]) {
      const res = await request(t, url);
      expect(res.statusCode, url).toBe(404);
      expect(html(res), url).toBe(true);
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    }
  });

  it('refuses a view link on the edit pages (403), without upgrading it', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const viewToken = new URL(doc.portal_view_url).pathname.split('/').pop() as string;
    for (const url of [`http://portal.test/portal/edit/${viewToken}`, `http://portal.test/portal/document/edit/${viewToken}`]) {
      const res = await request(t, url);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('только просматривать');
    }
    expect((await request(t, doc.portal_view_url)).body).not.toContain('Редактировать');
    expect((await request(t, doc.portal_edit_url.replace('/edit/', '/view/'))).body).toContain('Редактировать');
  });
});

describe('revoking share links by rotation', () => {
  it('`invoicing links rotate PUBLIC_ID` gives the document new tokens; the old links answer 404', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const old = collectUrls(doc.share_links).map((u) => u.url);
    const cli = await runCli(['links', 'rotate', doc.public_id], { DATABASE_URL: t.db.url, ...SEPARATE_HOSTS });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`Rotated 4 share link(s) of document ${doc.public_id} (team acme)`);
    for (const url of old) expect((await request(t, url)).statusCode, url).toBe(404);

    const now = await getDocument(t, doc.public_id);
    expect(now.invoice_url).not.toBe(doc.invoice_url);
    expect(cli.stdout).toContain(now.invoice_url);
    expect(now.metadata.revision).toBe(1);
    expect(now.share_links.recipients.map((r: { email: string }) => r.email)).toEqual(['accounting@example.com', 'director@example.com']);
    for (const { url } of collectUrls(now.share_links)) expect((await request(t, url)).statusCode, url).toBe(200);
    expect(await decodeQrPng((await request(t, now.qr.url)).rawPayload)).toBe(now.qr.payload);

    const unknown = await runCli(['links', 'rotate', 'no-such-document'], { DATABASE_URL: t.db.url });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no document with public_id no-such-document');
  }, 120_000);
});
