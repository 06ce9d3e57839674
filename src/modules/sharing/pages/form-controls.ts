/**
 * Accessible form controls for the edit page: every control has a <label for>, errors and
 * hints are tied to it with aria-describedby, and an invalid control says so (aria-invalid).
 * Names are validation paths (`items[2].price`); ids are derived from them with `fieldId`.
 */
import { fieldId, html, type SafeHtml } from './html.js';

export interface Messages {
  errors: Record<string, string>;
  warnings: Record<string, string>;
}

export interface ControlInput {
  path: string;
  label: string;
  value: string;
  messages: Messages;
  /** Hide the label visually (table cells); it stays for screen readers and small screens. */
  rowLabel?: boolean;
  hint?: string;
  required?: boolean;
}

export interface TextInput extends ControlInput {
  type?: 'text' | 'date' | 'email';
  inputmode?: 'decimal' | 'numeric' | 'email';
  autocomplete?: string;
  list?: string;
  maxlength?: number;
  multiline?: boolean;
}

export interface SelectInput extends ControlInput {
  options: ReadonlyArray<{ value: string; label: string }>;
}

function own(map: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

function parts(input: ControlInput) {
  const id = fieldId(input.path);
  const error = own(input.messages.errors, input.path);
  const warning = own(input.messages.warnings, input.path);
  const described = [error ? `${id}-error` : '', warning ? `${id}-warning` : '', input.hint ? `${id}-hint` : ''].filter(Boolean).join(' ');
  const label = html`<label for="${id}"${input.rowLabel ? html` class="visually-hidden row-label"` : null}>${input.label}${
    input.required ? html`<span aria-hidden="true"> *</span>` : null
  }</label>`;
  const after = html`${input.hint ? html`<p class="muted" id="${id}-hint">${input.hint}</p>` : null}${
    error ? html`<p class="error" id="${id}-error">${error}</p>` : null
  }${warning ? html`<p class="warning" id="${id}-warning">Предупреждение: ${warning}</p>` : null}`;
  const aria = html`${error ? html` aria-invalid="true"` : null}${described ? html` aria-describedby="${described}"` : null}${
    input.required ? html` required aria-required="true"` : null
  }`;
  return { id, label, after, aria };
}

function wrap(input: ControlInput, inner: SafeHtml): SafeHtml {
  return input.rowLabel ? inner : html`<div class="field">${inner}</div>`;
}

export function textControl(input: TextInput): SafeHtml {
  const { id, label, after, aria } = parts(input);
  const attrs = html`${input.inputmode ? html` inputmode="${input.inputmode}"` : null}${
    input.autocomplete ? html` autocomplete="${input.autocomplete}"` : null
  }${input.list ? html` list="${input.list}"` : null}${input.maxlength ? html` maxlength="${input.maxlength}"` : null}`;
  const control = input.multiline
    ? html`<textarea id="${id}" name="${input.path}"${aria}${attrs}>${input.value}</textarea>`
    : html`<input id="${id}" name="${input.path}" type="${input.type ?? 'text'}" value="${input.value}"${aria}${attrs}>`;
  return wrap(input, html`${label}${control}${after}`);
}

export function selectControl(input: SelectInput): SafeHtml {
  const { id, label, after, aria } = parts(input);
  const known = input.options.some((o) => o.value === input.value);
  // A stored value outside the list stays selectable, so saving does not silently change it.
  const options = known ? input.options : [...input.options, { value: input.value, label: input.value }];
  return wrap(
    input,
    html`${label}<select id="${id}" name="${input.path}"${aria}>${options.map(
      (o) => html`<option value="${o.value}"${o.value === input.value ? html` selected` : null}>${o.label}</option>`,
    )}</select>${after}`,
  );
}

export function checkboxControl(input: ControlInput): SafeHtml {
  const { id, after, aria } = parts(input);
  return html`<div class="field field--check"><input id="${id}" name="${input.path}" type="checkbox" value="1"${
    input.value === '1' ? html` checked` : null
  }${aria}><label for="${id}">${input.label}</label>${after}</div>`;
}
