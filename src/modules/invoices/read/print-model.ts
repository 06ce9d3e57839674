/**
 * The print model: everything the share and portal pages and the PDF show, mapped once from
 * the API response (`buildInvoiceResponse`), so a page, the PDF and the JSON never disagree.
 * Figures come from `response.totals` (computed in decimal by `computeTotals`) and are only
 * formatted here; nothing is recomputed unless the response carries no totals at all.
 *
 * Every string in the model is plain text: renderers escape it (HTML) or draw it (PDF).
 */
import type { InvoiceDetail, InvoiceWriteResponse } from '../invoice.schemas.js';
import { BUYER_STATUSES, SELLER_STATUSES, SERVICE_STATUSES } from '../rules/statuses.js';
import { formatMoney, fromMinorUnits } from '../../../shared/money.js';
import { computeTotals, type TotalsItemInput } from '../rules/totals.js';
import { AMOUNT_IN_WORDS_CURRENCIES, amountInWords, type AmountInWordsCurrency } from '../rules/amount-in-words.js';
import { currencyShortRu, formatDateLongRu, formatDateShortRu, formatMoneyRu, formatPercentRu, formatPriceRu, formatQtyRu } from '../../../shared/ru-format.js';

export interface PrintParty {
  name: string;
  inn: string;
  kpp: string;
  address: string;
}

export interface PrintSeller extends PrintParty {
  bank_name: string;
  bik: string;
  /** Settlement account (р/с). */
  account: string;
  /** Correspondent account (к/с). */
  corr_account: string;
}

export interface PrintItem {
  /** Line number from 1. */
  no: number;
  name: string;
  /** "2,5". */
  qty: string;
  unit: string;
  /** "1 500,00" (more decimals when the price has them). */
  price: string;
  /** qty × price as the API computed it: "4 500,00". */
  amount: string;
  /** "22%" or "Без НДС": the HTML table shows it, the print-form table does not. */
  vat: string;
}

export interface PrintVatLine {
  /** "В том числе НДС 22%" (prices include VAT) or "Сумма НДС 22%" (VAT on top). */
  label: string;
  amount: string;
}

export interface PrintTotals {
  /** "Итого": the sum of the printed line amounts (net with VAT on top, gross with VAT included). */
  items_sum: string;
  subtotal: string;
  vat_total: string;
  /** "Всего к оплате". */
  total: string;
  /** One line per VAT rate; empty when no line carries VAT. */
  vat_lines: PrintVatLine[];
  /** True when no line carries a rate: print "Без налога (НДС)". */
  without_vat: boolean;
  prices_include_vat: boolean;
}

export interface PrintSigner {
  /** `director`, `accountant`, `entrepreneur` or whatever the document says. */
  role: string;
  /** "Руководитель", "Бухгалтер", "Предприниматель". */
  label: string;
  /** Empty: a line to sign by hand. */
  name: string;
  position: string;
}

export interface PrintStatus {
  seller: string;
  seller_label: string;
  buyer: string;
  buyer_label: string;
  service: string;
  service_label: string;
  service_reason: string;
}

export interface InvoicePrintModel {
  public_id: string;
  /** "Счёт на оплату № 15 от 2 марта 2026 г.". */
  title: string;
  /** The document title of the API ("Счёт № 15 от 02.03.2026" or the custom one): page <title>. */
  document_title: string;
  number: string;
  /** ISO date as stored. */
  date: string;
  /** "2 марта 2026 г.". */
  date_text: string;
  due_date: string | null;
  /** "12.03.2026"; null without a due date. */
  due_date_text: string | null;
  currency: string;
  /** "руб.", "долл. США", …: printed after figures. */
  currency_short: string;
  seller: PrintSeller;
  buyer: PrintParty;
  items: PrintItem[];
  items_count: number;
  totals: PrintTotals;
  amount_in_words: string;
  /** "Всего наименований 4, на сумму 19 789,99 руб.". */
  summary: string;
  signers: PrintSigner[];
  /** GOST R 56042 payload, or null when the API disabled the QR. */
  qr_payload: string | null;
  /** "Основание" line; null when absent. */
  basis: string | null;
  comment: string | null;
  purpose: string | null;
  status: PrintStatus;
}

