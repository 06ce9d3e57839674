/**
 * The edit form's data side: which fields it has, the values it shows for a document
 * (`editFormValues`), and the document a posted form means (`parseEditForm`). Both use the
 * same field names, which are also the validation paths (`seller.inn`, `items[2].price`), so
 * an API validation error lands next to the field that caused it.
 *
 * Posting rules:
 * - blank optional fields are omitted (the API then applies its defaults or organization data);
 * - an item, recipient or signer row whose fields are all blank is dropped, as is a row with
 *   `_remove` checked; remaining rows are renumbered from 0 in posted order;
 * - numbers are parsed from Russian input ("1 500,50", "2,5") without float arithmetic; a
 *   value that is not a number is kept as the string typed, so validation refuses it at its
 *   path and the form shows it again for correction;
 * - checkboxes post "1" when checked and nothing otherwise, so absent means false;
 * - names starting with `_` (`_csrf`, `_etag`, `_remove`) are control fields, never data.
 */
import { toDecimal } from '../../../shared/money.js';

export type PostedFields = Record<string, string | string[] | undefined>;
export type FormValues = Record<string, string>;

export const DOCUMENT_FIELDS = ['number', 'date', 'currency', 'invoice_direction', 'due_date', 'seller_status'] as const;
export const EXTRA_FIELDS = ['purpose', 'comment', 'buyer_edo_id'] as const;
export const FLAG_FIELDS = ['prices_include_vat', 'public_share_enabled', 'show_payment_qr'] as const;
export const SELLER_FIELDS = ['name', 'inn', 'kpp', 'address', 'email', 'bank_name', 'bik', 'account', 'corr_account'] as const;
export const BUYER_FIELDS = ['name', 'inn', 'kpp', 'address', 'email'] as const;
export const ITEM_FIELDS = ['name', 'qty', 'unit', 'price', 'vat_pct'] as const;
export const RECIPIENT_FIELDS = ['email', 'name', 'position'] as const;
export const SIGNER_FIELDS = ['role', 'name', 'position'] as const;

/** Defaults of the flags when a document does not set them (the API's defaults). */
const FLAG_DEFAULTS: Record<(typeof FLAG_FIELDS)[number], boolean> = {
  prices_include_vat: false,
  public_share_enabled: true,
  show_payment_qr: true,
};

/**
 * Top-level keys the form owns. A save replaces these and should keep every other key of the
 * stored document (manager, buyer_contact, information_system, additional properties):
 * see `mergeEditedDocument`.
 */
export const EDIT_FORM_KEYS: readonly string[] = [
  ...DOCUMENT_FIELDS,
  ...EXTRA_FIELDS,
  ...FLAG_FIELDS,
  'seller',
  'buyer',
  'items',
  'api_recipients',
  'signers',
];

export const NUMBER_FORMAT_MESSAGE = 'Введите число, например 1 500,50';

type Doc = Record<string, unknown>;
const isRecord = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value shown in an input: numbers in Russian notation without grouping ("2,5"), text as is. */
function inputText(value: unknown, numeric: boolean): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) {
    if (!numeric) return String(value);
    const d = toDecimal(value);
    return (d.isZero() ? '0' : d.toFixed()).replace('.', ',');
  }
  return '';
}

const NUMERIC = new Set(['qty', 'price', 'vat_pct']);

function putRow(values: FormValues, prefix: string, row: Doc, fields: readonly string[]): void {
  for (const f of fields) values[`${prefix}.${f}`] = inputText(row[f], NUMERIC.has(f));
}

export interface EditFormState {
  values: FormValues;
  /** Rows each repeatable group shows before the spare empty rows. */
  rows: { items: number; api_recipients: number; signers: number };
}

/** The values the edit form shows for a stored (or re-posted) document, keyed by field name. */
export function editFormValues(doc: Doc): EditFormState {
  const values: FormValues = {};
  for (const f of [...DOCUMENT_FIELDS, ...EXTRA_FIELDS]) values[f] = inputText(doc[f], false);
  for (const f of FLAG_FIELDS) {
    const on = typeof doc[f] === 'boolean' ? doc[f] : FLAG_DEFAULTS[f];
    values[f] = on ? '1' : '';
  }
  putRow(values, 'seller', isRecord(doc.seller) ? doc.seller : {}, SELLER_FIELDS);
  putRow(values, 'buyer', isRecord(doc.buyer) ? doc.buyer : {}, BUYER_FIELDS);
  const rows = (key: string, fields: readonly string[]): number => {
    const list = Array.isArray(doc[key]) ? (doc[key] as unknown[]) : [];
    list.forEach((row, i) => putRow(values, `${key}[${i}]`, isRecord(row) ? row : {}, fields));
    return list.length;
  };
  return {
    values,
    rows: { items: rows('items', ITEM_FIELDS), api_recipients: rows('api_recipients', RECIPIENT_FIELDS), signers: rows('signers', SIGNER_FIELDS) },
  };
}

/**
 * Parses a decimal typed the Russian way: spaces (also non-breaking and thin) group
 * thousands, a comma or a point separates the fraction; "1.500,50" and "1,500.50" are read by
 * their grouping. Returns the JSON number the API takes, or null when the text is not a plain
 * decimal or cannot be represented exactly as a number (more than ~15 significant digits).
 */
