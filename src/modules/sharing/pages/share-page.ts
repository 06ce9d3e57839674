/**
 * The buyer's share page: the invoice as a Russian web page with the QR, the PDF link and an
 * "Я оплатил" button. The button is a plain POST form: the share link is a capability (its
 * token is the credential), so no CSRF token is needed, but a POST keeps link previews and
 * prefetchers from reporting a payment by merely opening the URL.
 */
import type { InvoicePrintModel } from '../../invoices/index.js';
import { html, safeUrl, type SafeHtml } from './html.js';
import { itemsSection, partiesSection, paymentSection, signersLine, statusBadges } from './invoice-sections.js';
import { renderPage } from './layout.js';

export interface SharePageInput {
  model: InvoicePrintModel;
  /** The share link's `document.pdf`. */
  pdfUrl: string;
  /** The share link's `qr.png`; null hides the QR (it is hidden anyway when the API disabled it). */
  qrImageUrl: string | null;
  /** Where "Я оплатил" posts; null hides the button (e.g. for the colleague link). */
  paymentReportUrl: string | null;
  /** True right after the report was accepted (the POST redirected back with a flag). */
  justReported?: boolean;
  assetPrefix?: string;
}

/** Why the payment controls are hidden, or null when the buyer may pay and report. */
function paymentState(model: InvoicePrintModel): 'paid' | 'cancelled' | 'reported' | null {
  if (model.status.seller === 'paid') return 'paid';
  if (model.status.seller === 'cancelled') return 'cancelled';
  if (model.status.buyer === 'payment_reported') return 'reported';
  return null;
}

function stateNotice(state: ReturnType<typeof paymentState>, justReported: boolean): SafeHtml | null {
  if (justReported || state === 'reported') {
    return html`<div class="notice notice--ok" role="status"><p>Спасибо! Продавец получил сообщение об оплате и проверит поступление средств.</p></div>`;
  }
  if (state === 'paid') return html`<div class="notice notice--ok" role="status"><p>Счёт оплачен.</p></div>`;
  if (state === 'cancelled') {
    return html`<div class="notice notice--error" role="status"><p>Счёт отменён продавцом, оплачивать его не нужно.</p></div>`;
  }
  return null;
}

/** Renders the share page (HTTP 200). */
export function renderSharePage(input: SharePageInput): string {
  const { model } = input;
  const state = paymentState(model);
  // A paid or cancelled invoice shows no QR: scanning it would pay twice or pay for nothing.
  const payable = state !== 'paid' && state !== 'cancelled';
  const reportButton =
    payable && state !== 'reported' && !input.justReported && input.paymentReportUrl !== null
      ? html`<form method="post" action="${safeUrl(input.paymentReportUrl)}">
<button type="submit">Я оплатил</button>
</form>`
      : null;

  const main = html`<h1>${model.title}</h1>
${statusBadges(model.status, { buyer: false })}
${stateNotice(state, input.justReported === true)}
${paymentSection(model, { qrImageUrl: payable ? input.qrImageUrl : null, pdfUrl: input.pdfUrl, actions: reportButton })}
${partiesSection(model)}
${itemsSection(model)}
${signersLine(model)}`;

  return renderPage({
    title: `${model.title} — ${model.seller.name}`,
    header: model.seller.name === '' ? 'Счёт на оплату' : `Счёт от ${model.seller.name}`,
    main,
    assetPrefix: input.assetPrefix,
  });
}
