/**
 * Russian formatting of figures and dates for the print form and the pages. Every value goes
 * through decimal.js (via `toDecimal`), never binary float arithmetic: a number from the API
 * is read through `String(n)`, its shortest round-tripping literal, so 19789.99 stays 19789.99.
 *
 * Grouping uses a plain space ("19 789,99"), not U+00A0: the strings also feed pdftotext
 * checks and e-mails; renderers keep figures on one line by layout (nowrap cells) instead.
 */
import { formatMoney, toDecimal, type DecimalInput } from './money.js';

const MONTHS_GENITIVE = [
  'января',
  'февраля',
  'марта',
  'апреля',
  'мая',
  'июня',
  'июля',
  'августа',
  'сентября',
  'октября',
  'ноября',
  'декабря',
] as const;

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** "12345678" → "12 345 678"; the sign, if any, stays in front. */
function groupThousands(integerPart: string): string {
  const negative = integerPart.startsWith('-');
  const digits = negative ? integerPart.slice(1) : integerPart;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
  return negative ? `-${grouped}` : grouped;
}

/** A plain decimal literal ("1234.5") in Russian notation ("1 234,5"). */
function russianNotation(plain: string): string {
  const [integerPart = '0', fraction] = plain.split('.');
  const grouped = groupThousands(integerPart);
  return fraction === undefined || fraction === '' ? grouped : `${grouped},${fraction}`;
}

/** Money with exactly two decimals, half-up: 19789.99 → "19 789,99", "990" → "990,00". */
export function formatMoneyRu(value: DecimalInput): string {
  return russianNotation(formatMoney(value));
}

/**
 * A unit price: at least two decimals, more when the price has them (prices may carry up to
 * four): 1500 → "1 500,00", 0.1234 → "0,1234". Nothing is rounded away, so the printed price
 * times the quantity gives the printed amount.
 */
export function formatPriceRu(value: DecimalInput): string {
  const d = toDecimal(value, 'price');
  const places = Math.max(2, d.decimalPlaces());
  const text = d.isZero() ? (0).toFixed(places) : d.toFixed(places);
  return russianNotation(text);
}

/** A quantity as entered, without trailing zeros: 3 → "3", 2.5 → "2,5", 1000 → "1 000". */
export function formatQtyRu(value: DecimalInput): string {
  const d = toDecimal(value, 'qty');
  return russianNotation(d.isZero() ? '0' : d.toFixed());
}

/** A VAT rate for labels: 22 → "22%", 7.5 → "7,5%". */
export function formatPercentRu(value: DecimalInput): string {
  return `${formatQtyRu(value)}%`;
}

/** "2026-03-02" → "2 марта 2026 г." (the print-form title style). Anything else is returned as is. */
export function formatDateLongRu(isoDate: string): string {
  const match = ISO_DATE.exec(isoDate);
  const month = match ? MONTHS_GENITIVE[Number(match[2]) - 1] : undefined;
  if (!match || month === undefined) return isoDate;
  return `${Number(match[3])} ${month} ${match[1]} г.`;
}

/** "2026-03-02" → "02.03.2026". Anything else is returned as is. */
export function formatDateShortRu(isoDate: string): string {
  const match = ISO_DATE.exec(isoDate);
  return match ? `${match[3]}.${match[2]}.${match[1]}` : isoDate;
}

/**
 * The abbreviation printed after figures ("на сумму 1 000,00 руб."). Abbreviations avoid
 * declining the currency name for the number; the amount in words names it in full.
 */
const CURRENCY_SHORT: Record<string, string> = {
  RUB: 'руб.',
  USD: 'долл. США',
  EUR: 'евро',
  // The ISO code: «юань» would need declining after a number, «кит. юан.» is no usual form.
  CNY: 'CNY',
  KZT: 'тенге',
  BYN: 'бел. руб.',
};

export function currencyShortRu(currency: string): string {
  return Object.hasOwn(CURRENCY_SHORT, currency) ? (CURRENCY_SHORT[currency] as string) : currency;
}