type Response = InvoiceWriteResponse | InvoiceDetail;
type Doc = Record<string, unknown>;

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
const optionalText = (v: unknown): string | null => text(v) || null;
const record = (v: unknown): Doc => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Doc) : {});
const records = (v: unknown): Doc[] => (Array.isArray(v) ? v.map(record) : []);

function party(v: unknown): PrintParty {
  const p = record(v);
  return { name: text(p.name), inn: text(p.inn), kpp: text(p.kpp), address: text(p.address) };
}

function seller(v: unknown): PrintSeller {
  const p = record(v);
  return {
    ...party(p),
    bank_name: text(p.bank_name),
    bik: text(p.bik),
    account: text(p.account),
    corr_account: text(p.corr_account),
  };
}

interface TotalsSource {
  subtotal: string;
  vat_total: string;
  total: string;
  lineAmounts: string[];
  breakdown: Array<{ vat_pct: number | null; vat: string }>;
}

const MINOR = /^-?\d+$/;

/** The exact figure: the `*_minor_units` string when the response carries one, else the JSON number. */
function exact(minor: unknown, number: number): string {
  return typeof minor === 'string' && MINOR.test(minor) ? fromMinorUnits(minor) : formatMoney(number);
}

/**
 * The response's totals as decimal strings, read from the exact `*_minor_units` strings (a
 * JSON number above ~10^15 has lost kopecks, so printing from it would drift from the QR
 * `Sum` and the amount in words). A response without them (older) falls back to the numbers.
 * Without `totals` (an older InvoiceDetail), the one totals function computes them.
 */
function totalsSource(response: Response, doc: Doc, items: Doc[]): TotalsSource {
  const t = response.totals;
  if (t && t.lines.length === items.length) {
    return {
      subtotal: exact(t.subtotal_minor_units, t.subtotal),
      vat_total: exact(t.vat_total_minor_units, t.vat_total),
      total: exact(t.total_minor_units, t.total),
      lineAmounts: t.lines.map((l) => exact(l.amount_minor_units, l.amount)),
      breakdown: t.vat_breakdown.map((b) => ({ vat_pct: b.vat_pct, vat: exact(b.vat_minor_units, b.vat) })),
    };
  }
  const computed = computeTotals(items as unknown as TotalsItemInput[], { pricesIncludeVat: doc.prices_include_vat === true });
  return {
    subtotal: computed.subtotal,
    vat_total: computed.vat_total,
    total: computed.total,
    lineAmounts: computed.lines.map((l) => l.amount),
    breakdown: computed.vat_breakdown,
  };
}

const SIGNER_LABELS: Record<string, string> = {
  director: 'Руководитель',
  head: 'Руководитель',
  accountant: 'Бухгалтер',
  chief_accountant: 'Главный бухгалтер',
  entrepreneur: 'Предприниматель',
};

/** Known roles in print order; unknown ones follow in the document's order. */
const ROLE_ORDER = ['entrepreneur', 'director', 'head', 'chief_accountant', 'accountant'];

/** A sole proprietor (12-digit INN) signs alone as "Предприниматель"; a company has two lines. */
function signersOf(doc: Doc, sellerInn: string): PrintSigner[] {
  const given = records(doc.signers)
    .map((s) => {
      const role = text(s.role) || 'director';
      const label = Object.hasOwn(SIGNER_LABELS, role) ? (SIGNER_LABELS[role] as string) : text(s.title) || text(s.position) || role;
      return { role, label, name: text(s.name) || text(s.full_name), position: text(s.position) };
    })
    .filter((s) => s.name !== '' || s.position !== '');
  if (given.length > 0) {
    const rank = (role: string) => (ROLE_ORDER.includes(role) ? ROLE_ORDER.indexOf(role) : ROLE_ORDER.length);
    return given.map((s, i) => ({ s, i })).sort((a, b) => rank(a.s.role) - rank(b.s.role) || a.i - b.i).map(({ s }) => s);
  }
  if (sellerInn.length === 12) return [{ role: 'entrepreneur', label: 'Предприниматель', name: '', position: '' }];
  return [
    { role: 'director', label: 'Руководитель', name: '', position: '' },
    { role: 'accountant', label: 'Бухгалтер', name: '', position: '' },
  ];
}

