/**
 * Payment QR payload per GOST R 56042-2014 ("ST00012|Name=…|PersonalAcc=…|…").
 * Builds the text only; rendering it to an image (in the bytes of the declared encoding) is the
 * QR renderer's job.
 *
 * Encoding, chosen per payload:
 * - UTF-8 (`ST00012`) by default;
 * - windows-1251 (`ST00011`) when the required block exceeds 300 bytes in UTF-8 but fits in
 *   300 bytes of windows-1251 and every character of the whole payload exists in windows-1251
 *   (Cyrillic takes one byte there, two in UTF-8). The 300 bytes are counted in the declared
 *   encoding, as QRCoder's RussiaPaymentOrder does;
 * - otherwise `required_block_too_long`, naming the longer of Name / BankName to shorten.
 *
 * Length policy, chosen deliberately:
 * - Free-text fields are truncated to their GOST maximum, counted in characters (code points):
 *   Name ≤ 160, BankName ≤ 45, Purpose ≤ 210. Banking apps identify the payee by account, BIC
 *   and INN; a shortened name or purpose still pays the right account, a refused QR pays nobody.
 * - Identifiers (PersonalAcc, BIC, CorrespAcc, PayeeINN, KPP, Sum) are never truncated: a cut
 *   account is a wrong account. One over its GOST length is a `QrPayloadError`.
 * - Values are trimmed and control characters (line breaks, tabs) become spaces, because
 *   scanners split on them and the print form does not need them.
 * - Only the required block (Name … CorrespAcc, after the header) is limited to 300 bytes, counted
 *   in the declared encoding (see above).
 */
import {
  fitsWindows1251,
  QR_ENCODING_DIGIT,
  QR_HEADER_PREFIX,
  qrByteLength as byteLength,
  qrPayloadBytes,
  qrPayloadEncoding,
  type QrEncoding,
} from '../../../shared/qr-encoding.js';

export type QrPayloadErrorCode = 'missing_required' | 'invalid_value' | 'no_free_separator' | 'required_block_too_long';

/** Raised when no GOST-conformant payload can be built; `code` says which rule stopped it. */
export class QrPayloadError extends Error {
  readonly code: QrPayloadErrorCode;
  /** The GOST key of the value to change (`Name`, `BankName`, `Sum`, …), when one is to blame. */
  readonly key: string | null;

  constructor(code: QrPayloadErrorCode, message: string, key: string | null = null) {
    super(message);
    this.name = 'QrPayloadError';
    this.code = code;
    this.key = key;
  }
}

/** The encodings GOST R 56042 declares by the header's 7th character that we emit. */
export type { QrEncoding };
export { qrPayloadBytes, qrPayloadEncoding };

export interface PaymentQrInput {
  /** Payee name (Name, ≤ 160 characters, truncated). */
  name: string;
  /** Payee's settlement account (PersonalAcc, 20 characters). */
  personalAcc: string;
  /** Payee's bank (BankName, ≤ 45 characters, truncated). */
  bankName: string;
  /** Bank BIK (BIC, 9 characters). */
  bic: string;
  /** Bank corr. account (CorrespAcc, ≤ 20 characters). */
  correspAcc: string;
  /** PayeeINN, ≤ 12 characters; omitted when empty. */
  payeeInn?: string | null;
  /** KPP, ≤ 9 characters; omitted when empty. */
  kpp?: string | null;
  /** Amount in kopecks (Sum, digits only, ≤ 18); omitted when absent. Leading zeros are dropped. */
  sumKopecks?: string | number | bigint | null;
  /** Purpose, ≤ 210 characters, truncated; put the invoice number and date here. */
  purpose?: string | null;
}

/** `|` first, then the GOST fallbacks in the order the standard lists them. */
const SEPARATORS = ['|', '#', ';', ':', '^', '_', '~', '{', '}', '!', '$', '%', '&', '(', ')', '*', '+', ',', '/', '@'] as const;
const REQUIRED_BLOCK_MAX_BYTES = 300;

interface FieldRule {
  key: string;
  /** Maximum length in characters. */
  max: number;
  /** Free text is truncated to `max`; identifiers are refused beyond it. */
  truncate: boolean;
}

const NAME: FieldRule = { key: 'Name', max: 160, truncate: true };
const PERSONAL_ACC: FieldRule = { key: 'PersonalAcc', max: 20, truncate: false };
const BANK_NAME: FieldRule = { key: 'BankName', max: 45, truncate: true };
const BIC: FieldRule = { key: 'BIC', max: 9, truncate: false };
const CORRESP_ACC: FieldRule = { key: 'CorrespAcc', max: 20, truncate: false };
const PAYEE_INN: FieldRule = { key: 'PayeeINN', max: 12, truncate: false };
const KPP: FieldRule = { key: 'KPP', max: 9, truncate: false };
const SUM: FieldRule = { key: 'Sum', max: 18, truncate: false };
const PURPOSE: FieldRule = { key: 'Purpose', max: 210, truncate: true };

const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

