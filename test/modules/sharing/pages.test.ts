import { describe, expect, it } from 'vitest';
import { toPrintModel, type InvoicePrintModel } from '../../../src/modules/invoices/read/print-model.js';
import {
  PAGE_ASSETS,
  STATIC_ASSETS,
  portalViewInput,
  renderNotFoundPage,
  renderPortalEditPage,
  renderPortalViewPage,
  renderShareDisabledPage,
  renderSharePage,
} from '../../../src/modules/sharing/pages/index.js';
import { attributes, controls, responseFor, sampleDocument, sampleResponse } from './page-fixtures.js';

const model = (): InvoicePrintModel => toPrintModel(sampleResponse());
const URLS = { pdfUrl: 'https://share.example/s/tok/document.pdf', qrImageUrl: 'https://share.example/s/tok/qr.png', paymentReportUrl: 'https://share.example/s/tok/paid' };

function withStatus(seller: string, buyer = 'not_sent'): InvoicePrintModel {
  const m = model();
  return { ...m, status: { ...m.status, seller, buyer } };
}

function editPage(extra: Partial<Parameters<typeof renderPortalEditPage>[0]> = {}): string {
  const r = sampleResponse();
  return renderPortalEditPage({ title: 'Счёт № 15', document: r.invoice, csrfToken: 'csrf-token-1', actionUrl: '/p/edit/t', cancelUrl: '/p/view/t', ...extra });
}

