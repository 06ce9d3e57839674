/**
 * The page shell every share and portal page uses: `lang="ru"`, landmarks (banner, main,
 * contentinfo), a skip link, and the static stylesheet. Share and portal URLs are capability
 * links, so every page asks not to be indexed and sends no Referer: a token in the address
 * bar must not leak to a site the page links to. The empty `data:` icon keeps browsers from
 * asking the host root for /favicon.ico (allowed by the pages' CSP, `img-src 'self' data:`).
 */
import { PAGE_ASSETS } from './assets.js';
import { html, safeUrl, type SafeHtml } from './html.js';

export interface PageShellInput {
  /** The <title>: plain text. */
  title: string;
  /** The content of <main>. */
  main: SafeHtml;
  /** Line in the page header, plain text (e.g. the seller's name). */
  header?: string;
  /** Root-relative asset paths to load with <script defer>. */
  scripts?: readonly string[];
  /**
   * Prefix for the asset paths when the pages are not served from the origin root (e.g.
   * `https://share.example`); empty by default, so links stay same-origin.
   */
  assetPrefix?: string;
}

const FOOTER = 'Документ сформирован сервисом выставления счетов. Ссылка на эту страницу персональная: не пересылайте её посторонним.';

/** Renders a complete HTML document. */
export function renderPage(input: PageShellInput): string {
  const prefix = input.assetPrefix ?? '';
  const stylesheet = safeUrl(prefix + PAGE_ASSETS.stylesheet.path);
  const scripts = (input.scripts ?? []).map((path) => html`<script src="${safeUrl(prefix + path)}" defer></script>`);
  return html`<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light">
<title>${input.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${stylesheet}">
${scripts}
</head>
<body>
<a class="skip-link" href="#main">Перейти к содержимому</a>
<header class="site-header"><p>${input.header ?? 'Счёт на оплату'}</p></header>
<main id="main" tabindex="-1">
${input.main}
</main>
<footer class="site-footer"><p>${FOOTER}</p></footer>
</body>
</html>
`.value;
}
