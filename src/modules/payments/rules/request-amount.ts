/**
 * The money rule of a request (operating contract §6): an amount is a JSON number or a decimal
 * string with at most two fraction digits, greater than 0 and at most 999,999,999,999.99;
 * anything else is 400 `validation_failed` naming the field. The result is exact kopecks.
 *
 * A JSON number is read from its shortest round-tripping decimal form (`String(n)`), never by
 * arithmetic: 840.5 is "840.5" → 84050 kopecks, while 0.1 + 0.2 is "0.30000000000000004" and
 * is refused (more than two fraction digits), as is any exponent form ("1e+21", "5e-7"):
 * `String(n)` only writes one outside 1e-7 ≤ |n| < 1e21, which is far outside the range here.
 */
import { ApiError } from '../../../shared/errors.js';

/** 999,999,999,999.99 in kopecks. */
export const MAX_REQUEST_AMOUNT_KOPECKS = 99_999_999_999_999n;

/** Digits, optionally `.` and one or two digits. 15 integer digits hold the maximum and leading zeros. */
const REQUEST_AMOUNT = /^(\d{1,15})(?:\.(\d{1,2}))?$/;

export type RequestAmountIssue = 'required' | 'invalid_type' | 'invalid_amount' | 'out_of_range';

export type RequestAmountResult =
  | { ok: true; kopecks: bigint }
  | { ok: false; code: RequestAmountIssue; message: string };

/** Reads a request amount; `field` names it in the message. */
export function parseRequestAmount(value: unknown, field = 'amount'): RequestAmountResult {
  let literal: string;
  if (value === undefined || value === null) return { ok: false, code: 'required', message: `${field} is required` };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, code: 'invalid_amount', message: `${field} must be a finite number` };
    literal = String(value);
  } else if (typeof value === 'string') {
    literal = value;
  } else {
    return { ok: false, code: 'invalid_type', message: `${field} must be a number or a decimal string` };
  }
  const m = REQUEST_AMOUNT.exec(literal);
  if (m === null) {
    return { ok: false, code: 'invalid_amount', message: `${field} must be a positive decimal with at most two fraction digits, got ${JSON.stringify(literal.slice(0, 40))}` };
  }
  const kopecks = BigInt(m[1] as string) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
  if (kopecks <= 0n || kopecks > MAX_REQUEST_AMOUNT_KOPECKS) {
    return { ok: false, code: 'out_of_range', message: `${field} must be greater than 0 and at most 999999999999.99` };
  }
  return { ok: true, kopecks };
}

/** parseRequestAmount, or the 400 `validation_failed` naming `field` (the shape invoices use). */
export function requireRequestAmount(value: unknown, field = 'amount'): bigint {
  const result = parseRequestAmount(value, field);
  if (result.ok) return result.kopecks;
  throw new ApiError('validation_failed', {
    details: `1 field is invalid: ${result.message}`,
    missing_fields: result.code === 'required' ? [field] : [],
    errors: [{ field, code: result.code, message: result.message }],
  });
}
