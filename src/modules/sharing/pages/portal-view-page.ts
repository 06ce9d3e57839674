/**
 * The portal view page: the invoice as the share page shows it, plus what the team needs:
 * every status, metadata (revision, who changed it and when), every link, whether sharing is
 * available, and the validation warnings stored with the document.
 */
import type { EdoSync } from '../../edo/index.js';
import type { InvoiceDetail, InvoiceWriteResponse } from '../../invoices/index.js';
import { warningMessageRu } from '../form-messages.js';
import { toPrintModel, type InvoicePrintModel } from '../../invoices/index.js';
import { html, safeUrl, type SafeHtml } from './html.js';
import { fieldLabel } from './field-labels.js';
import { itemsSection, partiesSection, paymentSection, signersLine, statusBadges } from './invoice-sections.js';
import { renderPage } from './layout.js';

export interface PortalMeta {
  public_id: string;
  revision: number | null;
  created_at: string;
  last_modified_at: string;
  /** `api` or `portal`. */
  editor_mode: string;
  source_type: string;
  created_by: string;
  modified_by: string;
  viewed_at: string | null;
}

export interface PortalLink {
  label: string;
  url: string;
}

export interface PortalViewPageInput {
  model: InvoicePrintModel;
  meta: PortalMeta;
  links: PortalLink[];
  warnings: ReadonlyArray<{ field: string; code: string; message: string }>;
  /** The EDO synchronization (metadata.edo); null when it never started. */
  edo: EdoSync | null;
  /** Null when sharing is available; otherwise why the share links answer 404/403. */
  shareUnavailableReason: string | null;
  pdfUrl: string;
  qrImageUrl: string | null;
  /** The edit page; null hides the button (a paid or cancelled document is locked). */
  editUrl: string | null;
  /** Shown after a successful save (the POST redirected here with a flag). */
  saved?: boolean;
  assetPrefix?: string;
}

const SHARE_REASONS: Record<string, string> = {
  public_share_disabled: 'публикация по ссылке выключена в документе — ссылки отвечают «страница не найдена»',
  tariff_external_share_disabled: 'тариф команды не разрешает внешние ссылки — ссылки отвечают «доступ ограничен»',
};

const MODES: Record<string, string> = { api: 'API', portal: 'портал' };
const lookup = (map: Record<string, string>, key: string): string => (Object.hasOwn(map, key) ? (map[key] as string) : key);

/** "2026-03-02T09:05:00.000Z" → "02.03.2026 09:05 UTC"; other text as is. */
export function formatTimestampRu(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(iso);
  return m ? `${m[3]}.${m[2]}.${m[1]} ${m[4]}:${m[5]} UTC` : iso;
}

type Response = InvoiceWriteResponse | InvoiceDetail;

/**
 * Builds the page input from a document response. PDF and QR default to the colleague link,
 * because opening the buyer's link would mark the document viewed by the buyer.
 */
export function portalViewInput(
  response: Response,
  urls: { editUrl: string | null; pdfUrl?: string; qrImageUrl?: string | null },
): PortalViewPageInput {
  const model = toPrintModel(response);
  const md = response.metadata;
  const links = response.share_links;
  const gate = response.share_gate;
  return {
    model,
    meta: {
      public_id: response.public_id,
      revision: md.revision ?? null,
      created_at: md.created_at ?? '',
      last_modified_at: md.last_modified_at ?? '',
      editor_mode: md.editor_mode ?? '',
      source_type: md.source_type ?? '',
      created_by: md.created_by_login ?? '',
      modified_by: md.last_modified_by_login ?? '',
      viewed_at: md.viewed_at ?? null,
    },
    links: [
      { label: 'Ссылка для покупателя', url: links.buyer_url },
      { label: 'Ссылка для коллег (не отмечает просмотр)', url: links.colleague_url },
      { label: 'PDF для покупателя', url: links.buyer_document_url },
      ...links.recipients.map((r) => ({ label: `Ссылка получателя ${r.name ? `${r.name} <${r.email}>` : r.email}`, url: r.url })),
    ],
    warnings: response.validation.warnings,
    edo: md.edo ?? null,
    shareUnavailableReason: gate && !gate.available ? gate.reason || 'unavailable' : null,
    pdfUrl: urls.pdfUrl ?? links.colleague_document_url,
    qrImageUrl: urls.qrImageUrl !== undefined ? urls.qrImageUrl : model.qr_payload ? `${links.colleague_url}/qr.png` : null,
    editUrl: urls.editUrl,
  };
}

