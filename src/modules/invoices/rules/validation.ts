/**
 * Validation and normalization of an invoice document (spec 2.2, operating contract §4
 * "Documents"). Pure: no database, clock or transport. The service calls `validateInvoice` on
 * the document `parseWriteEnvelope` extracted, refuses the write when it fails (`toApiError`)
 * and stores `invoice` and `warnings` when it passes.
 *
 * Order and outcome:
 * 1. Prohibited fields (prohibited.ts) first: a document with media is refused as
 *    `prohibited_field` and nothing else is reported, since the client must remove them anyway.
 * 2. Then one pass over every known field collects every error and every missing path, so a
 *    client fixes a document in one round trip. Any error refuses it as `validation_failed`.
 * 3. Warnings (checksums, unusual VAT rates, EDO id format) never refuse a document.
 *
 * Decisions the contract leaves open:
 * - "Missing" is absent, null, or a blank string. Such required paths go to `missing_fields`
 *   and to `errors` with code `required`. A missing `seller` or `buyer` object is reported as
 *   its required leaf (`seller.inn`, `buyer.name`), which is what the client must supply; an
 *   empty or absent `items` is reported as `items`.
 * - A present value of the wrong JSON type is `invalid_type`: `"2"` is not a quantity. Nothing
 *   is coerced, so the stored document is exactly what the client meant.
 * - Optional known fields given as null (or, for strings, blank) count as not given: booleans
 *   take their default and strings are dropped, so "not given" has one representation and the
 *   service can fill the seller's requisites from the organization. `vat_pct: null` stays null
 *   (it means "без НДС"). Unknown properties are kept exactly as sent.
 * - Requisites (`inn`, `kpp`, `bik`, `account`, `corr_account`) are capped at 64 characters,
 *   e-mails at 320, bank names at 500: bounds well above any real value that keep storage sane.
 * - Nesting deeper than 32 levels is `too_deep`: no real document needs it, and it protects the
 *   recursive JSON serializers downstream.
 * - More than 1000 items is one `too_many_items` error; the lines are then not checked one by
 *   one, which would only multiply errors for a document that must be split anyway.
 */
import { ApiError } from '../../../shared/errors.js';
import { CURRENCY_CODES, type Currency } from '../../../shared/reference.js';
import { isValidEdoParticipantId } from './checksums.js';
import { findBoundViolations } from './bounds.js';
import { findProhibitedFields, MAX_REPORTED_ISSUES } from './prohibited.js';
import { requisiteWarnings } from './requisites.js';
import type { ApiRecipient, InvoiceDirection, NormalizedInvoice, NormalizedItem, Party, ValidationIssue } from '../model/invoice.model.js';
import { SELLER_STATUSES, type SellerStatus } from './statuses.js';
import { INVOICE_LIMITS as L, IssueCollector, isBlank, isRecord, readBoolean, readDate, readEnum, readNumber, readString } from './validation-fields.js';

export { requisiteWarnings } from './requisites.js';
export { INVOICE_LIMITS } from './validation-fields.js';
export type { ApiRecipient, InvoiceDirection, NormalizedInvoice, NormalizedItem, Party, ValidationIssue } from '../model/invoice.model.js';

export interface InvoiceValidationSuccess {
  ok: true;
  invoice: NormalizedInvoice;
  warnings: ValidationIssue[];
}

export interface InvoiceValidationFailure {
  ok: false;
  error: 'prohibited_field' | 'validation_failed';
  /** Summary naming the offending paths (every one of them for `prohibited_field`). */
  details: string;
  missing_fields: string[];
  /** The first MAX_REPORTED_ISSUES (100) issues. */
  errors: ValidationIssue[];
  /** How many further issues `errors` leaves out; absent when it lists them all. */
  errors_not_listed?: number;
}

export type InvoiceValidationResult = InvoiceValidationSuccess | InvoiceValidationFailure;

const PUBLIC_ID = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * Document properties the service owns (statuses, revision, team, totals, metadata, links):
 * the response states them beside `invoice`, so a client's copy inside the document could only
 * contradict them. They are dropped from the stored document with a `service_owned_field`
 * warning each. `seller_status` and `public_id` are the client's and stay.
 */
