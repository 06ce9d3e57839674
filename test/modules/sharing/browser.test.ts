/**
 * The pages in a real browser (playwright-core driving Debian's Chromium), served by the app
 * on a real port with its real headers and CSP, opened by the URLs the API returned on their
 * own hosts (`*.localhost`, which Chromium resolves to the loopback and treats as a secure
 * context, as production's HTTPS hosts are):
 * - the buyer presses «Я оплатил» and the API reports `payment_reported`;
 * - a document is edited in the portal (a row added by the page's script) and the change reads
 *   back through the API with `editor_mode: portal`;
 * - axe-core finds no serious or critical accessibility violation on any page, nothing is
 *   blocked by the CSP, nothing overflows a phone screen;
 * - a screenshot of each page is kept in test-results/ (git-ignored) as an artifact.
 * Skipped when there is no Chromium (CHROMIUM_PATH, default /usr/bin/chromium); CI installs it.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../../helpers/app.js';
import { freePort, REPO_ROOT } from '../../helpers/process.js';
import { buildSharingApp, createDocument, documentWithRecipients, getDocument } from './link-helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(REPO_ROOT, 'test-results', 'pages');
const require = createRequire(import.meta.url);

describe.skipIf(!existsSync(CHROMIUM))('share and portal pages in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let doc: Record<string, any>;
  const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

  beforeAll(async () => {
    const port = await freePort();
    t = await buildSharingApp({
      env: {
        INVOICING_PUBLIC_URL: `http://api.localhost:${port}`,
        INVOICING_SHARE_URL: `http://share.localhost:${port}/s`,
        INVOICING_PORTAL_URL: `http://portal.localhost:${port}/portal`,
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    doc = await createDocument(t, documentWithRecipients());
    mkdirSync(ARTIFACTS, { recursive: true });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A new page that collects console errors (CSP violations land there) and script errors. */
  async function open(url: string, viewport = { width: 1200, height: 900 }): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage({ viewport });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 400 && r.url() !== url) problems.push(`${r.status()} ${r.url()}`);
    });
    const response = await page.goto(url);
    expect(response?.status(), url).toBeLessThan(500);
    return { page, problems };
  }

  /** axe-core's serious and critical violations (injected through the debugger, which the CSP does not govern). */
  async function seriousViolations(page: Page): Promise<string[]> {
    await page.evaluate(axeSource);
    const violations = (await page.evaluate(
      "axe.run({ resultTypes: ['violations'] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))",
    )) as Array<{ id: string; impact: string; help: string; nodes: number }>;
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes}): ${v.help}`);
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    const file = path.join(ARTIFACTS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    expect(existsSync(file)).toBe(true);
  }

  async function fitsPhone(url: string): Promise<boolean> {
    const { page } = await open(url, { width: 375, height: 800 });
    const fits = (await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')) as boolean;
    await screenshot(page, `${new URL(url).host.split('.')[0]}-phone`);
    await page.close();
    return fits;
  }

  it('buyer page: accessible, and «Я оплатил» sets payment_reported', async () => {
    const { page, problems } = await open(doc.invoice_url);
    expect(await page.title()).toBe('Счёт на оплату № 15 от 2 марта 2026 г. — ООО «Ромашка»');
    expect(await page.locator('h1').textContent()).toBe('Счёт на оплату № 15 от 2 марта 2026 г.');
    const qr = page.locator('img[alt^="QR-код для оплаты"]');
    expect(await qr.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth)).toBeGreaterThan(100);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'share-buyer');

    await Promise.all([page.waitForURL(doc.invoice_url), page.getByRole('button', { name: 'Я оплатил' }).click()]);
    await expect.poll(() => page.locator('[role="status"]').first().textContent()).toContain('Спасибо!');
    expect(await page.getByRole('button', { name: 'Я оплатил' }).count()).toBe(0);
    await screenshot(page, 'share-buyer-reported');
    expect(problems).toEqual([]);
    await page.close();

    const now = await getDocument(t, doc.public_id);
    expect(now.status.buyer_status).toBe('payment_reported');
    expect(now.metadata.viewed_at).not.toBeNull();
    expect(await fitsPhone(doc.invoice_url)).toBe(true);
  }, 60_000);

  it('portal: edit a document (adding a row with the page script) and read the change through the API', async () => {
    const { page, problems } = await open(doc.portal_edit_url);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'portal-edit');

    await page.locator('#f-buyer-name').fill('ООО «Покупатель из браузера»');
    const rows = page.locator('#items-group [data-rows] tr');
    const before = await rows.count();
    await page.getByRole('button', { name: 'Добавить позицию' }).click();
    expect(await rows.count()).toBe(before + 1);
    const added = rows.last();
    await added.locator('input[name$=".name"]').fill('Сопровождение');
    await added.locator('input[name$=".qty"]').fill('2');
    await added.locator('input[name$=".price"]').fill('1 250,50');
    await Promise.all([page.waitForURL(/\/portal\/view\/.+\?saved=1$/), page.getByRole('button', { name: 'Сохранить' }).click()]);
    expect(await page.locator('.notice--ok').textContent()).toContain('Изменения сохранены.');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'portal-view-saved');
    expect(problems).toEqual([]);
    await page.close();

    const now = await getDocument(t, doc.public_id);
    expect(now.invoice.buyer.name).toBe('ООО «Покупатель из браузера»');
    expect(now.invoice.items.at(-1)).toMatchObject({ name: 'Сопровождение', qty: 2, price: 1250.5, vat_pct: 22 });
    expect(now.metadata.editor_mode).toBe('portal');
    expect(now.metadata.revision).toBe(2);
  }, 60_000);

  it('portal: the form shows errors next to the fields, accessibly', async () => {
    const { page, problems } = await open(doc.portal_edit_url);
    await page.locator('input[name="items[0].qty"]').fill('много');
    await page.locator('input[name="number"]').fill('');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Сохранить' }).click()]);
    await expect.poll(() => page.locator('#error-summary').count()).toBe(1);
    expect(await page.locator('#f-items-0-qty-error').textContent()).toBe('Введите число, например 1 500,50');
    expect(await page.locator('#f-items-0-qty').getAttribute('aria-invalid')).toBe('true');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'portal-edit-errors');
    // The re-shown form is answered with 400, which the browser logs; nothing else may be.
    expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    await page.close();
  }, 60_000);

  it('the other pages: colleague, recipient, portal view, document view, 403 and 404', async () => {
    const gamma = await createDocument(t, documentWithRecipients(), { 'x-api-key': 'ak_gamma_closed_0001' });
    const pages: Array<[string, string]> = [
      ['share-colleague', doc.share_links.colleague_url],
      ['share-recipient', doc.share_links.recipients[0].url],
      ['portal-view', doc.portal_view_url],
      ['portal-document-view', doc.portal_document_view_url],
      ['share-403-tariff', gamma.invoice_url],
      ['share-404', `${new URL(doc.invoice_url).origin}/s/AAAAAAAAAAAAAAAAAAAAAA`],
    ];
    for (const [name, url] of pages) {
      const { page, problems } = await open(url);
      expect(await page.locator('html').getAttribute('lang'), name).toBe('ru');
      expect(await seriousViolations(page), name).toEqual([]);
      await screenshot(page, name);
      // The 403 and 404 pages are answered with those statuses; the browser logs them as errors.
      expect(problems.filter((p) => !/status of 40[34]/.test(p)), name).toEqual([]);
      await page.close();
    }
    expect(await fitsPhone(doc.portal_view_url)).toBe(true);
  }, 90_000);
});
