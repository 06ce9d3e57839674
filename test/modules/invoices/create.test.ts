import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME_KEY_2 } from '../../helpers/fixtures.js';
import { ACME, BASE64URL_TOKEN, countRows, createOk, get, post, referenceDoc, simpleDoc, tokenOf } from './write-helpers.js';

const PUBLIC = 'https://api.example.test';
const SHARE = 'https://share.example.test/s';
const PORTAL = 'https://portal.example.test';

const REFERENCE_QR =
  'ST00012|Name=ООО «Ромашка»|PersonalAcc=40702810938000000001|BankName=ПАО Сбербанк|BIC=044525225|' +
  'CorrespAcc=30101810400000000225|PayeeINN=7707083893|KPP=773601001|Sum=1978999|' +
  'Purpose=Оплата по счёту № 15 от 02.03.2026, в т.ч. НДС 3290.00 руб.';

describe('POST /api/v1/invoices: create (spec 2.1–2.4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { INVOICING_PUBLIC_URL: PUBLIC, INVOICING_SHARE_URL: SHARE, INVOICING_PORTAL_URL: PORTAL } });
  });
  afterAll(async () => t.close());

  describe('the envelope', () => {
    it('accepts the document at the root and in `invoice`, storing the same document', async () => {
      const root = await createOk(t, { ...referenceDoc(), actor_login: 'root-user', notify_recipients: false });
      const wrapped = await createOk(t, { invoice: referenceDoc(), actor_login: 'wrapped-user' });
      for (const body of [root, wrapped]) {
        expect(body.invoice).toMatchObject({ number: '15', date: '2026-03-02', currency: 'RUB' });
        expect(body.totals.total).toBe(19789.99);
      }
      // Envelope keys are not document properties.
      expect(root.invoice).not.toHaveProperty('actor_login');
      expect(root.invoice).not.toHaveProperty('notify_recipients');
      const { public_id: _a, ...rootDoc } = root.invoice;
      const { public_id: _b, ...wrappedDoc } = wrapped.invoice;
      expect(rootDoc).toEqual(wrappedDoc);
      for (const id of [root.public_id, wrapped.public_id]) expect((await get(t, id)).statusCode).toBe(200);
    });

    it.each([
      ['partial_update at the root', { ...simpleDoc('p1'), partial_update: true }],
      ['patch at the root', { ...simpleDoc('p2'), patch: true }],
      ['partial_update: false beside `invoice`', { invoice: simpleDoc('p3'), partial_update: false }],
      ['patch inside `invoice`', { invoice: { ...simpleDoc('p4'), patch: true } }],
      ['patch with an incomplete document', { invoice: { number: 'p5' }, patch: true }],
    ])('refuses %s with 400 partial_update_not_supported and stores nothing', async (_name, body) => {
      const before = await countRows(t, 'invoices');
      const res = await post(t, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'partial_update_not_supported' });
      expect(await countRows(t, 'invoices')).toBe(before);
    });

    it('records actor_login as created_by_login and last_modified_by_login', async () => {
      const body = await createOk(t, { invoice: simpleDoc('a1'), actor_login: '  ivan.petrov  ' });
      expect(body.metadata.created_by_login).toBe('ivan.petrov');
      expect(body.metadata.last_modified_by_login).toBe('ivan.petrov');
      const read = (await get(t, body.public_id)).json();
      expect(read.metadata).toMatchObject({ created_by_login: 'ivan.petrov', last_modified_by_login: 'ivan.petrov' });
    });

    it('without actor_login records the name of the API key, as the metadata description says', async () => {
      const body = await createOk(t, { invoice: simpleDoc('a2') }, { 'x-api-key': ACME_KEY_2 });
      expect(body.metadata).toMatchObject({ created_by_login: 'crm', last_modified_by_login: 'crm', api_key_id: 102, api_key_name: 'crm' });
    });
  });

  describe('the response', () => {
    let body: Record<string, any>;
    let etag: string | undefined;
    beforeAll(async () => {
      const doc = {
        ...referenceDoc(),
        buyer_edo_id: '2BM-7736207543-773601001',
        information_system: '1C:ERP',
        api_recipients: [
          { email: 'Anna@Buyer.example', name: 'Анна', position: 'Бухгалтер' },
          { email: 'boss@buyer.example', name: 'Борис' },
          { email: 'anna@buyer.EXAMPLE', name: 'Анна (дубль)' },
        ],
      };
      const res = await post(t, { invoice: doc, actor_login: 'erp-robot' }, { host: 'erp.client.example' });
      expect(res.statusCode).toBe(200);
      body = res.json();
      etag = res.headers.etag as string | undefined;
    });

    it('identifies the document: public_id, document_public_id, document_kind and the document summary', () => {
      const id = body.public_id as string;
      expect(id).toMatch(/^[A-Za-z0-9_-]{22,64}$/);
      expect(body.ok).toBe(true);
      expect(body.document_public_id).toBe(id);
      expect(body.document_kind).toBe('invoice');
      expect(body).not.toHaveProperty('demo_mode');
      expect(body.document).toEqual({
        public_id: id,
        document_public_id: id,
        document_kind: 'invoice',
        kind_version: '1',
        document_title: 'Счёт № 15 от 02.03.2026',
        package_public_id: expect.stringMatching(BASE64URL_TOKEN),
        legacy_invoice_public_id: id,
        kind_ordinal: 1,
        sort_order: 0,
        title_is_custom: false,
      });
      expect(body.document.package_public_id).not.toBe(id);
      expect(body.invoice.public_id).toBe(id);
    });

    it('builds every URL on the configured bases', () => {
      const buyer = tokenOf(body.invoice_url, SHARE);
      expect(body.invoice_url).toBe(`${SHARE}/${buyer}`);
      expect(body.document_url).toBe(`${SHARE}/${buyer}/document.pdf`);
      expect(body.portal_view_url).toMatch(new RegExp(`^${PORTAL}/view/[A-Za-z0-9_.-]+$`));
      expect(body.portal_document_view_url).toMatch(new RegExp(`^${PORTAL}/document/view/[A-Za-z0-9_.-]+$`));
      expect(body.portal_edit_url).toMatch(new RegExp(`^${PORTAL}/edit/[A-Za-z0-9_.-]+$`));
      expect(body.portal_document_edit_url).toMatch(new RegExp(`^${PORTAL}/document/edit/[A-Za-z0-9_.-]+$`));
      expect(body.portal_view_url.split('/').at(-1)).not.toBe(body.portal_edit_url.split('/').at(-1));
      expect(body.metadata.links).toMatchObject({
        share_url: body.invoice_url,
        document_url: body.document_url,
        portal_view_url: body.portal_view_url,
        portal_document_view_url: body.portal_document_view_url,
        portal_edit_url: body.portal_edit_url,
        portal_document_edit_url: body.portal_document_edit_url,
        qr_url: `${SHARE}/${buyer}/qr.png`,
        api_url: `${PUBLIC}/api/v1/invoices/${body.public_id}`,
      });
      expect(body.qr.url).toBe(`${SHARE}/${buyer}/qr.png`);
    });

    it('gives the buyer, the colleague and each deduplicated recipient an own random token', () => {
      const links = body.share_links;
      expect(links.buyer_url).toBe(body.invoice_url);
      expect(links.buyer_document_url).toBe(body.document_url);
      expect(links.colleague_document_url).toBe(`${links.colleague_url}/document.pdf`);
      // Anna appears twice with the address in another case: one link, the first occurrence wins.
      expect(links.recipients.map((r: { email: string }) => r.email)).toEqual(['Anna@Buyer.example', 'boss@buyer.example']);
      expect(links.recipients[0]).toMatchObject({ name: 'Анна', position: 'Бухгалтер', contact_id: null });
      expect(links.recipients[1]).toMatchObject({ name: 'Борис', position: '' });
      const tokens = [links.buyer_url, links.colleague_url, ...links.recipients.map((r: { url: string }) => r.url)].map((u: string) => tokenOf(u, SHARE));
      expect(tokens).toHaveLength(4);
      expect(new Set(tokens).size).toBe(4);
      for (const token of tokens) expect(token).toMatch(BASE64URL_TOKEN);
      for (const r of links.recipients) expect(r.document_url).toBe(`${r.url}/document.pdf`);
    });

    it('fills the metadata', () => {
      const m = body.metadata;
      expect(m).toMatchObject({
        public_id: body.public_id,
        document_public_id: body.public_id,
        document_kind: 'invoice',
        kind_version: '1',
        document_title: 'Счёт № 15 от 02.03.2026',
        title_is_custom: false,
        package_public_id: body.document.package_public_id,
        legacy_invoice_public_id: body.public_id,
        kind_ordinal: 1,
        sort_order: 0,
        api_key_id: 101,
        api_key_name: 'erp',
        api_request_host: 'erp.client.example',
        seller_edo_id: '2BM-7707083893-2012052808301120',
        buyer_edo_id: '2BM-7736207543-773601001',
        information_system: '1C:ERP',
        editor_mode: 'api',
        source_type: 'api',
        public_share_enabled: true,
        created_by_login: 'erp-robot',
        last_modified_by_login: 'erp-robot',
        revision: 1,
      });
      for (const key of ['created_at', 'last_modified_at', 'api_created_at']) {
        expect(Date.parse(m[key])).toBeGreaterThan(Date.now() - 60_000);
        expect(m[key]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      }
      expect(m.status).toEqual(body.status);
      expect(m.validation).toEqual(body.validation);
      expect(m.notifications).toEqual(body.notifications);
      expect(m.api_recipients).toEqual(
        body.share_links.recipients.map((r: Record<string, unknown>) => ({
          email: r.email,
          name: r.name,
          position: r.position,
          buyer_invoice_url: r.url,
          buyer_document_url: r.document_url,
          contact_id: null,
        })),
      );
    });

    it('labels the statuses and reports the share gate, the API call and an empty validation', () => {
      expect(body.status).toEqual({
        seller_status: 'issued',
        seller_status_label: 'Выставлен',
        buyer_status: 'not_sent',
        buyer_status_label: 'Не отправлен',
        service_status: 'active',
        service_status_label: 'Активен',
        service_status_reason: '',
      });
      const kind = { document_public_id: body.public_id, document_kind: 'invoice' };
      expect(body.share_gate).toEqual({ ...kind, available: true, public_share_enabled: true, external_share_allowed: true, reason: '' });
      expect(body.api).toMatchObject({ ...kind, key_id: 101, key_name: 'erp', request_host: 'erp.client.example', revision: 1 });
      expect(body.api.etag).toBe(`"${body.public_id}.1"`);
      expect(etag).toBe(body.api.etag);
      expect(body.api.request_id).toEqual(expect.any(String));
      expect(body.validation).toEqual({ valid: true, errors: [], warnings: [] });
      expect(body.notifications).toMatchObject({ ...kind, planned_count: 0, sent_count: 0, failed_count: 0, sent_to: [], failed: [] });
      expect(body.notifications.blocked_by_service_gate).toBe(false);
    });

    it('computes the totals of the domain reference vector', () => {
      expect(body.totals).toMatchObject({
        document_public_id: body.public_id,
        document_kind: 'invoice',
        subtotal: 16499.99,
        vat_total: 3290,
        total: 19789.99,
        currency: 'RUB',
        prices_include_vat: false,
        items_count: 4,
        total_minor_units: '1978999',
        amount_in_words: 'Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек',
      });
      expect(body.totals.lines.map((l: { vat: number }) => l.vat)).toEqual([990, 2200, 100, 0]);
      expect(body.totals.lines.map((l: { amount: number }) => l.amount)).toEqual([4500, 9999.99, 1000, 1000]);
    });

    it('builds the GOST R 56042 payment QR payload from the filled-in seller requisites', () => {
      expect(body.qr).toMatchObject({ document_public_id: body.public_id, document_kind: 'invoice', enabled: true, reason: '' });
      expect(body.qr.payload).toBe(REFERENCE_QR);
    });

    it('stores the document with the defaults and the seller requisites filled in', () => {
      expect(body.invoice.seller).toEqual({
        name: 'ООО «Ромашка»',
        inn: '7707083893',
        kpp: '773601001',
        email: 'billing@romashka.example',
        address: 'Москва',
        bank_name: 'ПАО Сбербанк',
        bik: '044525225',
        account: '40702810938000000001',
        corr_account: '30101810400000000225',
      });
      expect(body.invoice.items[1]).toMatchObject({ unit: 'шт', vat_pct: 22 });
      expect(body.invoice.items[3]).toMatchObject({ unit: 'шт', vat_pct: null });
      expect(body.invoice).toMatchObject({ seller_status: 'issued', invoice_direction: 'outgoing', public_share_enabled: true, show_payment_qr: true });
    });

    it('answers GET with the same document, links and ETag', async () => {
      const res = await get(t, body.public_id);
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe(etag);
      const read = res.json();
      for (const key of ['invoice_url', 'document_url', 'share_links', 'status', 'validation', 'invoice', 'totals', 'qr', 'document']) {
        expect(read[key], key).toEqual(body[key]);
      }
    });
  });

  describe('totals in decimal arithmetic', () => {
    it('extracts VAT from prices that include it: 1000.00 @22 → 180.33', async () => {
      const body = await createOk(t, simpleDoc('v1', { prices_include_vat: true, items: [{ name: 'A', qty: 1, price: 1000, vat_pct: 22 }] }));
      expect(body.totals).toMatchObject({ subtotal: 819.67, vat_total: 180.33, total: 1000, prices_include_vat: true });
    });

    it('rounds half-up, not to even: 1.75 @22 → 0.39', async () => {
      const body = await createOk(t, simpleDoc('v2', { items: [{ name: 'A', qty: 1, price: 1.75, vat_pct: 22 }] }));
      expect(body.totals).toMatchObject({ subtotal: 1.75, vat_total: 0.39, total: 2.14 });
    });

    it('rounds each line, then sums: 3 × 0.10 @22 is 3 × 0.02', async () => {
      const items = [1, 2, 3].map((i) => ({ name: `L${i}`, qty: 1, price: 0.1, vat_pct: 22 }));
      const body = await createOk(t, simpleDoc('v3', { items }));
      expect(body.totals).toMatchObject({ subtotal: 0.3, vat_total: 0.06, total: 0.36 });
    });
  });

  describe('the payment QR', () => {
    it('is disabled for a USD document with the reason currency_not_rub', async () => {
      const body = await createOk(t, { ...referenceDoc(), currency: 'USD' });
      expect(body.qr).toMatchObject({ enabled: false, reason: 'currency_not_rub', payload: '', url: '' });
      expect(body.totals.currency).toBe('USD');
      expect(body.totals.amount_in_words).toMatch(/доллар/);
    });

    it('is disabled when the document says so', async () => {
      const body = await createOk(t, { ...referenceDoc(), show_payment_qr: false });
      expect(body.qr).toMatchObject({ enabled: false, reason: 'disabled_by_document', payload: '' });
    });

    it('says "НДС не облагается" when nothing carries VAT', async () => {
      const body = await createOk(t, simpleDoc('q3', { items: [{ name: 'A', qty: 2, price: 50 }] }));
      expect(body.qr.payload).toMatch(/\|Sum=10000\|Purpose=Оплата по счёту № q3 от 02\.03\.2026, НДС не облагается$/);
    });
  });

  it('plans no e-mail when none is asked for', async () => {
    const body = await createOk(t, { invoice: simpleDoc('n1') });
    expect(body.notifications).toMatchObject({ requested: false, planned_count: 0, sent_count: 0, failed_count: 0 });
  });

  it('refuses a write with the key only in the query string: 401 api_key_missing', async () => {
    const res = await t.call({ method: 'POST', url: `/api/v1/invoices?api_key=${ACME['x-api-key']}`, payload: simpleDoc('k1') });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ ok: false, error: 'unauthorized', code: 'api_key_missing' });
  });
});