export function parseDecimalInput(text: string): number | null {
  let s = text.replace(/[\s\u00a0\u2009\u202f]/g, '');
  if (/^-?\d{1,3}(\.\d{3})+,\d+$/.test(s)) s = s.replace(/\./g, '');
  else if (/^-?\d{1,3}(,\d{3})+\.\d+$/.test(s)) s = s.replace(/,/g, '');
  s = s.replace(',', '.');
  if (!/^-?(\d+(\.\d*)?|\.\d+)$/.test(s)) return null;
  const n = Number(s);
  if (!Number.isFinite(n)) return null;
  // Exactness: the number must read back as the same decimal the user typed.
  if (!toDecimal(s).equals(toDecimal(n))) return null;
  return n === 0 ? 0 : n;
}

function read(fields: PostedFields, name: string): string {
  if (!Object.hasOwn(fields, name)) return '';
  const raw = fields[name];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return typeof value === 'string' ? value.trim() : '';
}

function flag(fields: PostedFields, name: string): boolean {
  const v = read(fields, name).toLowerCase();
  return v === '1' || v === 'on' || v === 'true';
}

/** Row indices present for `group` (`items[3].name` → 3), ascending. */
function rowIndices(fields: PostedFields, group: string): number[] {
  const pattern = new RegExp(`^${group.replace(/[[\]]/g, '\\$&')}\\[(\\d{1,5})\\]\\.`);
  const found = new Set<number>();
  for (const name of Object.keys(fields)) {
    const m = pattern.exec(name);
    if (m) found.add(Number(m[1]));
  }
  return [...found].sort((a, b) => a - b);
}

export interface ParsedEditForm {
  /** The document to save through the API's validation. */
  invoice: Doc;
  /** Problems the parser found itself (malformed numbers), keyed by the field's path. */
  errors: Record<string, string>;
}

/** Like `parseEditForm`, plus the parser's own field errors, to show beside validation's. */
export function parseEditFormDetailed(fields: PostedFields): ParsedEditForm {
  const invoice: Doc = {};
  const errors: Record<string, string> = {};

  for (const f of [...DOCUMENT_FIELDS, ...EXTRA_FIELDS]) {
    const v = read(fields, f);
    if (v !== '') invoice[f] = v;
  }
  for (const f of FLAG_FIELDS) invoice[f] = flag(fields, f);

  const party = (prefix: string, names: readonly string[]): Doc => {
    const out: Doc = {};
    for (const f of names) {
      const v = read(fields, `${prefix}.${f}`);
      if (v !== '') out[f] = v;
    }
    return out;
  };
  invoice.seller = party('seller', SELLER_FIELDS);
  invoice.buyer = party('buyer', BUYER_FIELDS);

  const rows = (group: string, names: readonly string[], blankWhen: readonly string[]): Doc[] => {
    const out: Doc[] = [];
    for (const i of rowIndices(fields, group)) {
      const prefix = `${group}[${i}]`;
      if (flag(fields, `${prefix}._remove`)) continue;
      if (blankWhen.every((f) => read(fields, `${prefix}.${f}`) === '')) continue;
      out.push(party(prefix, names));
    }
    return out;
  };

  const items = rows('items', ITEM_FIELDS, ['name', 'qty', 'unit', 'price']);
  items.forEach((item, i) => {
    for (const f of ['qty', 'price', 'vat_pct'] as const) {
      const raw = item[f];
      if (typeof raw !== 'string') continue;
      const n = parseDecimalInput(raw);
      if (n === null) errors[`items[${i}].${f}`] = NUMBER_FORMAT_MESSAGE;
      else item[f] = n;
    }
    // The select's empty option is "Без НДС": an explicit null, not an omitted rate.
    if (!Object.hasOwn(item, 'vat_pct')) item.vat_pct = null;
  });
  invoice.items = items;

  const recipients = rows('api_recipients', RECIPIENT_FIELDS, RECIPIENT_FIELDS);
  if (recipients.length > 0) invoice.api_recipients = recipients;
  const signers = rows('signers', SIGNER_FIELDS, ['name', 'position']);
  if (signers.length > 0) invoice.signers = signers;

  return { invoice, errors };
}

/** Turns the posted edit form into the invoice document the API accepts. */
export function parseEditForm(fields: PostedFields): Record<string, unknown> {
  return parseEditFormDetailed(fields).invoice;
}

/**
 * The document to save: the form's keys from `edited`, every other key from `stored`
 * (so fields the form does not show survive an edit). Party keys the form does not show
 * (e.g. `seller.ogrn`) are kept the same way.
 */
export function mergeEditedDocument(stored: Doc, edited: Doc): Doc {
  // Object.fromEntries creates own data properties, so a stored "__proto__" key stays a key.
  const partyOf = (key: 'seller' | 'buyer', shown: readonly string[]): Doc => {
    const kept = isRecord(stored[key]) ? Object.entries(stored[key]).filter(([k]) => !shown.includes(k)) : [];
    const given = isRecord(edited[key]) ? Object.entries(edited[key]) : [];
    return Object.fromEntries([...kept, ...given]);
  };
  return Object.fromEntries([
    ...Object.entries(stored).filter(([k]) => !EDIT_FORM_KEYS.includes(k)),
    ...Object.entries(edited),
    ['seller', partyOf('seller', SELLER_FIELDS)],
    ['buyer', partyOf('buyer', BUYER_FIELDS)],
  ]);
}
