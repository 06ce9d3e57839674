/**
 * The document response built from one literal per object gives the very bytes the
 * build with spreads gave (response-build.reference.ts): through the response schema's
 * serializer (what a create, PUT and GET answer) and through JSON.stringify (what an
 * Idempotency-Key replay is stored as), for documents and contexts of every kind.
 */
import fc from 'fast-check';
import fastJson from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import type { InvoiceRow, ShareLinkRow } from '../../../src/db/types.js';
import { InvoiceDetail, InvoiceWriteResponse } from '../../../src/modules/invoices/invoice.schemas.js';
import { buildInvoiceResponse, totalsOf, type ViewContext } from '../../../src/modules/invoices/view/invoice-view.js';
import { emptyOutcome } from '../../../src/modules/notifications/index.js';
import type { Tariff } from '../../../src/modules/teams/index.js';
import { referenceInvoiceResponse } from './response-build.reference.js';

const serializeWrite = fastJson(InvoiceWriteResponse as never);
const serializeDetail = fastJson(InvoiceDetail as never);

const seller = {
  inn: '7707083893',
  kpp: '773601001',
  name: 'ООО «Ромашка»',
  bank_name: 'ПАО Сбербанк',
  bik: '044525225',
  account: '40702810938000000001',
  corr_account: '30101810400000000225',
};

const tariff = (externalShare: boolean): Tariff => ({
  id: 'bench',
  max_organizations: 10,
  max_api_keys: 10,
  key_rate: { per_sec: 1, per_min: 1, per_day: 1 },
  team_rate: { per_sec: 1, per_min: 1, per_day: 1 },
  emails_per_day: 100,
  external_share: externalShare,
  max_webhook_endpoints: 1,
} as Tariff);

const optional = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: null });