export const SERVICE_OWNED_FIELDS = [
  'ok', 'team_id', 'revision', 'etag', 'status', 'buyer_status', 'buyer_status_label', 'seller_status_label',
  'service_status', 'service_status_label', 'service_status_reason', 'totals', 'subtotal', 'vat_total', 'total',
  'total_minor_units', 'amount_in_words', 'vat_breakdown', 'items_count', 'metadata', 'validation', 'notifications',
  'share_links', 'share_gate', 'api', 'qr', 'document', 'document_kind', 'document_public_id', 'kind_version',
  'kind_ordinal', 'sort_order', 'title_is_custom', 'package_public_id', 'legacy_invoice_public_id', 'source_type',
  'editor_mode', 'created_at', 'last_modified_at', 'api_created_at', 'api_updated_at', 'created_by_login',
  'last_modified_by_login', 'seller_edo_id', 'api_key_id', 'api_key_name', 'api_request_host', 'viewed_at',
  'payment_reported_at', 'demo_mode', 'demo_guids', 'edo',
] as const;
/** Per line: the computed amounts (the response's `totals.lines`). */
export const SERVICE_OWNED_ITEM_FIELDS = ['line', 'line_no', 'amount', 'net', 'vat', 'gross'] as const;

function dropServiceOwned(out: Record<string, unknown>, path: string, keys: readonly string[], c: IssueCollector): void {
  for (const key of keys) {
    if (!Object.hasOwn(out, key)) continue;
    delete out[key];
    const field = path === '' ? key : `${path}.${key}`;
    c.warn(field, 'service_owned_field', `${field} is set by the service and was not stored; see the response's status, totals and metadata`);
  }
}
const DIRECTIONS: readonly InvoiceDirection[] = ['outgoing', 'incoming'];
const SELLER_STATUS_VALUES = Object.keys(SELLER_STATUSES) as SellerStatus[];
const DEFAULT_UNIT = 'шт';

/** Own enumerable properties copied as data properties: a `__proto__` key stays a plain key. */
function copyRecord(value: Record<string, unknown>): Record<string, unknown> {
  // What Object.fromEntries(Object.entries(value)) gives, without the array of pairs.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') Object.defineProperty(out, key, { value: value[key], enumerable: true, writable: true, configurable: true });
    else out[key] = value[key];
  }
  return out;
}

type StringSpec = Record<string, { max: number; trim?: boolean }>;

/**
 * Checks the typed string members of an object and writes them back normalized: trimmed where
 * the spec says so, dropped when null or blank. `required` members that are missing are reported.
 */
function normalizeStrings(out: Record<string, unknown>, path: string, spec: StringSpec, c: IssueCollector, required: readonly string[] = []): void {
  for (const [key, { max, trim }] of Object.entries(spec)) {
    const fieldPath = `${path}.${key}`;
    if (isBlank(out[key])) {
      if (required.includes(key)) c.missing(fieldPath);
      delete out[key];
      continue;
    }
    const value = readString(out[key], fieldPath, c, { max, trim: trim ?? false });
    if (value !== undefined) out[key] = value;
  }
}

const REQUISITE = { max: L.requisiteMaxLength, trim: true };
const PARTY_STRINGS: StringSpec = {
  name: { max: L.partyNameMaxLength },
  inn: REQUISITE,
  kpp: REQUISITE,
  email: { max: L.emailMaxLength },
  address: { max: L.addressMaxLength },
  bank_name: { max: L.bankNameMaxLength },
  bik: REQUISITE,
  account: REQUISITE,
  corr_account: REQUISITE,
};

function normalizeParty(value: unknown, path: 'seller' | 'buyer', required: 'inn' | 'name', c: IssueCollector): Party {
  if (isBlank(value)) {
    c.missing(`${path}.${required}`, `${path}.${required} is required (the ${path} object is missing)`);
    return {};
  }
  if (!isRecord(value)) {
    c.error(path, 'invalid_type', `${path} must be an object`);
    return {};
  }
  const out: Party = copyRecord(value);
  normalizeStrings(out, path, PARTY_STRINGS, c, [required]);
  return out;
}

