/**
 * Decimal primitives for money and quantities: parsing without binary floating point, and the
 * one rounding step (half-up to kopecks). Invoice totals, the amount in words and the Russian
 * formatting all build on these.
 */
import { Decimal as DecimalBase } from 'decimal.js';

/** Local Decimal: 40 significant digits, half-up (never banker's) rounding. */
export const Decimal = DecimalBase.clone({ precision: 40, rounding: DecimalBase.ROUND_HALF_UP });
export type Decimal = InstanceType<typeof Decimal>;

/** Plain decimal notation, optionally with an exponent (`String(1e-7)` is `1e-7`). No hex, NaN, Infinity. */
export const DECIMAL_LITERAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export type DecimalInput = string | number;

/**
 * Parses a money or quantity value without passing through binary floating point arithmetic:
 * numbers go through `String(n)`, which yields the shortest round-tripping literal (0.1 → "0.1").
 * Throws on anything that is not a finite decimal, naming `what` so the caller can find it.
 */
export function toDecimal(value: DecimalInput, what = 'value'): Decimal {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${what} must be a finite number, got ${String(value)}`);
    return new Decimal(String(value));
  }
  if (typeof value !== 'string' || !DECIMAL_LITERAL.test(value.trim())) {
    throw new Error(`${what} must be a finite decimal number, got ${JSON.stringify(value)}`);
  }
  return new Decimal(value.trim());
}

/** Rounds half-up to kopecks; the only rounding step the totals use. */
export function roundKopecks(d: Decimal): Decimal {
  return d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
}

/** Two-decimal string; a negative zero prints as "0.00", never "-0.00". */
export function fixed2(d: Decimal): string {
  const r = roundKopecks(d);
  return r.isZero() ? '0.00' : r.toFixed(2);
}

/**
 * Formats a money value with exactly two decimals, rounding half-up ("990" → "990.00",
 * "0.385" → "0.39"). Throws on non-finite input, like every function here.
 */
export function formatMoney(value: DecimalInput): string {
  return fixed2(toDecimal(value));
}

/**
 * A money value as whole kopecks (cents): an integer string, "-" when negative, "0" for zero
 * ("1234.56" → "123456"). Exact at any size: the API's `*_minor_units` strings.
 */
export function toMinorUnits(value: DecimalInput): string {
  const kopecks = roundKopecks(toDecimal(value)).times(100);
  return kopecks.isZero() ? '0' : kopecks.toFixed(0);
}

/** Whole kopecks ("-123456") back to a two-decimal money string ("-1234.56"), exactly. */
export function fromMinorUnits(minor: string): string {
  if (!/^-?\d+$/.test(minor)) throw new Error(`minor units must be an integer string, got ${JSON.stringify(minor)}`);
  return fixed2(new Decimal(minor).div(100));
}
