/** Small pure helpers of the e-mail templates: escaping, one-line header text, money. Dates: shared/ru-format. */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values alike. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}

/** Text fit for a header or a single line: control characters (CR, LF, …) become spaces. */
export function oneLine(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').replace(/ {2,}/g, ' ').trim();
}

/**
 * A decimal text amount (`12345.6`) with thousands grouped and two decimals, straight from the
 * digits (no binary float): `12 345,60` in Russian, `12,345.60` in English.
 */
export function formatAmount(amount: string, locale: 'ru' | 'en'): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount.trim());
  if (!m) return amount;
  const sign = m[1] ?? '';
  const whole = (m[2] as string).replace(/^0+(?=\d)/, '');
  const fraction = ((m[3] ?? '') + '00').slice(0, 2);
  const group = locale === 'ru' ? '\u00a0' : ',';
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  return `${sign}${grouped}${locale === 'ru' ? ',' : '.'}${fraction}`;
}

export function formatMoney(amount: string, currency: string, locale: 'ru' | 'en'): string {
  return `${formatAmount(amount, locale)}\u00a0${currency}`;
}
