/**
 * Shared pieces of the documents API write-path tests: the domain reference document,
 * request shorthands and row counts read straight from the test database.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../../helpers/app.js';
import { ACME_KEY } from '../../helpers/fixtures.js';

export const ACME = { 'x-api-key': ACME_KEY } as const;

/** Seller INNs of the fixture (test/helpers/fixtures.ts). */
export const ORG1_INN = '7707083893';
export const ORG2_INN = '7736207543'; // active, beyond the basic tariff's one organization
export const ORG3_INN = '7830002293'; // inactive
export const BETA_ORG_INN = '500100732259';

/**
 * The domain reference vector (domain-reference.md, "VAT in 2026"): 3 ч × 1500 @22 +
 * 1 × 9999.99 @22 + 2.5 × 400 @10 + 1000 без НДС → 16499.99 + 3290.00 = 19789.99.
 * The seller gives only name and INN: the requisites come from org-1 and its default account.
 */
export function referenceDoc(): Record<string, any> {
  return {
    number: '15',
    date: '2026-03-02',
    currency: 'RUB',
    seller: { name: 'ООО «Ромашка»', inn: ORG1_INN },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', email: 'buyer@example.com' },
    items: [
      { name: 'Консультация', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия', qty: 1, price: 9999.99, vat_pct: 22 },
      { name: 'Доставка', qty: 2.5, price: 400, vat_pct: 10 },
      { name: 'Упаковка', qty: 1, price: 1000 },
    ],
  };
}

/** A small valid document with one line; `number` tells documents apart. */
export function simpleDoc(number = '1', extra: Record<string, unknown> = {}): Record<string, any> {
  return {
    number,
    date: '2026-03-02',
    currency: 'RUB',
    seller: { inn: ORG1_INN },
    buyer: { name: 'ООО «Покупатель»' },
    items: [{ name: 'Работа', qty: 1, price: 100, vat_pct: 22 }],
    ...extra,
  };
}

export function post(t: TestApp, payload: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.call({ method: 'POST', url: '/api/v1/invoices', headers: { ...ACME, ...headers }, payload: payload as never });
}

export function put(t: TestApp, publicId: string, payload: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.call({
    method: 'PUT',
    url: `/api/v1/invoices/${encodeURIComponent(publicId)}`,
    headers: { ...ACME, ...headers },
    payload: payload as never,
  });
}

export function get(t: TestApp, publicId: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.call({ method: 'GET', url: `/api/v1/invoices/${encodeURIComponent(publicId)}`, headers: { ...ACME, ...headers } });
}

/** Creates a document and returns the response body; fails the test on anything but 200. */
export async function createOk(t: TestApp, payload: unknown, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await post(t, payload, headers);
  if (res.statusCode !== 200) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** Rows of a table, optionally of one document. */
export async function countRows(
  t: TestApp,
  table: 'invoices' | 'invoice_items' | 'share_links' | 'invoice_revisions' | 'idempotency_keys',
  publicId?: string,
): Promise<number> {
  let query = t.db.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n'));
  if (publicId !== undefined && table !== 'idempotency_keys') query = query.where('public_id', '=', publicId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The stored row of a document, as the database holds it. */
export async function storedRow(t: TestApp, publicId: string) {
  return t.db.db.selectFrom('invoices').selectAll().where('public_id', '=', publicId).executeTakeFirst();
}

/** The token at the end of a share URL (`…/s/<token>` or `…/s/<token>/document.pdf`). */
export function tokenOf(url: string, shareBase: string): string {
  if (!url.startsWith(`${shareBase}/`)) throw new Error(`${url} is not under ${shareBase}`);
  return url.slice(shareBase.length + 1).split('/')[0] as string;
}

export const BASE64URL_TOKEN = /^[A-Za-z0-9_-]{22,}$/;
