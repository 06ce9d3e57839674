/**
 * Document responses for the rendering and page tests, built by the real `buildInvoiceResponse`
 * from a stored row, so the renderers are tested against exactly what the API returns.
 */
import type { InvoiceRow, ShareLinkRow } from '../../../src/db/types.js';
import type { InvoiceWriteResponse } from '../../../src/modules/invoices/invoice.schemas.js';
import { buildInvoiceResponse } from '../../../src/modules/invoices/view/invoice-view.js';
import { emptyOutcome } from '../../../src/modules/notifications/index.js';
import { DEFAULT_TARIFF } from '../../../src/modules/teams/tariffs.js';

/** The domain reference's vector: subtotal 16499.99, VAT 3290.00, total 19789.99. */
export function sampleDocument(): Record<string, unknown> {
  return {
    number: '15',
    date: '2026-03-02',
    currency: 'RUB',
    invoice_direction: 'outgoing',
    seller: {
      name: 'ООО «Три кита»',
      inn: '7701234560',
      kpp: '770101001',
      address: 'г. Москва, ул. Примерная, д. 1',
      bank_name: 'ПАО СБЕРБАНК',
      bik: '044525225',
      account: '40702810138250123017',
      corr_account: '30101810400000000225',
    },
    buyer: { name: 'ООО «Покупатель»', inn: '7736207543', kpp: '773601001', address: 'г. Москва, ул. Тестовая, д. 2' },
    items: [
      { name: 'Консультационные услуги', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
      { name: 'Лицензия на программное обеспечение', qty: 1, unit: 'шт', price: 9999.99, vat_pct: 22 },
      { name: 'Доставка', qty: 2.5, unit: 'кг', price: 400, vat_pct: 10 },
      { name: 'Обучение персонала', qty: 1, unit: 'усл. ед', price: 1000, vat_pct: null },
    ],
    prices_include_vat: false,
    public_share_enabled: true,
    show_payment_qr: true,
    api_recipients: [],
    signers: [
      { role: 'director', name: 'Смирнова Анна Петровна', position: 'Генеральный директор' },
      { role: 'accountant', name: 'Иванов Пётр Сергеевич' },
    ],
  };
}

export const EXPECTED_QR_PAYLOAD =
  'ST00012|Name=ООО «Три кита»|PersonalAcc=40702810138250123017|BankName=ПАО СБЕРБАНК|BIC=044525225|CorrespAcc=30101810400000000225|PayeeINN=7701234560|KPP=770101001|Sum=1978999|Purpose=Оплата по счёту № 15 от 02.03.2026, в т.ч. НДС 3290.00 руб.';

const BASES = { publicUrl: 'https://api.example', shareUrl: 'https://share.example/s', portalUrl: 'https://portal.example/p', secret: 'x'.repeat(32) };
const NOW = new Date('2026-03-02T09:00:00.000Z');

/** A response for `doc` as the API would return it (status fields can be overridden). */
export function responseFor(doc: Record<string, unknown>, row: Partial<InvoiceRow> = {}): InvoiceWriteResponse {
  const publicId = 'inv_Sample0001';
  const base: InvoiceRow = {
    team_id: 'team-1',
    public_id: publicId,
    revision: 1,
    link_epoch: 0,
    package_public_id: 'pkg_Sample0001',
    number: String(doc.number),
    date: String(doc.date),
    currency: String(doc.currency),
    direction: 'outgoing',
    seller_org_id: 'org-1',
    seller_inn: '7701234560',
    seller_name: 'ООО «Три кита»',
    buyer_inn: null,
    buyer_name: 'ООО «Покупатель»',
    search_text: '',
    seller_status: 'issued',
    buyer_status: 'not_sent',
    service_status: 'active',
    service_status_reason: '',
    editor_mode: 'api',
    source_type: 'api',
    subtotal: '0',
    vat_total: '0',
    total: '0',
    public_share_enabled: 1,
    information_system: null,
    seller_edo_id: null,
    buyer_edo_id: null,
    document: JSON.stringify(doc),
    validation: JSON.stringify({ valid: true, errors: [], warnings: [] }),
    notifications: null,
    created_at: NOW.toISOString(),
    last_modified_at: NOW.toISOString(),
    created_by_login: null,
    last_modified_by_login: null,
    api_key_id: 1,
    api_key_name: 'main',
    api_request_host: 'api.example',
    api_created_at: null,
    api_updated_at: null,
    viewed_at: null,
    payment_reported_at: null,
    changed_at: null,
    edo_pending_job: null,
    email_pending: null,
    traceparent: null,
    ...row,
  };
  const link = (kind: ShareLinkRow['kind'], token: string): ShareLinkRow => ({
    team_id: 'team-1',
    public_id: publicId,
    token,
    kind,
    email: null,
    name: null,
    position: null,
    sort_order: 0,
    created_at: NOW.toISOString(),
    last_opened_at: null,
  });
  return buildInvoiceResponse(base, [link('buyer', 'buyer-token-0001'), link('colleague', 'colleague-token-1')], {
    bases: BASES,
    now: NOW,
    edo: null,
    tariff: DEFAULT_TARIFF,
    caller: { keyId: 1, keyName: 'main' },
    request: { host: 'api.example', requestId: 'req-1' },
    notifications: emptyOutcome(publicId, false),
  });
}

export function sampleResponse(): InvoiceWriteResponse {
  return responseFor(sampleDocument());
}