const caseArb = fc.record({
  publicId: fc.constantFrom('AbCdEf0123456789', 'doc-0001_x'),
  sellerStatus: fc.constantFrom('draft', 'issued', 'paid', 'cancelled'),
  buyerStatus: fc.constantFrom('not_sent', 'sent', 'viewed'),
  restricted: fc.boolean(),
  externalShare: fc.boolean(),
  publicShare: fc.constantFrom(0, 1),
  currency: fc.constantFrom('RUB', 'USD'),
  pricesIncludeVat: fc.boolean(),
  showQr: fc.option(fc.boolean(), { nil: undefined }),
  purpose: fc.option(fc.constantFrom('Оплата по договору № 5', '  '), { nil: undefined }),
  title: fc.option(fc.constantFrom('Счёт-оферта', ''), { nil: undefined }),
  items: fc.array(
    fc.record({ qty: fc.integer({ min: 1, max: 50 }), price: fc.constantFrom(0, 1500, 9999.99, 2500.5, 0.01), vat_pct: fc.constantFrom(22, 10, 0, null) }),
    { minLength: 1, maxLength: 4 },
  ),
  extraKey: fc.boolean(),
  informationSystem: optional(fc.constantFrom('1С', 'ERP')),
  apiKeyId: optional(fc.integer({ min: 1, max: 9 })),
  apiCreatedAt: optional(fc.constant('2026-11-27T00:00:00.000Z')),
  apiUpdatedAt: optional(fc.constant('2026-11-27T01:00:00.000Z')),
  createdBy: optional(fc.constantFrom('bench', 'Иван')),
  modifiedBy: optional(fc.constantFrom('bench', 'Анна')),
  sellerEdo: optional(fc.constant('2BM-7707083893-2012052808301120')),
  buyerEdo: optional(fc.constant('2BM-7736207543-2012052808301121')),
  apiKeyName: optional(fc.constantFrom('bench', '')),
  host: optional(fc.constantFrom('localhost', 'api.example')),
  changedAt: optional(fc.constant('2026-11-27T02:00:00.000Z')),
  viewedAt: optional(fc.constant('2026-11-27T03:00:00.000Z')),
  recipients: fc.integer({ min: 0, max: 3 }),
  edo: fc.boolean(),
  demo: fc.boolean(),
  // The stored document names the row's status, or another one (the answer then says the row's).
  docStatus: fc.constantFrom('same', 'other'),
  withTotals: fc.boolean(),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(c: Case): { row: InvoiceRow; links: ShareLinkRow[]; ctx: ViewContext } {
  const doc: Record<string, unknown> = {
    number: 'INV-1',
    date: '2026-03-02',
    currency: c.currency,
    invoice_direction: 'outgoing',
    seller,
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543' },
    items: c.items.map((i) => ({ name: 'Работы', ...i, unit: 'шт' })),
    prices_include_vat: c.pricesIncludeVat,
    public_share_enabled: c.publicShare === 1,
    ...(c.showQr !== undefined ? { show_payment_qr: c.showQr } : {}),
    ...(c.purpose !== undefined ? { purpose: c.purpose } : {}),
    ...(c.title !== undefined ? { document_title: c.title } : {}),
    ...(c.extraKey ? { custom_field: { a: [1, 'б'] } } : {}),
    api_recipients: [],
    public_id: c.publicId,
    seller_status: c.docStatus === 'other' ? 'draft' : c.sellerStatus,
  };
  const now = '2026-11-27T00:00:00.000Z';
  const row = {
    team_id: 'team-1',
    public_id: c.publicId,
    revision: 3,
    package_public_id: 'pkg-0001',
    number: 'INV-1',
    date: '2026-03-02',
    currency: c.currency,
    direction: 'outgoing',
    seller_org_id: 'org',
    seller_inn: seller.inn,
    seller_name: seller.name,
    buyer_inn: '7736207543',
    buyer_name: 'ООО «Покупатель»',
    search_text: 'x',
    seller_status: c.sellerStatus,
    buyer_status: c.buyerStatus,
    service_status: c.restricted ? 'restricted' : 'active',
    service_status_reason: c.restricted ? 'emails_per_day_exceeded' : '',
    editor_mode: 'api',
    source_type: 'api',
    subtotal: '0.00',
    vat_total: '0.00',
    total: '0.00',
    public_share_enabled: c.publicShare,
    information_system: c.informationSystem,
    seller_edo_id: c.sellerEdo,
    buyer_edo_id: c.buyerEdo,
    document: JSON.stringify(doc),
    validation: JSON.stringify({ valid: true, errors: [], warnings: [{ field: 'buyer.kpp', code: 'x', message: 'м' }] }),
    notifications: null,
    created_at: now,
    last_modified_at: now,
    created_by_login: c.createdBy,
    last_modified_by_login: c.modifiedBy,
    api_key_id: c.apiKeyId,
    api_key_name: c.apiKeyName,
    api_request_host: c.host,
    api_created_at: c.apiCreatedAt,
    api_updated_at: c.apiUpdatedAt,
    viewed_at: c.viewedAt,
    payment_reported_at: null,
    link_epoch: 0,
    changed_at: c.changedAt,
  } as InvoiceRow;
  const link = (kind: string, token: string, sort: number, email: string | null = null): ShareLinkRow =>
    ({ team_id: 'team-1', public_id: c.publicId, token, kind, email, name: email ? 'Имя' : null, position: null, sort_order: sort, created_at: now, last_opened_at: null }) as ShareLinkRow;
  const links = [
    link('buyer', 'tok-buyer-0001', 0),
    link('colleague', 'tok-coll-0001', 1),
    ...Array.from({ length: c.recipients }, (_, i) => link('recipient', `tok-rec-000${i}`, i + 2, `r${i}@example.com`)),
  ];
  const ctx: ViewContext = {
    bases: { publicUrl: 'https://api.example', shareUrl: 'https://s.example', portalUrl: 'https://p.example', secret: 'k'.repeat(32) },
    now: new Date(now),
    tariff: tariff(c.externalShare),
    caller: { keyId: 7, keyName: 'bench' },
    request: { host: 'api.example', requestId: 'req-1' },
    notifications: emptyOutcome(c.publicId, false),
    edo: c.edo
      ? ({
          status: 'queued', operator: 'sandbox', job_id: 'j1', revision: 3, seller_edo_id: null, buyer_edo_id: 'b', operator_document_id: null,
          attempts: 0, max_attempts: 5, next_attempt_at: null, last_error: null, last_error_code: null, rejection_reason: null, queued_at: now,
          sent_at: null, delivered_at: null, accepted_at: null, rejected_at: null, failed_at: null, updated_at: now, links: [],
        } as unknown as ViewContext['edo'])
      : null,
  };
  if (c.demo) ctx.demo = { guids: { public_id: c.publicId, package_public_id: 'pkg-0001' } };
  if (c.withTotals) ctx.totals = totalsOf(doc as Parameters<typeof totalsOf>[0]);
  return { row, links, ctx };
}

describe('buildInvoiceResponse: one literal per object, the same bytes as the spreads', () => {
  it('serializes (write and detail schema) and stringifies byte for byte as the reference build', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const a = build(c);
        const b = build(c);
        const current = buildInvoiceResponse(a.row, a.links, a.ctx);
        const reference = referenceInvoiceResponse(b.row, b.links, b.ctx);
        expect(serializeWrite(current)).toBe(serializeWrite(reference));
        expect(serializeDetail(current)).toBe(serializeDetail(reference));
        expect(JSON.stringify(current)).toBe(JSON.stringify(reference));
      }),
      { numRuns: 1500 },
    );
  });
});