/** Structure every page shares: Russian, landmarks, a heading, static assets only. */
function expectAccessibleShell(page: string): void {
  expect(page.startsWith('<!doctype html>\n<html lang="ru">')).toBe(true);
  expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  expect(page).toContain('<meta name="referrer" content="no-referrer">');
  expect(page).toMatch(/<header class="site-header">[\s\S]*<main id="main"[\s\S]*<\/main>\s*<footer/);
  expect(page.match(/<h1\b/g)).toHaveLength(1);
  expect(page).toContain(`<link rel="stylesheet" href="${PAGE_ASSETS.stylesheet.path}">`);
  expect(page).not.toMatch(/<script>|<style|\sstyle=/);
  // Every control has a label, ids are unique, headers of tables have a scope.
  const ids = [...page.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
  expect(new Set(ids).size).toBe(ids.length);
  for (const c of controls(page).filter((c) => c.type !== 'hidden')) {
    expect(c.id, `${c.tag} ${c.name}`).toBeDefined();
    expect(page, `label for ${c.id}`).toContain(`<label for="${c.id}"`);
  }
  for (const m of page.matchAll(/<th\b[^>]*>/g)) expect(attributes(m[0]).scope).toMatch(/^(col|row)$/);
}

describe('share page', () => {
  it('shows the invoice: parties with requisites, items, VAT, totals, words, QR, PDF and "Я оплатил"', () => {
    const page = renderSharePage({ model: model(), ...URLS });
    expectAccessibleShell(page);
    for (const text of [
      '<h1>Счёт на оплату № 15 от 2 марта 2026 г.</h1>',
      'ООО «Три кита»',
      '<dt>ИНН</dt><dd>7701234560</dd>',
      '<dt>БИК</dt><dd>044525225</dd>',
      '<dt>Р/с</dt><dd>40702810138250123017</dd>',
      '<dt>ИНН</dt><dd>7736207543</dd>',
      '<th scope="row">Лицензия на программное обеспечение</th>',
      '<td class="num">9 999,99</td>',
      '<td>Без НДС</td>',
      '<dt>Сумма НДС 22%:</dt><dd>3 190,00</dd>',
      '19 789,99 руб.',
      'Девятнадцать тысяч семьсот восемьдесят девять рублей 99 копеек',
      `<img src="${URLS.qrImageUrl}"`,
      `<a class="button button--secondary" href="${URLS.pdfUrl}" download>Скачать PDF</a>`,
      `<form method="post" action="${URLS.paymentReportUrl}">`,
      '<button type="submit">Я оплатил</button>',
      'Статус счёта: Выставлен',
    ]) {
      expect(page).toContain(text);
    }
  });

  it('confirms a reported payment instead of offering the button again', () => {
    for (const page of [
      renderSharePage({ model: model(), ...URLS, justReported: true }),
      renderSharePage({ model: withStatus('issued', 'payment_reported'), ...URLS }),
    ]) {
      expect(page).not.toContain('Я оплатил</button>');
      expect(page).toContain('Продавец получил сообщение об оплате');
      expect(page).toContain(`<img src="${URLS.qrImageUrl}"`);
    }
  });

  it('offers neither QR nor button on a paid or cancelled invoice', () => {
    const paid = renderSharePage({ model: withStatus('paid'), ...URLS });
    expect(paid).toContain('Счёт оплачен.');
    const cancelled = renderSharePage({ model: withStatus('cancelled'), ...URLS });
    expect(cancelled).toContain('Счёт отменён продавцом');
    for (const page of [paid, cancelled]) {
      expect(page).not.toContain('<img');
      expect(page).not.toContain('<form');
      expect(page).toContain('Скачать PDF');
    }
  });

  it('hides the QR when the API disabled it and the button when no report URL is given', () => {
    const usd = toPrintModel(responseFor({ ...sampleDocument(), currency: 'USD' }));
    const page = renderSharePage({ model: usd, ...URLS, paymentReportUrl: null });
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<form');
    expect(page).toContain('19 789,99 долл. США');
  });
});

describe('error pages', () => {
  it('404 and 403 say what happened and show no document data', () => {
    const notFound = renderNotFoundPage();
    const disabled = renderShareDisabledPage();
    expectAccessibleShell(notFound);
    expectAccessibleShell(disabled);
    expect(notFound).toContain('<h1 id="message-title">Страница не найдена</h1>');
    expect(disabled).toContain('<h1 id="message-title">Доступ к счёту ограничен</h1>');
    expect(disabled).toContain('тарифе продавца');
  });
});

describe('portal view page', () => {
  it('shows the invoice with every status, links, metadata and warnings', () => {
    const r = sampleResponse();
    const input = portalViewInput(
      { ...r, validation: { valid: true, errors: [], warnings: [{ field: 'buyer.inn', code: 'inn_checksum', message: 'контрольное число не сходится' }] } },
      { editUrl: r.portal_edit_url },
    );
    const page = renderPortalViewPage({ ...input, saved: true });
    expectAccessibleShell(page);
    for (const text of [
      'Покупатель: Не отправлен',
      'Сервис: Активен',
      'Изменения сохранены.',
      'Покупатель — ИНН: ИНН не проходит проверку контрольного числа',
      `href="${r.share_links.buyer_url}"`,
      `href="${r.share_links.colleague_url}"`,
      `<a class="button" href="${r.portal_edit_url}">Редактировать</a>`,
      `href="${r.share_links.colleague_document_url}" download>Скачать PDF`,
      `<img src="${r.share_links.colleague_url}/qr.png"`,
      '<dt>Ревизия</dt><dd>1</dd>',
      '<dt>Создан</dt><dd>02.03.2026 09:00 UTC</dd>',
    ]) {
      expect(page).toContain(text);
    }
  });

  it('explains why share links do not open', () => {
    const r = sampleResponse();
    const input = portalViewInput({ ...r, share_gate: { ...r.share_gate, available: false, reason: 'tariff_external_share_disabled' } }, { editUrl: null });
    const page = renderPortalViewPage(input);
    expect(page).toContain('тариф команды не разрешает внешние ссылки');
    expect(page).not.toContain('Редактировать');
  });
});

describe('portal edit page', () => {
  it('is a labelled form for every field with a CSRF token and the edit script', () => {
    const page = editPage({ etag: '"inv.1"' });
    expectAccessibleShell(page);
    expect(page).toContain('<input type="hidden" name="_csrf" value="csrf-token-1">');
    expect(page).toContain('<input type="hidden" name="_etag" value="&quot;inv.1&quot;">');
    expect(page).toContain(`<script src="${PAGE_ASSETS.editScript.path}" defer></script>`);
    const names = new Set(controls(page).map((c) => c.name));
    for (const name of [
      'number', 'date', 'currency', 'invoice_direction', 'due_date', 'seller_status',
      'seller.name', 'seller.inn', 'seller.kpp', 'seller.address', 'seller.email', 'seller.bank_name', 'seller.bik', 'seller.account', 'seller.corr_account',
      'buyer.name', 'buyer.inn', 'buyer.kpp', 'buyer.address', 'buyer.email',
      'items[0].name', 'items[0].qty', 'items[0].unit', 'items[0].price', 'items[0].vat_pct', 'items[0]._remove',
      'items[6].name', // 4 items + 3 spare rows
      'prices_include_vat', 'public_share_enabled', 'show_payment_qr',
      'signers[0].role', 'signers[0].name', 'signers[0].position',
      'api_recipients[0].email', 'api_recipients[0].name', 'api_recipients[0].position',
      'purpose', 'comment', 'buyer_edo_id',
    ]) {
      expect(names, name).toContain(name);
    }
    expect(names).not.toContain('items[7].name');
    // The row template for the script, with placeholders in names, ids and labels.
    expect(page).toMatch(
      /<template data-row-template><tr>[\s\S]*<label for="f-items-__i__-price" class="visually-hidden row-label">Позиция __n__ — Цена<\/label><input id="f-items-__i__-price" name="items\[__i__\]\.price"/,
    );
    expect(page).toContain('data-repeat="items" data-next-index="7" data-max="1000"');
  });

  it('shows each error next to its field and in a summary linking to it', () => {
    const page = editPage({ errors: { 'items[1].price': 'должно быть не меньше 0', 'buyer.name': 'обязательное поле', items: 'слишком много позиций' }, formError: 'Документ изменился' });
    expect(page).toMatch(/<div class="notice notice--error" role="alert" id="error-summary" tabindex="-1">/);
    expect(page).toContain('<p>Документ изменился</p>');
    expect(page).toContain('<a href="#f-items-1-price">Позиция 2 — Цена: должно быть не меньше 0</a>');
    expect(page).toContain('<a href="#f-buyer-name">Покупатель — Наименование: обязательное поле</a>');
    expect(page).toContain('<a href="#items-group">Позиции: слишком много позиций</a>');
    expect(page).toMatch(/<input id="f-items-1-price" name="items\[1\]\.price" type="text" value="9999,99" aria-invalid="true" aria-describedby="f-items-1-price-error"[^>]*><p class="error" id="f-items-1-price-error">должно быть не меньше 0<\/p>/);
    expect(page).toContain('<p class="error" id="items-error">слишком много позиций</p>');
  });

  it('offers only the seller status moves allowed from the stored one', () => {
    const options = (page: string) => [...(/<select id="f-seller_status"[^>]*>([\s\S]*?)<\/select>/.exec(page)?.[1] ?? '').matchAll(/value="(\w+)"/g)].map((m) => m[1]);
    expect(options(editPage({ currentSellerStatus: 'draft' }))).toEqual(['draft', 'issued', 'cancelled']);
    expect(options(editPage({ currentSellerStatus: 'issued' }))).toEqual(['issued', 'paid', 'cancelled']);
  });

  it('keeps a stored VAT rate outside the list selectable', () => {
    const r = sampleResponse();
    const doc = { ...r.invoice, items: [{ name: 'A', qty: 1, price: 1, vat_pct: 18 }] };
    expect(editPage({ document: doc })).toMatch(/<option value="18" selected>18<\/option>/);
  });
});

describe('static assets', () => {
  it('are content-addressed and free of inline code', () => {
    expect(STATIC_ASSETS).toHaveLength(2);
    expect(PAGE_ASSETS.stylesheet.path).toMatch(/^\/assets\/pages\.[0-9a-f]{10}\.css$/);
    expect(PAGE_ASSETS.editScript.path).toMatch(/^\/assets\/invoice-edit\.[0-9a-f]{10}\.js$/);
    expect(PAGE_ASSETS.stylesheet.body).toContain(':focus-visible');
    expect(PAGE_ASSETS.stylesheet.body).toContain('@media (max-width:720px)');
    expect(PAGE_ASSETS.editScript.body).not.toMatch(/eval\(|innerHTML|new Function/);
  });
});