function normalizeItem(value: unknown, path: string, c: IssueCollector): NormalizedItem | undefined {
  if (!isRecord(value)) {
    c.error(path, 'invalid_type', `${path} must be an object`);
    return undefined;
  }
  const out = copyRecord(value);
  const name = isBlank(value.name) ? c.missing(`${path}.name`) : readString(value.name, `${path}.name`, c, { max: L.itemNameMaxLength });
  const qty = readNumber(value.qty, `${path}.qty`, c, { required: true, min: 0, minExclusive: true, max: L.qtyMax, maxDecimals: L.qtyMaxDecimals });
  const price = readNumber(value.price, `${path}.price`, c, { required: true, min: 0, max: L.priceMax, maxDecimals: L.priceMaxDecimals });
  const unit = isBlank(value.unit) ? DEFAULT_UNIT : readString(value.unit, `${path}.unit`, c, { max: L.unitMaxLength });
  const vatPct = readNumber(value.vat_pct, `${path}.vat_pct`, c, { required: false, min: 0, max: L.vatPctMax, maxDecimals: L.vatPctMaxDecimals });
  if (vatPct !== undefined && !(L.standardVatPcts as readonly number[]).includes(vatPct)) {
    c.warn(`${path}.vat_pct`, 'unusual_vat_rate', `${path}.vat_pct ${vatPct} is not one of the Russian rates ${L.standardVatPcts.join(', ')}`);
  }
  if (name === undefined || qty === undefined || price === undefined || unit === undefined) return undefined;
  dropServiceOwned(out, path, SERVICE_OWNED_ITEM_FIELDS, c);
  return Object.assign(out, { name, qty, price, unit, vat_pct: vatPct ?? null });
}

function normalizeItems(value: unknown, c: IssueCollector): NormalizedItem[] {
  if (value === undefined || value === null) {
    c.missing('items', 'items is required: at least one item');
    return [];
  }
  if (!Array.isArray(value)) {
    c.error('items', 'invalid_type', 'items must be an array of items');
    return [];
  }
  if (value.length === 0) {
    c.missing('items', 'items must contain at least one item');
    return [];
  }
  if (value.length > L.itemsMax) {
    c.error('items', 'too_many_items', `items has ${value.length} entries; at most ${L.itemsMax} are allowed`);
    return [];
  }
  const items: NormalizedItem[] = [];
  for (let i = 0; i < value.length; i++) {
    const item = normalizeItem(value[i], `items[${i}]`, c);
    if (item) items.push(item);
  }
  return items;
}

/** An optional array of objects; each element is handed to `each` for its own fields. */
function normalizeObjectArray(
  doc: Record<string, unknown>,
  key: string,
  max: number,
  c: IssueCollector,
  each: (out: Record<string, unknown>, path: string) => void = () => undefined,
): Array<Record<string, unknown>> | undefined {
  const value = doc[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    c.error(key, 'invalid_type', `${key} must be an array`);
    return undefined;
  }
  if (value.length > max) {
    c.error(key, 'too_many_items', `${key} has ${value.length} entries; at most ${max} are allowed`);
    return undefined;
  }
  const out: Array<Record<string, unknown>> = [];
  value.forEach((element: unknown, i) => {
    const path = `${key}[${i}]`;
    if (!isRecord(element)) {
      c.error(path, 'invalid_type', `${path} must be an object`);
      return;
    }
    const copy = copyRecord(element);
    each(copy, path);
    out.push(copy);
  });
  return out;
}

const RECIPIENT_STRINGS: StringSpec = {
  email: { max: L.emailMaxLength, trim: true },
  name: { max: L.recipientFieldMaxLength },
  position: { max: L.recipientFieldMaxLength },
};

/** Sets `key` when `value` is defined, removes it otherwise (null and blank mean "not given"). */
function setOrDrop(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) delete out[key];
  else out[key] = value;
}

function optionalText(doc: Record<string, unknown>, key: string, max: number, c: IssueCollector, trim = false): string | undefined {
  return isBlank(doc[key]) ? undefined : readString(doc[key], key, c, { max, trim });
}

function optionalObject(doc: Record<string, unknown>, key: string, c: IssueCollector): Record<string, unknown> | undefined {
  const value = doc[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    c.error(key, 'invalid_type', `${key} must be an object`);
    return undefined;
  }
  return copyRecord(value);
}

/**
 * Validates a document and returns it normalized, or every reason it cannot be saved.
 * Never throws, whatever `doc` holds.
 */
