/**
 * The portal edit page: a real form for every field of the document, posted as
 * application/x-www-form-urlencoded with a CSRF token, saved as a full update through the
 * API's validation. Errors come back as a path → message map and are shown both in a summary
 * (focusable, with links to the fields) and next to each field.
 *
 * Works without JavaScript: each repeatable group shows spare empty rows and "Удалить"
 * checkboxes. The static edit script (PAGE_ASSETS.editScript) adds and removes rows instead.
 */
import { CURRENCIES, INVOICE_DIRECTIONS, UNITS, VAT_RATES } from '../../../shared/reference.js';
import { canMoveSellerStatus, SELLER_STATUSES, type SellerStatus } from '../../invoices/index.js';
import { PAGE_ASSETS } from './assets.js';
import { editFormValues, type FormValues } from './edit-form.js';
import { checkboxControl, selectControl, textControl, type Messages } from './form-controls.js';
import { fieldLabel, groupOf, partyFieldLabel } from './field-labels.js';
import { fieldId, html, safeUrl, type SafeHtml } from './html.js';
import { renderPage } from './layout.js';

export interface EditPageInput {
  /** Heading, plain text, e.g. the document title. */
  title: string;
  /** The document to show: `response.invoice`, or the parsed form after a refused save. */
  document: Record<string, unknown>;
  /** Field path → message (API validation errors and the form parser's own). */
  errors?: Record<string, string>;
  /** Field path → message for warnings (checksums, unusual rates): shown, not blocking. */
  warnings?: Record<string, string>;
  /** A message not tied to a field (e.g. "the document changed meanwhile"). */
  formError?: string | null;
  csrfToken: string;
  /** Where the form posts (the edit URL itself). */
  actionUrl: string;
  /** The portal view page (the "Отмена" link). */
  cancelUrl: string;
  /** ETag of the edited revision, posted back as `_etag` for If-Match. */
  etag?: string | null;
  /** The stored seller status: the select offers only the moves allowed from it. */
  currentSellerStatus?: string;
  /** Spare empty item rows for browsers without JavaScript (default 3). */
  spareItemRows?: number;
  assetPrefix?: string;
}

const VAT_OPTIONS = VAT_RATES.map((r) => ({ value: r.value === null ? '' : String(r.value), label: r.label }));
const SIGNER_ROLES = [
  { value: 'director', label: 'Руководитель' },
  { value: 'accountant', label: 'Бухгалтер' },
  { value: 'chief_accountant', label: 'Главный бухгалтер' },
  { value: 'entrepreneur', label: 'Предприниматель' },
];
const options = (map: Record<string, string>) => Object.entries(map).map(([value, label]) => ({ value, label }));

interface Ctx {
  values: FormValues;
  messages: Messages;
}

const value = (ctx: Ctx, path: string) => (Object.hasOwn(ctx.values, path) ? (ctx.values[path] as string) : '');

function text(ctx: Ctx, path: string, extra: Partial<Parameters<typeof textControl>[0]> = {}): SafeHtml {
  return textControl({ path, label: fieldLabel(path), value: value(ctx, path), messages: ctx.messages, ...extra });
}

function sellerStatusOptions(current: string | undefined) {
  const all = options(SELLER_STATUSES);
  if (current === undefined || !Object.hasOwn(SELLER_STATUSES, current)) return all;
  return all.filter((o) => canMoveSellerStatus(current as SellerStatus, o.value as SellerStatus));
}

function groupErrors(ctx: Ctx, group: string): SafeHtml | null {
  const message = Object.hasOwn(ctx.messages.errors, group) ? ctx.messages.errors[group] : undefined;
  return message ? html`<p class="error" id="${group}-error">${message}</p>` : null;
}

function errorSummary(ctx: Ctx, formError: string | null | undefined): SafeHtml | null {
  const entries = Object.entries(ctx.messages.errors);
  if (entries.length === 0 && !formError) return null;
  const items = entries.map(([path, message]) => html`<li><a href="#${groupOf(path, ctx.values)}">${fieldLabel(path)}: ${message}</a></li>`);
  return html`<div class="notice notice--error" role="alert" id="error-summary" tabindex="-1">
<h2>Документ не сохранён</h2>
${formError ? html`<p>${formError}</p>` : null}
${entries.length > 0 ? html`<ul>${items}</ul>` : null}
</div>`;
}

interface RepeatGroup {
  key: 'items' | 'api_recipients' | 'signers';
  legend: string;
  addLabel: string;
  removeLabel: string;
  max: number;
  /** Column headers; the first `wide` one takes the spare width. */
  headers: Array<string | { text: string; wide: true }>;
  cells: (ctx: Ctx, prefix: string) => SafeHtml[];
}

