/**
 * The parts of an invoice shown on both the share page and the portal view page: status
 * badges, parties with requisites, the items table, totals with the amount in words, and the
 * payment block with the QR. All text comes from the print model, the same one the PDF uses.
 */
import type { InvoicePrintModel, PrintParty, PrintStatus } from '../../invoices/index.js';
import { html, safeUrl, type SafeHtml } from './html.js';

/** Badge modifier from a status value; only known values get a colour, the rest stay neutral. */
function badgeClass(value: string): string {
  return /^[a-z_]+$/.test(value) ? `badge badge--${value}` : 'badge';
}

export function statusBadges(status: PrintStatus, options: { buyer?: boolean; service?: boolean } = {}): SafeHtml {
  const badges = [
    html`<li class="${badgeClass(status.seller)}">Статус счёта: ${status.seller_label}</li>`,
    options.buyer === false ? null : html`<li class="${badgeClass(status.buyer)}">Покупатель: ${status.buyer_label}</li>`,
    options.service === true ? html`<li class="${badgeClass(status.service)}">Сервис: ${status.service_label}</li>` : null,
  ];
  return html`<ul class="badges" aria-label="Статусы">${badges}</ul>`;
}

function requisite(term: string, value: string): SafeHtml | null {
  return value === '' ? null : html`<dt>${term}</dt><dd>${value}</dd>`;
}

function partyDetails(p: PrintParty): SafeHtml[] {
  return [requisite('ИНН', p.inn), requisite('КПП', p.kpp), requisite('Адрес', p.address)].filter((x): x is SafeHtml => x !== null);
}

export function partiesSection(model: InvoicePrintModel): SafeHtml {
  const s = model.seller;
  const bank = [
    requisite('Банк', s.bank_name),
    requisite('БИК', s.bik),
    requisite('Р/с', s.account),
    requisite('К/с', s.corr_account),
  ].filter((x) => x !== null);
  return html`<section class="card" aria-labelledby="parties-title">
<h2 id="parties-title">Стороны</h2>
<div class="parties">
<div>
<h3>Поставщик (Исполнитель)</h3>
<p><strong>${s.name}</strong></p>
<dl class="requisites">${partyDetails(s)}${bank}</dl>
</div>
<div>
<h3>Покупатель (Заказчик)</h3>
<p><strong>${model.buyer.name}</strong></p>
<dl class="requisites">${partyDetails(model.buyer)}</dl>
</div>
</div>
${model.basis ? html`<p><span class="muted">Основание:</span> ${model.basis}</p>` : null}
</section>`;
}

export function itemsSection(model: InvoicePrintModel): SafeHtml {
  const rows = model.items.map(
    (item) => html`<tr>
<td class="num">${item.no}</td>
<th scope="row">${item.name}</th>
<td class="num">${item.qty}</td>
<td>${item.unit}</td>
<td class="num">${item.price}</td>
<td>${item.vat}</td>
<td class="num">${item.amount}</td>
</tr>`,
  );
  return html`<section class="card" aria-labelledby="items-title">
<h2 id="items-title">Товары (работы, услуги)</h2>
<div class="table-scroll" role="region" aria-label="Таблица позиций, прокручивается" tabindex="0">
<table>
<caption class="visually-hidden">Позиции счёта, суммы в валюте ${model.currency}</caption>
<thead><tr>
<th scope="col" class="num">№</th>
<th scope="col">Наименование</th>
<th scope="col" class="num">Кол-во</th>
<th scope="col">Ед.</th>
<th scope="col" class="num">Цена</th>
<th scope="col">НДС</th>
<th scope="col" class="num">Сумма</th>
</tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>
${totalsList(model)}
</section>`;
}

function totalsList(model: InvoicePrintModel): SafeHtml {
  const t = model.totals;
  const vat = t.without_vat
    ? html`<dt>Без налога (НДС)</dt><dd>—</dd>`
    : t.vat_lines.map((line) => html`<dt>${line.label}:</dt><dd>${line.amount}</dd>`);
  return html`<dl class="totals">
<dt>Итого:</dt><dd>${t.items_sum}</dd>
${vat}
<dt class="grand">Всего к оплате:</dt><dd class="grand">${t.total} ${model.currency_short}</dd>
</dl>
<p>${model.summary}</p>
<p class="words">${model.amount_in_words}</p>`;
}

export interface PaymentBlockInput {
  /** The share link's `qr.png` URL; null hides the image (also hidden when the model has no QR). */
  qrImageUrl: string | null;
  /** Extra markup under the text (the "Я оплатил" form on the share page). */
  actions?: SafeHtml | null;
  pdfUrl: string;
}

export function paymentSection(model: InvoicePrintModel, input: PaymentBlockInput): SafeHtml {
  const showQr = model.qr_payload !== null && input.qrImageUrl !== null;
  const due = model.due_date_text ? html`<p>Оплатить до <strong>${model.due_date_text}</strong>.</p>` : null;
  const qr = showQr
    ? html`<figure class="qr">
<img src="${safeUrl(input.qrImageUrl)}" width="192" height="192" alt="QR-код для оплаты: получатель ${model.seller.name}, сумма ${model.totals.total} ${model.currency_short}">
<figcaption class="muted">Отсканируйте в приложении банка</figcaption>
</figure>`
    : null;
  return html`<section class="card" aria-labelledby="pay-title">
<h2 id="pay-title">Оплата</h2>
<div class="pay">
<div>
<p>Сумма к оплате: <strong>${model.totals.total} ${model.currency_short}</strong></p>
${due}
${model.purpose ? html`<p><span class="muted">Назначение платежа:</span> ${model.purpose}</p>` : null}
${model.comment ? html`<p><span class="muted">Комментарий:</span> ${model.comment}</p>` : null}
<div class="actions">
<a class="button button--secondary" href="${safeUrl(input.pdfUrl)}" download>Скачать PDF</a>
${input.actions ?? null}
</div>
</div>
${qr}
</div>
</section>`;
}

/** The signers as text ("Руководитель: Смирнова А. П."), when the document names them. */
export function signersLine(model: InvoicePrintModel): SafeHtml | null {
  const named = model.signers.filter((s) => s.name !== '');
  if (named.length === 0) return null;
  return html`<p class="muted">${named.map((s, i) => html`${i > 0 ? '; ' : ''}${s.label}: ${s.name}${s.position ? html` (${s.position})` : null}`)}</p>`;
}