/** Formats a figure; a value the formatter refuses (never in a validated document) prints as given. */
function figure(format: (v: string | number) => string, v: unknown): string {
  if (typeof v !== 'number' && typeof v !== 'string') return '';
  try {
    return format(v);
  } catch {
    return String(v);
  }
}

function vatLabel(pct: unknown): string {
  return typeof pct === 'number' || (typeof pct === 'string' && pct.trim() !== '') ? figure(formatPercentRu, pct) : 'Без НДС';
}

function statusOf(response: Response): PrintStatus {
  const s = response.status;
  const label = (map: Record<string, string>, value: string, given: string) => given || map[value] || value;
  return {
    seller: s.seller_status,
    seller_label: label(SELLER_STATUSES, s.seller_status, s.seller_status_label),
    buyer: s.buyer_status,
    buyer_label: label(BUYER_STATUSES, s.buyer_status, s.buyer_status_label),
    service: s.service_status,
    service_label: label(SERVICE_STATUSES, s.service_status, s.service_status_label),
    service_reason: s.service_status_reason,
  };
}

function wordsFor(response: Response, total: string, currency: string): string {
  if (response.totals?.amount_in_words) return response.totals.amount_in_words;
  return (AMOUNT_IN_WORDS_CURRENCIES as readonly string[]).includes(currency)
    ? amountInWords(total, currency as AmountInWordsCurrency)
    : '';
}

/**
 * Maps a document response to the print model. Pure and total over what the API returns:
 * missing optional parts become empty strings or null, never an exception, so a page always
 * renders what the API would answer.
 */
export function toPrintModel(response: Response): InvoicePrintModel {
  const doc = record(response.invoice);
  const items = records(doc.items);
  const currency = text(doc.currency) || text(response.totals?.currency) || 'RUB';
  const pricesIncludeVat = doc.prices_include_vat === true;
  const source = totalsSource(response, doc, items);
  const number = text(doc.number);
  const date = text(doc.date);
  const dueDate = optionalText(doc.due_date);
  const sellerData = seller(doc.seller);
  const currencyShort = currencyShortRu(currency);

  const printItems: PrintItem[] = items.map((item, i) => ({
    no: i + 1,
    name: text(item.name),
    qty: figure(formatQtyRu, item.qty),
    unit: text(item.unit) || 'шт',
    price: figure(formatPriceRu, item.price),
    amount: formatMoneyRu(source.lineAmounts[i] ?? '0'),
    vat: vatLabel(item.vat_pct),
  }));
  const rated = source.breakdown.filter((b) => b.vat_pct !== null);
  const vatLines = rated.map((b) => ({
    label: `${pricesIncludeVat ? 'В том числе НДС' : 'Сумма НДС'} ${formatPercentRu(b.vat_pct as number)}`,
    amount: formatMoneyRu(b.vat),
  }));
  const total = formatMoneyRu(source.total);

  return {
    public_id: response.public_id,
    title: `Счёт на оплату № ${number} от ${formatDateLongRu(date)}`,
    document_title: text(response.metadata.document_title) || text(response.document?.document_title) || `Счёт № ${number}`,
    number,
    date,
    date_text: formatDateLongRu(date),
    due_date: dueDate,
    due_date_text: dueDate === null ? null : formatDateShortRu(dueDate),
    currency,
    currency_short: currencyShort,
    seller: sellerData,
    buyer: party(doc.buyer),
    items: printItems,
    items_count: printItems.length,
    totals: {
      items_sum: formatMoneyRu(pricesIncludeVat ? source.total : source.subtotal),
      subtotal: formatMoneyRu(source.subtotal),
      vat_total: formatMoneyRu(source.vat_total),
      total,
      vat_lines: vatLines,
      without_vat: rated.length === 0,
      prices_include_vat: pricesIncludeVat,
    },
    amount_in_words: wordsFor(response, source.total, currency),
    summary: `Всего наименований ${printItems.length}, на сумму ${total} ${currencyShort}`,
    signers: signersOf(doc, sellerData.inn),
    qr_payload: response.qr?.enabled && response.qr.payload ? response.qr.payload : null,
    basis: optionalText(doc.basis),
    comment: optionalText(doc.comment),
    purpose: optionalText(doc.purpose),
    status: statusOf(response),
  };
}
