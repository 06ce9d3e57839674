/**
 * A tiny HTML templating tag. Every interpolation is escaped unless it is already `SafeHtml`
 * (the output of `html` itself, or text explicitly marked with `trustedHtml`), so user text
 * can only reach a page as text. Templates quote every attribute with `"`, and the escaping
 * covers `& < > " '`, so the same escape is correct in text and in attribute values.
 */

/** Markup known to be safe: produced by `html` or explicitly trusted. */
export class SafeHtml {
  readonly value: string;

  constructor(value: string) {
    this.value = value;
  }

  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML text and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/**
 * Marks constant markup as safe. Only for strings written in this codebase (the static
 * stylesheet link, an entity); never pass user data here.
 */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: Interpolation) => render(v)).join('');
  return escapeHtml(String(value));
}

/**
 * Tagged template: `html\`<p>${name}</p>\`` escapes `name`. Arrays are concatenated (each
 * element escaped the same way); null, undefined and booleans render nothing, so
 * `${cond && html\`…\`}` works.
 */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * A URL for `href`, `src` or `action`. Server-built links are expected; anything that is not
 * http(s) or a same-origin path (`javascript:`, `data:`) becomes `#`, so a wrong caller can
 * never turn a link into script. The result still goes through escaping in `html`.
 */
export function safeUrl(url: string | null | undefined): string {
  if (typeof url !== 'string') return '#';
  const trimmed = url.trim();
  if (/^https?:\/\//i.test(trimmed)) return trimmed;
  if (trimmed.startsWith('/') && !trimmed.startsWith('//')) return trimmed;
  return '#';
}

/**
 * An element id from a field path: `items[2].price` → `f-items-2-price`. Underscores stay, so
 * the row template's `items[__i__].price` keeps the placeholder the edit script rewrites.
 */
export function fieldId(path: string): string {
  return `f-${path.replace(/[^A-Za-z0-9_]+/g, '-').replace(/^-|-$/g, '')}`;
}
