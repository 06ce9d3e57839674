/**
 * The portal's edit page over HTTP: the form a browser would post (every field as the page
 * renders it), saved as a full update through the API's service and validation, with CSRF and
 * If-Match protection, errors next to their fields, and the change visible through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../../helpers/app.js';
import { NUMBER_FORMAT_MESSAGE } from '../../../src/modules/sharing/pages/index.js';
import { ACME, buildSharingApp, createDocument, documentWithRecipients, getDocument, inputValue, request, urlencoded } from './link-helpers.js';
import { formFields, XSS_ATTR, XSS_ATTR_ESCAPED, XSS_SCRIPT, XSS_SCRIPT_ESCAPED } from './page-fixtures.js';

let t: TestApp;

beforeAll(async () => {
  t = await buildSharingApp();
});

afterAll(async () => {
  await t?.close();
});

/** The edit page's form as a browser would post it, with `changes` applied. */
async function editForm(editUrl: string, changes: Record<string, string | string[]> = {}): Promise<Record<string, string | string[]>> {
  const page = await request(t, editUrl);
  expect(page.statusCode).toBe(200);
  return { ...formFields(page.body), ...changes };
}

function post(url: string, fields: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
  return request(t, url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: urlencoded(fields) });
}

describe('the edit page', () => {
  it('is a form for every field of the document, with the CSRF token and the revision', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const page = await request(t, doc.portal_edit_url);
    const fields = formFields(page.body);
    for (const name of [
      'number',
      'date',
      'currency',
      'invoice_direction',
      'due_date',
      'seller_status',
      'seller.name',
      'seller.inn',
      'seller.bank_name',
      'seller.account',
      'buyer.name',
      'buyer.inn',
      'buyer.kpp',
      'buyer.address',
      'buyer.email',
      'items[0].name',
      'items[3].price',
      'items[0].vat_pct',
      'api_recipients[1].email',
      'signers[0].name',
      'purpose',
      'comment',
      'buyer_edo_id',
      '_csrf',
      '_etag',
    ]) {
      expect(Object.keys(fields), name).toContain(name);
    }
    expect(fields['items[1].price']).toBe('9999,99');
    expect(fields['buyer.name']).toBe('ООО «Покупатель»');
    expect(fields._etag).toBe(`"${doc.public_id}.1"`);
    expect(fields._csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.body).toMatch(/<form id="edit-form" method="post" action="\/portal\/edit\/[^"]+"/);
  });

  it('saves a full update (editor_mode portal) and the change reads back through the API', async () => {
    const doc = await createDocument(t, documentWithRecipients({ manager: { name: 'Иван Петров' }, x_custom: { kept: true } }));
    const fields = await editForm(doc.portal_edit_url, {
      'buyer.name': 'ООО «Новый покупатель»',
      'items[0].qty': '4',
      'items[1].price': '10 000,50',
      'items[4].name': 'Новая позиция',
      'items[4].qty': '2',
      'items[4].price': '250',
      'items[4].vat_pct': '',
      'api_recipients[0]._remove': '1',
      comment: 'Изменено в портале',
    });
    const res = await post(doc.portal_edit_url, fields);
    expect(res.statusCode, res.body).toBe(303);
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/portal\/view\/[^?]+\?saved=1$/);

    const view = await request(t, new URL(location, doc.portal_edit_url).toString());
    expect(view.statusCode).toBe(200);
    expect(view.body).toContain('Изменения сохранены.');
    expect(view.body).toContain('ООО «Новый покупатель»');

    const now = await getDocument(t, doc.public_id);
    expect(now.invoice.buyer.name).toBe('ООО «Новый покупатель»');
    expect(now.invoice.items).toHaveLength(5);
    expect(now.invoice.items[0].qty).toBe(4);
    expect(now.invoice.items[1].price).toBe(10000.5);
    expect(now.invoice.items[4]).toMatchObject({ name: 'Новая позиция', qty: 2, price: 250, vat_pct: null, unit: 'шт' });
    expect(now.invoice.comment).toBe('Изменено в портале');
    // Keys the form does not show survive the edit.
    expect(now.invoice.manager).toEqual({ name: 'Иван Петров' });
    expect(now.invoice.x_custom).toEqual({ kept: true });
    expect(now.invoice.seller.account).toBe('40702810938000000001');
    expect(now.metadata).toMatchObject({
      editor_mode: 'portal',
      source_type: 'api',
      last_modified_by_login: 'portal',
      created_by_login: 'erp',
      api_key_name: 'erp',
      api_key_id: 101,
      revision: 2,
    });
    expect(now.metadata.api_updated_at).toBeUndefined();
    expect(now.metadata.last_modified_at >= doc.metadata.last_modified_at).toBe(true);
    // 4 × 1500 + 10000.50 at 22 %, 2.5 × 400 at 10 %, 1000 and 2 × 250 without VAT.
    expect(now.totals).toMatchObject({ subtotal: 18500.5, vat_total: 3620.11, total: 22120.61 });
    // The removed recipient lost their link; the other kept theirs.
    expect(now.share_links.recipients.map((r: { email: string }) => r.email)).toEqual(['director@example.com']);
    expect(now.share_links.recipients[0].url).toBe(doc.share_links.recipients[1].url);
    expect((await request(t, doc.share_links.recipients[0].url)).statusCode).toBe(404);

    const revisions = await t.call({ method: 'GET', url: `/api/v1/invoices/${doc.public_id}/revisions`, headers: ACME });
    expect(revisions.json().revisions[0]).toMatchObject({ revision: 1, editor_mode: 'api' });

    // The list sees the edit as a modification.
    const list = await t.call({
      method: 'GET',
      url: `/api/v1/invoices?updated_since=${encodeURIComponent(now.metadata.last_modified_at)}`,
      headers: ACME,
    });
    expect(list.json().items.map((i: { public_id: string }) => i.public_id)).toContain(doc.public_id);
    expect(list.json().items.find((i: { public_id: string }) => i.public_id === doc.public_id).editor_mode).toBe('portal');
  });

  it('saves through the document edit URL too, back to the document view', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const res = await post(doc.portal_document_edit_url, await editForm(doc.portal_document_edit_url, { number: '16' }));
    expect(res.statusCode).toBe(303);
    expect(String(res.headers.location)).toMatch(/^\/portal\/document\/view\/[^?]+\?saved=1$/);
    expect((await getDocument(t, doc.public_id)).invoice.number).toBe('16');
  });

  it('shows the errors next to their fields and keeps what was typed; nothing is saved', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const fields = await editForm(doc.portal_edit_url, {
      number: '',
      'items[0].qty': 'три',
      'items[1].price': '-5',
      date: '2026-02-30',
      comment: 'https://evil.example/pay',
    });
    const res = await post(doc.portal_edit_url, fields);
    expect(res.statusCode).toBe(400);
    expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
    const page = res.body;
    expect(page).toContain('Документ не сохранён');
    expect(page).toContain(`<p class="error" id="f-items-0-qty-error">${NUMBER_FORMAT_MESSAGE}</p>`);
    expect(page).toMatch(/<input id="f-items-0-qty" name="items\[0\]\.qty" type="text" value="три" aria-invalid="true"/);
    expect(page).toContain('<p class="error" id="f-number-error">Заполните это поле</p>');
    expect(page).toContain('<p class="error" id="f-items-1-price-error">Значение должно быть не меньше 0</p>');
    expect(page).toContain('<p class="error" id="f-date-error">Такой даты нет в календаре</p>');
    // A summary links to each field.
    expect(page).toContain('<a href="#f-items-0-qty">Позиция 1 — Количество: Введите число, например 1 500,50</a>');
    expect(inputValue(page, '_etag')).toBe(`&quot;${doc.public_id}.1&quot;`);
    const now = await getDocument(t, doc.public_id);
    expect(now.metadata.revision).toBe(1);
    expect(now.invoice.number).toBe('15');
  });

  it('escapes hostile values when it shows the form again', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const hostile = `${XSS_SCRIPT}${XSS_ATTR}`;
    const res = await post(
      doc.portal_edit_url,
      await editForm(doc.portal_edit_url, { number: '', 'buyer.name': hostile, comment: hostile, 'items[0].qty': hostile, 'items[0].unit': XSS_SCRIPT }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('<script>alert');
    expect(res.body).not.toContain('<img src=x');
    expect(res.body).toContain(`value="${XSS_SCRIPT_ESCAPED}${XSS_ATTR_ESCAPED}"`);
  });

  it('refuses a comment that is a URL (the API rule) next to the field', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const res = await post(doc.portal_edit_url, await editForm(doc.portal_edit_url, { comment: 'https://evil.example/pay' }));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('<p class="error" id="f-comment-error">Ссылки и изображения в полях документа не допускаются</p>');
  });

  it('refuses a post without the right CSRF token (403), saving nothing', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const other = await createDocument(t, documentWithRecipients());
    const fields = await editForm(doc.portal_edit_url, { number: '99' });
    const otherCsrf = (await editForm(other.portal_edit_url))._csrf as string;
    for (const csrf of [undefined, '', 'x'.repeat(43), otherCsrf]) {
      const { _csrf: _, ...rest } = fields;
      const res = await post(doc.portal_edit_url, csrf === undefined ? rest : { ...rest, _csrf: csrf });
      expect(res.statusCode, String(csrf)).toBe(403);
      expect(res.body).toContain('Форма устарела');
    }
    // A JSON body is no form at all.
    const json = await request(t, doc.portal_edit_url, { method: 'POST', payload: { number: '99' } as never });
    expect(json.statusCode).toBe(403);
    expect((await getDocument(t, doc.public_id)).invoice.number).toBe('15');
  });

  it('answers a stale _etag with the conflict message over the current revision', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const stale = await editForm(doc.portal_edit_url, { number: 'из портала' });
    const put = await t.call({
      method: 'PUT',
      url: `/api/v1/invoices/${doc.public_id}`,
      headers: ACME,
      payload: { invoice: { ...documentWithRecipients(), comment: 'из API' } } as never,
    });
    expect(put.statusCode).toBe(200);

    const res = await post(doc.portal_edit_url, stale);
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('Пока вы редактировали, документ изменили в другом месте.');
    expect(inputValue(res.body, 'number')).toBe('из портала');
    expect(inputValue(res.body, '_etag')).toBe(`&quot;${doc.public_id}.2&quot;`);
    expect((await getDocument(t, doc.public_id)).invoice.number).toBe('15');

    // Saving the re-shown form replaces the other change, knowingly.
    const again = await post(doc.portal_edit_url, formFields(res.body));
    expect(again.statusCode).toBe(303);
    const now = await getDocument(t, doc.public_id);
    expect(now.invoice.number).toBe('из портала');
    expect(now.metadata.revision).toBe(3);
  });

  it('refuses edits of a paid document and status moves the rules forbid', async () => {
    const paid = await createDocument(t, documentWithRecipients({ seller_status: 'paid' }));
    // The view page reached with the edit link offers no edit button for a locked document.
    expect((await request(t, paid.portal_edit_url.replace('/edit/', '/view/'))).body).not.toContain('Редактировать');
    const locked = await post(paid.portal_edit_url, await editForm(paid.portal_edit_url, { number: '99' }));
    expect(locked.statusCode).toBe(409);
    expect(locked.body).toContain('Счёт оплачен или отменён, изменить его нельзя.');

    const draft = await createDocument(t, documentWithRecipients({ seller_status: 'draft' }));
    const form = await editForm(draft.portal_edit_url);
    const move = await post(draft.portal_edit_url, { ...form, seller_status: 'paid' });
    expect(move.statusCode).toBe(409);
    expect(move.body).toContain('<p class="error" id="f-seller_status-error">Из текущего статуса счёта в выбранный перейти нельзя</p>');
  });

  it('shows a seller INN outside the team next to the field', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const res = await post(doc.portal_edit_url, await editForm(doc.portal_edit_url, { 'seller.inn': '7830002293' }));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('<p class="error" id="f-seller-inn-error">ИНН не совпадает ни с одной действующей организацией команды</p>');
  });

  it('refuses a view link on the edit form post (403)', async () => {
    const doc = await createDocument(t, documentWithRecipients());
    const fields = await editForm(doc.portal_edit_url, { number: '99' });
    const res = await post(doc.portal_view_url.replace('/view/', '/edit/'), fields);
    expect(res.statusCode).toBe(403);
    expect((await getDocument(t, doc.public_id)).invoice.number).toBe('15');
  });

  it('keeps the API refusing form bodies', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/api/v1/invoices',
      headers: { ...ACME, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'number=1',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid_content_type' });
  });

  it('validates the demo sample without storing anything', async () => {
    const demo = await getDocument(t, 'demo-invoice', { 'x-api-key': 'demo-token' });
    const fields = await editForm(demo.portal_edit_url, { 'buyer.name': 'Демо' });
    const ok = await post(demo.portal_edit_url, fields);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('Демо-режим: документ прошёл проверку, но изменения не сохраняются.');
    const bad = await post(demo.portal_edit_url, { ...fields, 'items[0].qty': '0' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="f-items-0-qty-error"');
    expect((await getDocument(t, 'demo-invoice', { 'x-api-key': 'demo-token' })).invoice.buyer.name).toBe('ООО «Три кита»');
  });
});