export function validateInvoice(doc: Record<string, unknown>): InvoiceValidationResult {
  const prohibited = findProhibitedFields(doc, L.maxDepth);
  if (prohibited.total > 0) {
    const rest = prohibited.total - prohibited.issues.length;
    return {
      ok: false,
      error: 'prohibited_field',
      details:
        `Prohibited fields (media and URLs are not accepted through the API; images come from the organization data): ` +
        prohibited.issues.map((p) => p.field).join(', ') +
        (rest > 0 ? ` and ${rest} more` : ''),
      missing_fields: [],
      errors: prohibited.issues,
      ...(rest > 0 ? { errors_not_listed: rest } : {}),
    };
  }

  const c = new IssueCollector();
  const bounds = findBoundViolations(doc);
  const out = copyRecord(doc);
  dropServiceOwned(out, '', SERVICE_OWNED_FIELDS, c);
  if (!isBlank(doc.public_id)) {
    const publicId = readString(doc.public_id, 'public_id', c, { max: Infinity });
    if (publicId !== undefined && !PUBLIC_ID.test(publicId)) {
      c.error('public_id', 'invalid_format', 'public_id must be 8–64 characters of A–Z, a–z, 0–9, _ and -');
    }
    setOrDrop(out, 'public_id', publicId);
  } else delete out.public_id;

  out.number = isBlank(doc.number) ? c.missing('number') : readString(doc.number, 'number', c, { max: L.numberMaxLength, trim: true });
  out.date = readDate(doc.date, 'date', c, true);
  if (isBlank(doc.currency)) c.missing('currency');
  else if (typeof doc.currency !== 'string') c.error('currency', 'invalid_type', 'currency must be a string');
  else if (!(CURRENCY_CODES as readonly string[]).includes(doc.currency)) {
    c.error('currency', 'invalid_currency', `currency must be one of ${CURRENCY_CODES.join(', ')}`);
  }
  out.invoice_direction = readEnum(doc.invoice_direction, 'invoice_direction', DIRECTIONS, c) ?? 'outgoing';

  const seller = normalizeParty(doc.seller, 'seller', 'inn', c);
  const buyer = normalizeParty(doc.buyer, 'buyer', 'name', c);
  c.warnAll(requisiteWarnings(seller, 'seller'));
  c.warnAll(requisiteWarnings(buyer, 'buyer'));
  out.seller = seller;
  out.buyer = buyer;
  out.items = normalizeItems(doc.items, c);

  out.prices_include_vat = readBoolean(doc.prices_include_vat, 'prices_include_vat', c) ?? false;
  out.public_share_enabled = readBoolean(doc.public_share_enabled, 'public_share_enabled', c) ?? true;
  out.show_payment_qr = readBoolean(doc.show_payment_qr, 'show_payment_qr', c) ?? true;
  setOrDrop(out, 'seller_status', readEnum(doc.seller_status, 'seller_status', SELLER_STATUS_VALUES, c));
  setOrDrop(out, 'due_date', isBlank(doc.due_date) ? undefined : readDate(doc.due_date, 'due_date', c, false));
  setOrDrop(out, 'information_system', optionalText(doc, 'information_system', L.informationSystemMaxLength, c));
  setOrDrop(out, 'comment', optionalText(doc, 'comment', L.textMaxLength, c));
  setOrDrop(out, 'purpose', optionalText(doc, 'purpose', L.textMaxLength, c));
  const edoId = optionalText(doc, 'buyer_edo_id', L.buyerEdoIdMaxLength, c, true);
  if (edoId !== undefined && !isValidEdoParticipantId(edoId)) {
    c.warn('buyer_edo_id', 'edo_id_format', 'buyer_edo_id is not an EDO participant id (operator code + up to 43 of A–Z, 0–9, @ . -)');
  }
  setOrDrop(out, 'buyer_edo_id', edoId);

  out.api_recipients =
    normalizeObjectArray(doc, 'api_recipients', L.recipientsMax, c, (r, path) => normalizeStrings(r, path, RECIPIENT_STRINGS, c)) ?? [];
  setOrDrop(out, 'manager', optionalObject(doc, 'manager', c));
  setOrDrop(out, 'buyer_contact', optionalObject(doc, 'buyer_contact', c));
  setOrDrop(out, 'signers', normalizeObjectArray(doc, 'signers', L.signersMax, c));

  // Bounds the known fields did not already report (a known field reports its own limit).
  const reported = new Set(c.errors.map((e) => e.field));
  for (const issue of bounds) if (!reported.has(issue.field)) c.error(issue.field, issue.code, issue.message);

  if (c.errors.length > 0) {
    const errors = c.errors.slice(0, MAX_REPORTED_ISSUES);
    const rest = c.errors.length - errors.length;
    return {
      ok: false,
      error: 'validation_failed',
      details: c.summary(),
      missing_fields: c.missingFields,
      errors,
      ...(rest > 0 ? { errors_not_listed: rest } : {}),
    };
  }
  return { ok: true, invoice: out as NormalizedInvoice, warnings: c.warnings };
}

/** The refusal as the API reports it: 400 with `details`, `missing_fields` and every error. */
export function toApiError(failure: InvoiceValidationFailure): ApiError {
  return new ApiError(failure.error, {
    details: failure.details,
    missing_fields: failure.missing_fields,
    errors: failure.errors,
    ...(failure.errors_not_listed !== undefined ? { errors_not_listed: failure.errors_not_listed } : {}),
  });
}