function metaSection(meta: PortalMeta): SafeHtml {
  const row = (term: string, value: string | null) => (value ? html`<dt>${term}</dt><dd>${value}</dd>` : null);
  return html`<section class="card" aria-labelledby="meta-title">
<h2 id="meta-title">Сведения о документе</h2>
<dl class="requisites">
${row('Идентификатор', meta.public_id)}
${row('Ревизия', meta.revision === null ? null : String(meta.revision))}
${row('Создан', meta.created_at && formatTimestampRu(meta.created_at))}
${row('Создал', meta.created_by)}
${row('Источник', lookup(MODES, meta.source_type))}
${row('Изменён', meta.last_modified_at && formatTimestampRu(meta.last_modified_at))}
${row('Изменил', meta.modified_by)}
${row('Последнее изменение через', lookup(MODES, meta.editor_mode))}
${row('Просмотрен покупателем', meta.viewed_at ? formatTimestampRu(meta.viewed_at) : 'нет')}
</dl>
</section>`;
}

function linksSection(input: PortalViewPageInput): SafeHtml {
  const reason = input.shareUnavailableReason;
  const explained = reason === null ? null : lookup(SHARE_REASONS, reason);
  return html`<section class="card" aria-labelledby="links-title">
<h2 id="links-title">Ссылки</h2>
${explained ? html`<div class="notice notice--warn"><p>Ссылки сейчас не открываются: ${explained}.</p></div>` : null}
<ul>
${input.links.map((l) => html`<li>${l.label}: <a href="${safeUrl(l.url)}">${l.url}</a></li>`)}
</ul>
</section>`;
}

function warningsSection(warnings: PortalViewPageInput['warnings']): SafeHtml | null {
  if (warnings.length === 0) return null;
  return html`<div class="notice notice--warn" role="note" aria-labelledby="warnings-title">
<h2 id="warnings-title">Предупреждения проверки</h2>
<ul>${warnings.map((w) => html`<li>${fieldLabel(w.field)}: ${warningMessageRu(w)}</li>`)}</ul>
</div>`;
}

const EDO_STATUS: Record<string, string> = {
  queued: 'в очереди на отправку',
  sent: 'передан оператору',
  delivered: 'доставлен покупателю',
  accepted: 'принят покупателем',
  rejected: 'отклонён покупателем',
  failed: 'не отправлен',
};

/** EDO: where the document is, the last error, and the documents that came back. */
function edoSection(edo: EdoSync | null): SafeHtml | null {
  if (!edo) return null;
  const row = (term: string, value: string | null | undefined) => (value ? html`<dt>${term}</dt><dd>${value}</dd>` : null);
  const time = (iso: string | null) => (iso ? formatTimestampRu(iso) : null);
  const waiting = edo.status === 'queued' && edo.attempts > 0;
  return html`<section class="card" aria-labelledby="edo-title">
<h2 id="edo-title">ЭДО</h2>
<dl class="requisites">
${row('Состояние', lookup(EDO_STATUS, edo.status))}
${row('Отправитель', edo.seller_edo_id)}
${row('Получатель', edo.buyer_edo_id)}
${row('Ревизия', String(edo.revision))}
${row('Попыток отправки', `${edo.attempts} из ${edo.max_attempts}`)}
${row('Следующая попытка', waiting ? time(edo.next_attempt_at) : null)}
${row('Последняя ошибка', edo.last_error)}
${row('Причина отказа', edo.rejection_reason)}
${row('Передан оператору', time(edo.sent_at))}
${row('Доставлен', time(edo.delivered_at))}
${row('Принят', time(edo.accepted_at))}
${row('Отклонён', time(edo.rejected_at))}
</dl>
${
  edo.links.length > 0
    ? html`<h3>Связанные документы</h3>
<ul>${edo.links.map((l) => html`<li>${l.title}${l.number ? html` № ${l.number}` : null}${l.date ? html` от ${l.date}` : null}</li>`)}</ul>`
    : null
}
</section>`;
}

/** Renders the portal view page (HTTP 200). */
export function renderPortalViewPage(input: PortalViewPageInput): string {
  const { model } = input;
  const edit = input.editUrl ? html`<a class="button" href="${safeUrl(input.editUrl)}">Редактировать</a>` : null;
  const main = html`<h1>${model.title}</h1>
${statusBadges(model.status, { buyer: true, service: true })}
${input.saved ? html`<div class="notice notice--ok" role="status"><p>Изменения сохранены.</p></div>` : null}
${model.status.service_reason ? html`<p class="muted">Ограничение сервиса: ${model.status.service_reason}</p>` : null}
${warningsSection(input.warnings)}
${paymentSection(model, { qrImageUrl: input.qrImageUrl, pdfUrl: input.pdfUrl, actions: edit })}
${partiesSection(model)}
${itemsSection(model)}
${signersLine(model)}
${linksSection(input)}
${edoSection(input.edo)}
${metaSection(input.meta)}`;

  return renderPage({ title: `${model.document_title} — портал`, header: 'Портал: просмотр счёта', main, assetPrefix: input.assetPrefix });
}