function clean(value: string | null | undefined): string {
  return (value ?? '').replace(CONTROL_CHARS, ' ').trim();
}

/** Applies the field's length rule; counts code points so a surrogate pair is never split. */
function limit(rule: FieldRule, value: string): string {
  const chars = Array.from(value);
  if (chars.length <= rule.max) return value;
  if (!rule.truncate) {
    throw new QrPayloadError('invalid_value', `${rule.key} is ${chars.length} characters, GOST R 56042 allows at most ${rule.max}`, rule.key);
  }
  return chars.slice(0, rule.max).join('').trimEnd();
}

function required(rule: FieldRule, value: string): [string, string] {
  const cleaned = clean(value);
  if (cleaned === '') throw new QrPayloadError('missing_required', `${rule.key} is required in a payment QR`, rule.key);
  return [rule.key, limit(rule, cleaned)];
}

function optional(rule: FieldRule, value: string | null | undefined): [string, string] | null {
  const cleaned = clean(value);
  return cleaned === '' ? null : [rule.key, limit(rule, cleaned)];
}

function normalizeSum(sum: string | number | bigint | null | undefined): string | null {
  if (sum === null || sum === undefined) return null;
  if (typeof sum === 'number' && !Number.isSafeInteger(sum)) {
    throw new QrPayloadError('invalid_value', `Sum must be a whole number of kopecks, got ${String(sum)}`, 'Sum');
  }
  const text = String(sum).trim();
  if (text === '') return null;
  if (!/^\d+$/.test(text)) {
    throw new QrPayloadError('invalid_value', `Sum must be a non-negative whole number of kopecks (digits only), got ${JSON.stringify(text)}`, 'Sum');
  }
  return BigInt(text).toString();
}

/**
 * Builds the GOST R 56042-2014 payment string: header `ST00012` (or `ST00011`, see the module
 * comment) + separator, the required
 * fields in GOST order (Name, PersonalAcc, BankName, BIC, CorrespAcc), then PayeeINN, KPP,
 * Sum and Purpose when given. The separator is `|` unless a value contains it; then it is the
 * first GOST fallback that occurs in no value. Throws `QrPayloadError` when a required value
 * is empty, an identifier is too long, no separator is free, or the required block exceeds
 * 300 bytes. Deterministic: equal input gives a byte-identical string.
 */
export function buildPaymentQrPayload(input: PaymentQrInput): string {
  const requiredPairs: Array<[string, string]> = [
    required(NAME, input.name),
    required(PERSONAL_ACC, input.personalAcc),
    required(BANK_NAME, input.bankName),
    required(BIC, input.bic),
    required(CORRESP_ACC, input.correspAcc),
  ];
  const sum = normalizeSum(input.sumKopecks);
  const optionalPairs = [
    optional(PAYEE_INN, input.payeeInn),
    optional(KPP, input.kpp),
    sum === null ? null : ([SUM.key, limit(SUM, sum)] as [string, string]),
    optional(PURPOSE, input.purpose),
  ].filter((pair): pair is [string, string] => pair !== null);

  const pairs = [...requiredPairs, ...optionalPairs];
  const separator = SEPARATORS.find((candidate) => pairs.every(([, value]) => !value.includes(candidate)));
  if (separator === undefined) {
    throw new QrPayloadError(
      'no_free_separator',
      `every separator GOST R 56042 allows (${SEPARATORS.join(' ')}) occurs in some value; remove one of them from the name, bank name or purpose`,
    );
  }

  const join = (list: Array<[string, string]>): string => list.map(([key, value]) => `${key}=${value}`).join(separator);
  const requiredBlock = join(requiredPairs);
  const body = optionalPairs.length > 0 ? requiredBlock + separator + join(optionalPairs) : requiredBlock;
  const utf8Bytes = byteLength(requiredBlock, 'utf-8');
  let encoding: QrEncoding = 'utf-8';
  if (utf8Bytes > REQUIRED_BLOCK_MAX_BYTES) {
    const cp1251Bytes = fitsWindows1251(body) ? byteLength(requiredBlock, 'windows-1251') : null;
    if (cp1251Bytes === null || cp1251Bytes > REQUIRED_BLOCK_MAX_BYTES) {
      // Name and BankName are the only free text in the block: blame the longer one.
      const name = requiredPairs[0]?.[1] ?? '';
      const bank = requiredPairs[2]?.[1] ?? '';
      const key = byteLength(name, 'utf-8') >= byteLength(bank, 'utf-8') ? NAME.key : BANK_NAME.key;
      const cp1251 = cp1251Bytes === null ? 'a character has no windows-1251 byte' : `${cp1251Bytes} in windows-1251`;
      throw new QrPayloadError(
        'required_block_too_long',
        `required QR block is ${utf8Bytes} bytes in UTF-8 (${cp1251}), GOST R 56042 allows ${REQUIRED_BLOCK_MAX_BYTES}; shorten ${key}`,
        key,
      );
    }
    encoding = 'windows-1251';
  }
  return QR_HEADER_PREFIX + QR_ENCODING_DIGIT[encoding] + separator + body;
}
