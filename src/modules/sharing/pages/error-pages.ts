/**
 * Pages for links that cannot show a document. They say what happened and what to do, and
 * nothing about the document itself: a 404 must not confirm that a token ever existed.
 */
import { html } from './html.js';
import { renderPage } from './layout.js';

export interface MessagePageInput {
  title: string;
  message: string;
  /** Optional second paragraph: what the reader can do. */
  hint?: string;
  assetPrefix?: string;
}

/** A page with a heading and a message: the base of the error pages, usable for others. */
export function renderMessagePage(input: MessagePageInput): string {
  return renderPage({
    title: input.title,
    main: html`<section class="card" aria-labelledby="message-title">
<h1 id="message-title">${input.title}</h1>
<p>${input.message}</p>
${input.hint ? html`<p class="muted">${input.hint}</p>` : null}
</section>`,
    assetPrefix: input.assetPrefix,
  });
}

/** HTTP 404: unknown token, sharing switched off by the document, an expired portal link. */
export function renderNotFoundPage(options: { assetPrefix?: string } = {}): string {
  return renderMessagePage({
    title: 'Страница не найдена',
    message: 'Ссылка недействительна, устарела или счёт больше не опубликован.',
    hint: 'Если вы ждёте счёт, попросите отправителя прислать ссылку ещё раз.',
    assetPrefix: options.assetPrefix,
  });
}

/**
 * HTTP 403 when the seller's tariff forbids external sharing (`share_gate.reason` is
 * `tariff_external_share_disabled`). The document exists, so the page says access is limited,
 * not that nothing is there; it still shows no document data.
 */
export function renderShareDisabledPage(options: { assetPrefix?: string } = {}): string {
  return renderMessagePage({
    title: 'Доступ к счёту ограничен',
    message: 'Просмотр счетов по ссылке недоступен на текущем тарифе продавца.',
    hint: 'Обратитесь к продавцу, чтобы получить счёт другим способом, например по электронной почте в виде PDF.',
    assetPrefix: options.assetPrefix,
  });
}