function repeatRow(ctx: Ctx, group: RepeatGroup, index: string, n: string): SafeHtml {
  const prefix = `${group.key}[${index}]`;
  const removeId = fieldId(`${prefix}._remove`);
  return html`<tr>
<td class="num" aria-hidden="true">${n}</td>
${group.cells(ctx, prefix).map((cell) => html`<td>${cell}</td>`)}
<td class="remove">
<span class="nojs-only"><input id="${removeId}" name="${prefix}._remove" type="checkbox" value="1"> <label for="${removeId}">Удалить<span class="visually-hidden"> ${group.removeLabel} ${n}</span></label></span>
<button type="button" class="button--secondary" data-remove-row hidden>Удалить<span class="visually-hidden"> ${group.removeLabel} ${n}</span></button>
</td>
</tr>`;
}

function repeatSection(ctx: Ctx, group: RepeatGroup, rows: number, spare: number): SafeHtml {
  const count = Math.min(rows + spare, Math.max(rows, group.max));
  const body = Array.from({ length: count }, (_, i) => repeatRow(ctx, group, String(i), String(i + 1)));
  // The template row has no values: an empty context, and placeholders the script rewrites.
  const blank: Ctx = { values: {}, messages: { errors: {}, warnings: {} } };
  return html`<fieldset id="${group.key}-group" data-repeat="${group.key}" data-next-index="${count}" data-max="${group.max}">
<legend>${group.legend}</legend>
${groupErrors(ctx, group.key)}
<table class="rows">
<thead><tr><th scope="col" class="num">№</th>${group.headers.map((h) => (typeof h === 'string' ? html`<th scope="col">${h}</th>` : html`<th scope="col" class="wide">${h.text}</th>`))}<th scope="col"><span class="visually-hidden">Удаление</span></th></tr></thead>
<tbody data-rows>
${body}
</tbody>
</table>
<template data-row-template>${repeatRow(blank, group, '__i__', '__n__')}</template>
<p class="actions"><button type="button" class="button--secondary" data-add-row hidden>${group.addLabel}</button></p>
<p class="visually-hidden" aria-live="polite" data-live></p>
</fieldset>`;
}

function itemsGroup(vatDefault: string): RepeatGroup {
  return {
    key: 'items',
    legend: 'Позиции',
    addLabel: 'Добавить позицию',
    removeLabel: 'позицию',
    max: 1000,
    headers: [{ text: 'Наименование', wide: true }, 'Кол-во', 'Ед.', 'Цена', 'НДС'],
    cells: (ctx, p) => [
      text(ctx, `${p}.name`, { rowLabel: true, maxlength: 1000 }),
      text(ctx, `${p}.qty`, { rowLabel: true, inputmode: 'decimal' }),
      text(ctx, `${p}.unit`, { rowLabel: true, list: 'units', maxlength: 32 }),
      text(ctx, `${p}.price`, { rowLabel: true, inputmode: 'decimal' }),
      selectControl({
        path: `${p}.vat_pct`,
        label: fieldLabel(`${p}.vat_pct`),
        value: Object.hasOwn(ctx.values, `${p}.vat_pct`) ? value(ctx, `${p}.vat_pct`) : vatDefault,
        options: VAT_OPTIONS,
        messages: ctx.messages,
        rowLabel: true,
      }),
    ],
  };
}

const RECIPIENTS_GROUP: RepeatGroup = {
  key: 'api_recipients',
  legend: 'Получатели уведомлений',
  addLabel: 'Добавить получателя',
  removeLabel: 'получателя',
  max: 50,
  headers: [{ text: 'E-mail', wide: true }, 'Имя', 'Должность'],
  cells: (ctx, p) => [
    text(ctx, `${p}.email`, { rowLabel: true, type: 'email', inputmode: 'email', autocomplete: 'off' }),
    text(ctx, `${p}.name`, { rowLabel: true }),
    text(ctx, `${p}.position`, { rowLabel: true }),
  ],
};

const SIGNERS_GROUP: RepeatGroup = {
  key: 'signers',
  legend: 'Подписанты',
  addLabel: 'Добавить подписанта',
  removeLabel: 'подписанта',
  max: 10,
  headers: ['Роль', { text: 'ФИО', wide: true }, 'Должность'],
  cells: (ctx, p) => [
    selectControl({ path: `${p}.role`, label: fieldLabel(`${p}.role`), value: value(ctx, `${p}.role`) || 'director', options: SIGNER_ROLES, messages: ctx.messages, rowLabel: true }),
    text(ctx, `${p}.name`, { rowLabel: true }),
    text(ctx, `${p}.position`, { rowLabel: true }),
  ],
};

function partyFieldset(ctx: Ctx, key: 'seller' | 'buyer', fields: readonly string[], hint: string | null): SafeHtml {
  const legend = key === 'seller' ? 'Поставщик (Исполнитель)' : 'Покупатель (Заказчик)';
  return html`<fieldset id="${key}-group">
<legend>${legend}</legend>
${hint ? html`<p class="muted">${hint}</p>` : null}
${groupErrors(ctx, key)}
<div class="fields">
${fields.map((f) =>
  text(ctx, `${key}.${f}`, {
    label: partyFieldLabel(f),
    required: (key === 'seller' && f === 'inn') || (key === 'buyer' && f === 'name'),
    multiline: f === 'address',
    ...(['inn', 'kpp', 'bik', 'account', 'corr_account'].includes(f) ? { inputmode: 'numeric' as const, autocomplete: 'off' } : {}),
    ...(f === 'email' ? { type: 'email' as const, inputmode: 'email' as const } : {}),
  }),
)}
</div>
</fieldset>`;
}

