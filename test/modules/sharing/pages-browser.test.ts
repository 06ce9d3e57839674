/**
 * The pages in a real browser under the strict CSP they will be served with: axe-core finds
 * no accessibility violations, nothing is blocked by the CSP, and the edit script adds and
 * removes rows. Needs a Chromium (CHROMIUM_PATH, or /usr/bin/chromium); skipped without one,
 * because the pure tests above already pin the markup.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPrintModel } from '../../../src/modules/invoices/read/print-model.js';
import { renderQrPng } from '../../../src/modules/rendering/qr-image.js';
import {
  portalViewInput,
  renderNotFoundPage,
  renderPortalEditPage,
  renderPortalViewPage,
  renderSharePage,
  STATIC_ASSETS,
} from '../../../src/modules/sharing/pages/index.js';
import { PAGE_CSP } from '../../../src/modules/sharing/index.js';
import { sampleResponse } from './page-fixtures.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The CSP the app serves the pages with. */
const CSP = PAGE_CSP;
const require = createRequire(import.meta.url);

describe.skipIf(!existsSync(CHROMIUM))('pages in a browser', () => {
  let server: Server;
  let base = '';
  let browser: import('playwright-core').Browser;

  beforeAll(async () => {
    const r = sampleResponse();
    const model = toPrintModel(r);
    const pages: Record<string, string> = {
      '/share': renderSharePage({ model, pdfUrl: '/doc.pdf', qrImageUrl: '/qr.png', paymentReportUrl: '/paid' }),
      '/view': renderPortalViewPage(portalViewInput(r, { editUrl: '/edit', qrImageUrl: '/qr.png', pdfUrl: '/doc.pdf' })),
      '/edit': renderPortalEditPage({
        title: model.document_title,
        document: r.invoice,
        errors: { 'items[1].price': 'должно быть не меньше 0', number: 'обязательное поле' },
        warnings: { 'seller.inn': 'контрольное число не сходится' },
        csrfToken: 'csrf',
        actionUrl: '/edit',
        cancelUrl: '/view',
      }),
      '/404': renderNotFoundPage(),
    };
    const files: Record<string, { type: string; body: string | Buffer }> = {
      '/qr.png': { type: 'image/png', body: await renderQrPng(model.qr_payload ?? 'x') },
      '/axe.js': { type: 'text/javascript', body: readFileSync(require.resolve('axe-core/axe.min.js')) },
      '/favicon.ico': { type: 'image/x-icon', body: Buffer.alloc(0) },
      ...Object.fromEntries(STATIC_ASSETS.map((a) => [a.path, { type: a.contentType, body: a.body }])),
      ...Object.fromEntries(Object.entries(pages).map(([path, body]) => [path, { type: 'text/html; charset=utf-8', body }])),
    };
    server = createServer((req, res) => {
      const file = files[req.url ?? ''];
      res.setHeader('content-security-policy', CSP);
      res.statusCode = file ? 200 : 404;
      if (file) res.setHeader('content-type', file.type);
      res.end(file?.body ?? '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function open(path: string) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(base + path);
    return { page, problems };
  }

  for (const path of ['/share', '/view', '/edit', '/404']) {
    it(`${path}: no axe violations, nothing blocked by the CSP, no horizontal overflow on a phone`, async () => {
      const { page, problems } = await open(path);
      // axe is injected by the test after load; the page itself runs only its own static files.
      await page.addScriptTag({ url: '/axe.js' });
      const violations = await page.evaluate(async () => {
        const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string; help: string }> }> } }).axe;
        return (await axe.run()).violations.map((v) => `${v.id}: ${v.help}`);
      });
      expect(violations).toEqual([]);
      expect(problems).toEqual([]);
      // On a 375 px phone nothing overflows the viewport (tables scroll inside their own region).
      await page.setViewportSize({ width: 375, height: 800 });
      // (Browser code as strings: the test compiles without the DOM library.)
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await page.close();
    }, 60_000);
  }

  it('edit script adds a numbered, labelled row and removes rows', async () => {
    const { page, problems } = await open('/edit');
    const rows = page.locator('#items-group [data-rows] tr');
    expect(await rows.count()).toBe(7);
    await page.click('#items-group [data-add-row]');
    expect(await rows.count()).toBe(8);
    const input = rows.last().locator('input').first();
    expect(await input.getAttribute('name')).toBe('items[7].name');
    expect(await page.locator('label[for="f-items-7-name"]').textContent()).toBe('Позиция 8 — Наименование');
    expect(await page.evaluate("document.activeElement && document.activeElement.getAttribute('name')")).toBe('items[7].name');
    await rows.first().locator('[data-remove-row]').click();
    expect(await rows.count()).toBe(7);
    expect(await page.locator('#items-group [data-live]').textContent()).toBe('Строка удалена');
    expect(await page.locator('.nojs-only').first().isVisible()).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
