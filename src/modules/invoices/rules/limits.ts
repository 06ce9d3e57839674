/**
 * The document's limits: what a real invoice needs, generously. Pure constants, imported by the
 * request schemas (the OpenAPI bounds) and by validation (the same bounds enforced with the
 * spec's error shape), so the two cannot drift.
 */
import { STANDARD_VAT_PCTS } from '../../../shared/reference.js';

/**
 * Bounds of the document (operating contract §4 and the decisions in validation.ts). Exported
 * so the OpenAPI schema and the portal editor can state the same numbers.
 */
export const INVOICE_LIMITS = {
  numberMaxLength: 64,
  itemsMax: 1000,
  itemNameMaxLength: 1000,
  unitMaxLength: 32,
  qtyMax: 1e9,
  qtyMaxDecimals: 6,
  priceMax: 1e12,
  priceMaxDecimals: 4,
  vatPctMax: 100,
  vatPctMaxDecimals: 2,
  /** Rates that give no `unusual_vat_rate` warning. */
  standardVatPcts: STANDARD_VAT_PCTS as readonly number[],
  textMaxLength: 2000,
  informationSystemMaxLength: 200,
  buyerEdoIdMaxLength: 46,
  recipientsMax: 50,
  recipientFieldMaxLength: 200,
  signersMax: 10,
  partyNameMaxLength: 500,
  addressMaxLength: 1000,
  bankNameMaxLength: 500,
  requisiteMaxLength: 64,
  emailMaxLength: 320,
  yearMin: 1900,
  yearMax: 2999,
  maxDepth: 32,
  /** Any string without a limit of its own (additional properties, manager, signers...). */
  anyStringMaxLength: 2000,
  /** Any property name. */
  keyMaxLength: 200,
  /** Any array without a limit of its own. */
  anyArrayMaxItems: 1000,
  /** Any object: known fields plus additional properties. */
  objectMaxProperties: 200,
} as const;

/**
 * Limits by property name for the free-form parts of a document (what a real invoice needs,
 * generously); any other string is bounded by `anyStringMaxLength`.
 */
export const FIELD_MAX_LENGTH: Readonly<Record<string, number>> = {
  name: INVOICE_LIMITS.partyNameMaxLength,
  full_name: INVOICE_LIMITS.partyNameMaxLength,
  position: INVOICE_LIMITS.recipientFieldMaxLength,
  email: INVOICE_LIMITS.emailMaxLength,
  phone: 100,
  address: INVOICE_LIMITS.addressMaxLength,
  document_title: 500,
  basis: INVOICE_LIMITS.textMaxLength,
  purpose: INVOICE_LIMITS.textMaxLength,
  comment: INVOICE_LIMITS.textMaxLength,
};