/** The rate most lines use (first on a tie), preselected in the spare rows; 22 % for a new document. */
function commonVatRate(items: Array<Record<string, unknown>>): string {
  const counts = new Map<string, number>();
  for (const item of items) {
    const rate = typeof item.vat_pct === 'number' ? String(item.vat_pct) : item.vat_pct === null ? '' : undefined;
    if (rate !== undefined) counts.set(rate, (counts.get(rate) ?? 0) + 1);
  }
  let best: [string, number] = ['22', 0];
  for (const entry of counts) if (entry[1] > best[1]) best = entry;
  return best[0];
}

/** Renders the edit page (HTTP 200, or 400/409 when re-shown with errors). */
export function renderPortalEditPage(input: EditPageInput): string {
  const state = editFormValues(input.document);
  const ctx: Ctx = { values: state.values, messages: { errors: input.errors ?? {}, warnings: input.warnings ?? {} } };
  const items = Array.isArray(input.document.items) ? (input.document.items as Array<Record<string, unknown>>) : [];
  const vatDefault = commonVatRate(items);
  const currentStatus = input.currentSellerStatus ?? (typeof input.document.seller_status === 'string' ? input.document.seller_status : undefined);

  const main = html`<h1>Редактирование: ${input.title}</h1>
${errorSummary(ctx, input.formError)}
<form id="edit-form" method="post" action="${safeUrl(input.actionUrl)}" novalidate>
<input type="hidden" name="_csrf" value="${input.csrfToken}">
${input.etag ? html`<input type="hidden" name="_etag" value="${input.etag}">` : null}
<fieldset id="document-group">
<legend>Документ</legend>
<div class="fields">
${text(ctx, 'number', { required: true, maxlength: 64 })}
${text(ctx, 'date', { required: true, type: 'date' })}
${selectControl({ path: 'currency', label: fieldLabel('currency'), value: value(ctx, 'currency') || 'RUB', options: options(CURRENCIES), messages: ctx.messages })}
${selectControl({ path: 'invoice_direction', label: fieldLabel('invoice_direction'), value: value(ctx, 'invoice_direction') || 'outgoing', options: options(INVOICE_DIRECTIONS), messages: ctx.messages })}
${text(ctx, 'due_date', { type: 'date' })}
${selectControl({ path: 'seller_status', label: fieldLabel('seller_status'), value: value(ctx, 'seller_status') || currentStatus || 'issued', options: sellerStatusOptions(currentStatus), messages: ctx.messages })}
</div>
</fieldset>
${partyFieldset(ctx, 'seller', ['name', 'inn', 'kpp', 'address', 'email', 'bank_name', 'bik', 'account', 'corr_account'], 'Пустые реквизиты заполняются из данных организации и её основного счёта.')}
${partyFieldset(ctx, 'buyer', ['name', 'inn', 'kpp', 'address', 'email'], null)}
${repeatSection(ctx, itemsGroup(vatDefault), state.rows.items, input.spareItemRows ?? 3)}
<datalist id="units">${UNITS.map((u) => html`<option value="${u.code}">${u.name}</option>`)}</datalist>
<fieldset id="flags-group">
<legend>Параметры</legend>
${checkboxControl({ path: 'prices_include_vat', label: fieldLabel('prices_include_vat'), value: value(ctx, 'prices_include_vat'), messages: ctx.messages })}
${checkboxControl({ path: 'public_share_enabled', label: fieldLabel('public_share_enabled'), value: value(ctx, 'public_share_enabled'), messages: ctx.messages })}
${checkboxControl({ path: 'show_payment_qr', label: fieldLabel('show_payment_qr'), value: value(ctx, 'show_payment_qr'), messages: ctx.messages })}
</fieldset>
${repeatSection(ctx, SIGNERS_GROUP, state.rows.signers, 2)}
${repeatSection(ctx, RECIPIENTS_GROUP, state.rows.api_recipients, 2)}
<fieldset id="extra-group">
<legend>Дополнительно</legend>
<div class="fields">
${text(ctx, 'purpose', { multiline: true, maxlength: 2000 })}
${text(ctx, 'comment', { multiline: true, maxlength: 2000 })}
${text(ctx, 'buyer_edo_id', { autocomplete: 'off' })}
</div>
</fieldset>
<div class="actions">
<button type="submit">Сохранить</button>
<a class="button button--secondary" href="${safeUrl(input.cancelUrl)}">Отмена</a>
</div>
</form>`;

  return renderPage({
    title: `Редактирование: ${input.title}`,
    header: 'Портал: редактирование счёта',
    main,
    scripts: [PAGE_ASSETS.editScript.path],
    assetPrefix: input.assetPrefix,
  });
}
