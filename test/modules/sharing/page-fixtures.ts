/**
 * Helpers of the page tests: hostile text for every string, a small HTML scanner for the
 * edit form's controls, and the sample response of the rendering tests.
 */
export { responseFor, sampleDocument, sampleResponse } from '../rendering/print-fixtures.js';

export const XSS_SCRIPT = '<script>alert(1)</script>';
export const XSS_ATTR = `"'><img src=x onerror=alert(1)>`;
export const HOSTILE = `${XSS_SCRIPT}${XSS_ATTR}`;
/** How the two payloads must look in the HTML: every special character escaped. */
export const XSS_SCRIPT_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;';
export const XSS_ATTR_ESCAPED = '&quot;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;';

/** Replaces every string in a value (deeply) with `f(string)`; numbers and booleans stay. */
export function mapStrings<T>(value: T, f: (s: string) => string): T {
  if (typeof value === 'string') return f(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => mapStrings(v, f)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)])) as T;
  }
  return value;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
export const decodeEntities = (s: string): string => s.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] as string);

/** The attributes of one start tag, quoted values decoded. */
export function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  const body = tag.replace(/^<[a-zA-Z][\w-]*/, '').replace(/\/?>$/, '');
  for (const m of body.matchAll(/([a-zA-Z_:-][\w:.-]*)(?:="([^"]*)")?/g)) {
    const name = m[1] as string;
    out[name] = decodeEntities(m[2] ?? '');
  }
  return out;
}

/**
 * What a browser would post for the form: every named input (checkboxes only when checked),
 * the selected option of every select, every textarea's content. Template rows are ignored,
 * as they are inert until the script clones them.
 */
export function formFields(page: string): Record<string, string | string[]> {
  const html = page.replace(/<template[\s\S]*?<\/template>/g, '');
  const fields: Record<string, string | string[]> = {};
  const add = (name: string, value: string) => {
    const prev = fields[name];
    fields[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  };
  for (const m of html.matchAll(/<input\b[^>]*>/g)) {
    const a = attributes(m[0]);
    if (!a.name) continue;
    if (a.type === 'checkbox' && !('checked' in a)) continue;
    add(a.name, a.value ?? '');
  }
  for (const m of html.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const a = attributes(`<select${m[1] as string}>`);
    const options = [...(m[2] as string).matchAll(/<option\b([^>]*)>/g)].map((o) => attributes(`<option${o[1] as string}>`));
    const chosen = options.find((o) => 'selected' in o) ?? options[0];
    if (a.name && chosen) add(a.name, chosen.value ?? '');
  }
  for (const m of html.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    const a = attributes(`<textarea${m[1] as string}>`);
    if (a.name) add(a.name, decodeEntities(m[2] as string));
  }
  return fields;
}

/** Every form control outside <template>: its tag, id and name. */
export function controls(page: string): Array<{ tag: string; id: string | undefined; name: string | undefined; type: string | undefined }> {
  const html = page.replace(/<template[\s\S]*?<\/template>/g, '');
  return [...html.matchAll(/<(input|select|textarea)\b[^>]*>/g)].map((m) => {
    const a = attributes(m[0]);
    return { tag: m[1] as string, id: a.id, name: a.name, type: a.type };
  });
}
