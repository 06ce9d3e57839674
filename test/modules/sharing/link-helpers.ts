/**
 * Helpers of the share and portal HTTP tests: an app whose share and portal bases are hosts of
 * their own, requests by absolute URL (Host header and path, as a proxy would forward them),
 * and every URL a document response carries.
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { ACME_KEY, bootstrapFixture } from '../../helpers/fixtures.js';

export const ACME = { 'x-api-key': ACME_KEY } as const;
export const GAMMA_KEY = 'ak_gamma_closed_0001';

/** Bases on hosts of their own, as the contract allows. */
export const SEPARATE_HOSTS = {
  INVOICING_PUBLIC_URL: 'http://api.test',
  INVOICING_SHARE_URL: 'http://share.test/s',
  INVOICING_PORTAL_URL: 'http://portal.test/portal',
} as const;

/** The fixture plus team `gamma`, whose tariff forbids external sharing. */
export function bootstrapWithClosedTariff() {
  const fixture = bootstrapFixture();
  return {
    ...fixture,
    tariffs: { ...fixture.tariffs, closed: { ...fixture.tariffs.basic, external_share: false } },
    teams: [
      ...fixture.teams,
      {
        id: 'gamma',
        name: 'Gamma',
        tariff: 'closed',
        api_keys: [{ id: 301, name: 'gamma-erp', secret: GAMMA_KEY, active: true }],
        organizations: [{ id: 'g-org', name: 'ООО «Гамма»', inn: '7707083893', active: true }],
        bank_accounts: [
          {
            id: 'g-ba',
            organization_id: 'g-org',
            bank_name: 'ПАО Сбербанк',
            bik: '044525225',
            account: '40702810938000000001',
            corr_account: '30101810400000000225',
            is_default: true,
          },
        ],
      },
    ],
  };
}

export function buildSharingApp(options: TestAppOptions = {}): Promise<TestApp> {
  return buildTestApp({ bootstrap: bootstrapWithClosedTariff(), ...options, env: { ...SEPARATE_HOSTS, ...options.env } });
}

/** A request to an absolute URL: its host goes in the Host header, its path and query in the URL. */
export function request(
  t: TestApp,
  url: string,
  options: Omit<InjectOptions, 'url' | 'path' | 'query'> = {},
): Promise<LightMyRequestResponse> {
  const u = new URL(url);
  return t.call({ method: 'GET', ...options, url: u.pathname + u.search, headers: { ...options.headers, host: u.host } });
}

/** A document with two API recipients and every optional part the pages show. */
export function documentWithRecipients(extra: Record<string, unknown> = {}): Record<string, any> {
  return {
    number: '15',
    date: '2026-03-02',
    due_date: '2026-03-12',
    currency: 'RUB',
    seller: { name: 'ООО «Ромашка»', inn: '7707083893' },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тестовая, д. 2', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
      { name: 'Доставка', qty: 2.5, price: 400, vat_pct: 10 },
      { name: 'Упаковка', qty: 1, price: 1000 },
    ],
    api_recipients: [
      { email: 'accounting@example.com', name: 'Бухгалтерия', position: 'Главный бухгалтер' },
      { email: 'director@example.com', name: 'Директор', position: 'Генеральный директор' },
    ],
    signers: [{ role: 'director', name: 'Анна Смирнова', position: 'Генеральный директор' }],
    purpose: 'Оплата по договору № 7',
    comment: 'Спасибо за заказ',
    ...extra,
  };
}

export async function createDocument(t: TestApp, doc: Record<string, unknown>, headers: Record<string, string> = ACME): Promise<Record<string, any>> {
  const res = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: { ...headers, host: 'api.test' }, payload: doc as never });
  if (res.statusCode !== 200) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

export async function getDocument(t: TestApp, publicId: string, headers: Record<string, string> = ACME): Promise<Record<string, any>> {
  const res = await t.call({ method: 'GET', url: `/api/v1/invoices/${publicId}`, headers: { ...headers, host: 'api.test' } });
  if (res.statusCode !== 200) throw new Error(`get answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Every absolute http(s) URL anywhere in a value, with the JSON path it was found at. */
export function collectUrls(value: unknown, path = '$'): Array<{ path: string; url: string }> {
  if (typeof value === 'string') return /^https?:\/\//.test(value) ? [{ path, url: value }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => collectUrls(v, `${path}[${i}]`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => collectUrls(v, `${path}.${k}`));
  return [];
}

/** What a URL the API returns must serve, by its shape. */
export function expectedType(url: string): string {
  const path = new URL(url).pathname;
  if (path.startsWith('/api/')) return 'application/json';
  if (path.endsWith('/document.pdf')) return 'application/pdf';
  if (path.endsWith('/qr.png')) return 'image/png';
  if (path.endsWith('/qr.svg')) return 'image/svg+xml';
  return 'text/html';
}

/** The value of a hidden or text input named `name` in a page. */
export function inputValue(page: string, name: string): string | undefined {
  const tag = [...page.matchAll(/<input\b[^>]*>/g)].map((m) => m[0]).find((t) => t.includes(`name="${name}"`));
  return tag ? /value="([^"]*)"/.exec(tag)?.[1] : undefined;
}

/** The form as urlencoded text. */
export function urlencoded(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}
