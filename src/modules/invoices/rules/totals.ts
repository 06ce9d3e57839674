/**
 * Invoice totals in decimal arithmetic. The one place where line amounts, VAT and document
 * totals are computed: services, renderers and transports call this, never their own math.
 *
 * Rules (operating contract, section 4 "Documents"):
 * - line amount = qty × price, rounded half-up to kopecks;
 * - VAT on top: vat = amount × pct / 100 (rounded), net = amount, gross = amount + vat;
 * - VAT included: vat = amount × pct / (100 + pct) (rounded), net = amount − vat, gross = amount;
 * - `vat_pct` null/undefined is "без НДС": vat 0, `without_vat: true` (distinct from 0 %);
 * - each line is rounded first, then lines are summed (no rounding on the total).
 * Every money value leaves as a string with exactly two decimals.
 */
import { Decimal, fixed2, roundKopecks, toDecimal, toMinorUnits, type DecimalInput } from '../../../shared/money.js';

export interface TotalsItemInput {
  qty: DecimalInput;
  price: DecimalInput;
  /** Percent (22 means 22 %). null/undefined means "без НДС", which is not the same as 0. */
  vat_pct?: DecimalInput | null;
}

export interface TotalsOptions {
  /** true: prices already contain VAT ("В том числе НДС"); false: VAT is added on top. */
  pricesIncludeVat: boolean;
}

export interface LineTotals {
  /** qty × price rounded to kopecks, as entered (gross when VAT is included, net otherwise). */
  amount: string;
  net: string;
  vat: string;
  gross: string;
  vat_pct: number | null;
  without_vat: boolean;
}

export interface VatBreakdownRow {
  /** null is the "без НДС" group. */
  vat_pct: number | null;
  net: string;
  vat: string;
  gross: string;
}

export interface DocumentTotals {
  lines: LineTotals[];
  /** Σ net. */
  subtotal: string;
  /** Σ vat. */
  vat_total: string;
  /** subtotal + vat_total (equals Σ gross). */
  total: string;
  /** One row per distinct rate, in order of first appearance. */
  vat_breakdown: VatBreakdownRow[];
  /** total × 100 as an integer string, for the payment QR `Sum`; negative only if the total is. */
  total_kopecks: string;
}

/** Line amount: qty × price rounded half-up to kopecks, as a two-decimal string. */
export function lineAmount(qty: DecimalInput, price: DecimalInput): string {
  return fixed2(toDecimal(qty, 'qty').times(toDecimal(price, 'price')));
}

interface LineDecimals {
  net: Decimal;
  vat: Decimal;
  gross: Decimal;
  pct: Decimal | null;
}

function computeLine(item: TotalsItemInput, index: number, pricesIncludeVat: boolean): LineDecimals & { amount: Decimal } {
  const at = `items[${index}]`;
  const amount = roundKopecks(toDecimal(item.qty, `${at}.qty`).times(toDecimal(item.price, `${at}.price`)));
  const rawPct = item.vat_pct;
  if (rawPct === null || rawPct === undefined) {
    return { amount, net: amount, vat: new Decimal(0), gross: amount, pct: null };
  }
  const pct = toDecimal(rawPct, `${at}.vat_pct`);
  if (pricesIncludeVat) {
    const divisor = pct.plus(100);
    // A rate of −100 % would divide by zero; validation refuses it, here it is simply an error.
    if (divisor.isZero()) throw new Error(`${at}.vat_pct must not be -100`);
    const vat = roundKopecks(amount.times(pct).div(divisor));
    return { amount, net: amount.minus(vat), vat, gross: amount, pct };
  }
  const vat = roundKopecks(amount.times(pct).div(100));
  return { amount, net: amount, vat, gross: amount.plus(vat), pct };
}

/**
 * Computes per-line amounts, the VAT breakdown and document totals. Pure and deterministic:
 * the same items always give the same strings. Rounds each line, then sums, so the printed
 * lines always add up to the printed totals. Throws on a non-finite qty, price or vat_pct;
 * everything else (negative values, odd rates) is the validator's business, not this one's.
 *
 * Every document of ordinary figures (plain decimals of a few places, sums below 2^53 kopecks)
 * is computed in exact integer arithmetic on kopecks (`integerTotals`); anything else in decimal
 * arithmetic (`decimalTotals`, the reference: a property test holds the two equal).
 */
export function computeTotals(items: readonly TotalsItemInput[], options: TotalsOptions): DocumentTotals {
  return integerTotals(items, options) ?? decimalTotals(items, options);
}

/** A plain decimal (no exponent, sign only "-") of at most 15 digits: its digits as an integer and its places. */
const PLAIN_DECIMAL = /^(-?)(\d{1,15})(?:\.(\d{1,6}))?$/;
const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000, 10_000_000_000, 100_000_000_000, 1_000_000_000_000];

/** `value` as `units / 10^places` with `units` a safe integer; null when it is not that simple. */
function scaled(value: DecimalInput | null | undefined): { units: number; places: number } | null {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') return null;
  const m = PLAIN_DECIMAL.exec(text);
  if (m === null) return null;
  const fraction = m[3] ?? '';
  if ((m[2] as string).length + fraction.length > 15) return null;
  const units = Number(`${m[1]}${m[2]}${fraction}`);
  return { units: units === 0 ? 0 : units, places: fraction.length };
}

/** n / d rounded half away from zero (ROUND_HALF_UP), exactly; d > 0 and n a safe integer. */
function roundedQuotient(n: number, d: number): number {
  const magnitude = Math.abs(n);
  let q = Math.floor(magnitude / d);
  let r = magnitude - q * d;
  // The float quotient may be one off; the remainder puts it right.
  if (r < 0) {
    q -= 1;
    r += d;
  } else if (r >= d) {
    q += 1;
    r -= d;
  }
  if (2 * r >= d) q += 1;
  return n < 0 ? -q : q;
}

/** Kopecks as a two-decimal string, as fixed2 writes it ("-0.00" never). */
function kopecksText(k: number): string {
  if (k === 0) return '0.00';
  const magnitude = Math.abs(k);
  const cents = magnitude % 100;
  return `${k < 0 ? '-' : ''}${Math.floor(magnitude / 100)}.${cents < 10 ? '0' : ''}${cents}`;
}

/**
 * `decimalTotals` in integer kopecks, for documents whose every figure is a plain decimal with
 * few places and whose every product and sum stays a safe integer (checked at each step, so
 * each is exact); null for any other document (it then goes the decimal way, which also throws
 * what it throws). The same rules and the same strings as the decimal arithmetic.
 */
export function integerTotals(items: readonly TotalsItemInput[], options: TotalsOptions): DocumentTotals | null {
  const lines: LineTotals[] = [];
  const groups = new Map<number | null, { net: number; vat: number; gross: number }>();
  let subtotal = 0;
  let vatTotal = 0;
  const safe = Number.isSafeInteger;
  for (const item of items) {
    const qty = scaled(item.qty);
    const price = scaled(item.price);
    if (qty === null || price === null) return null;
    const product = qty.units * price.units;
    if (!safe(product)) return null;
    const places = qty.places + price.places;
    const amount = places <= 2 ? product * (POW10[2 - places] as number) : roundedQuotient(product, POW10[places - 2] as number);
    if (!safe(amount)) return null;
    let net = amount;
    let vat = 0;
    let gross = amount;
    let rate: number | null = null;
    if (item.vat_pct !== null && item.vat_pct !== undefined) {
      const pct = scaled(item.vat_pct);
      if (pct === null || pct.places > 4) return null;
      const n = amount * pct.units;
      if (!safe(n)) return null;
      const hundred = 100 * (POW10[pct.places] as number);
      if (options.pricesIncludeVat) {
        const divisor = hundred + pct.units;
        if (divisor <= 0) return null;
        vat = roundedQuotient(n, divisor);
        net = amount - vat;
      } else {
        vat = roundedQuotient(n, hundred);
        gross = amount + vat;
      }
      // The nearest double to the rate, as Decimal's toNumber() gives it (a division of exact integers
      // is correctly rounded). A rate written "-0" is a negative zero there: left to the decimal path.
      if (pct.units === 0 && String(item.vat_pct).startsWith('-')) return null;
      rate = pct.units / (POW10[pct.places] as number);
      if (!safe(gross) || !safe(net)) return null;
    }
    lines.push({ amount: kopecksText(amount), net: kopecksText(net), vat: kopecksText(vat), gross: kopecksText(gross), vat_pct: rate, without_vat: rate === null });
    subtotal += net;
    vatTotal += vat;
    if (!safe(subtotal) || !safe(vatTotal)) return null;
    const group = groups.get(rate);
    if (group) {
      group.net += net;
      group.vat += vat;
      group.gross += gross;
      if (!safe(group.net) || !safe(group.vat) || !safe(group.gross)) return null;
    } else {
      groups.set(rate, { net, vat, gross });
    }
  }
  const total = subtotal + vatTotal;
  if (!safe(total)) return null;
  return {
    lines,
    subtotal: kopecksText(subtotal),
    vat_total: kopecksText(vatTotal),
    total: kopecksText(total),
    vat_breakdown: [...groups].map(([rate, g]) => ({ vat_pct: rate, net: kopecksText(g.net), vat: kopecksText(g.vat), gross: kopecksText(g.gross) })),
    total_kopecks: String(total),
  };
}

/** `computeTotals` in decimal arithmetic: the reference, and the way for any figure the integer path declines. */
export function decimalTotals(items: readonly TotalsItemInput[], options: TotalsOptions): DocumentTotals {
  const lines: LineTotals[] = [];
  const groups = new Map<string, { pct: Decimal | null } & Omit<LineDecimals, 'pct'>>();
  let subtotal = new Decimal(0);
  let vatTotal = new Decimal(0);

  items.forEach((item, index) => {
    const line = computeLine(item, index, options.pricesIncludeVat);
    lines.push({
      amount: fixed2(line.amount),
      net: fixed2(line.net),
      vat: fixed2(line.vat),
      gross: fixed2(line.gross),
      vat_pct: line.pct === null ? null : line.pct.toNumber(),
      without_vat: line.pct === null,
    });
    subtotal = subtotal.plus(line.net);
    vatTotal = vatTotal.plus(line.vat);

    // Group by the numeric rate, so 22, "22" and "22.0" land in one row; null is its own group.
    const key = line.pct === null ? 'none' : line.pct.toString();
    const group = groups.get(key);
    if (group) {
      group.net = group.net.plus(line.net);
      group.vat = group.vat.plus(line.vat);
      group.gross = group.gross.plus(line.gross);
    } else {
      groups.set(key, { pct: line.pct, net: line.net, vat: line.vat, gross: line.gross });
    }
  });

  const total = subtotal.plus(vatTotal);
  return {
    lines,
    subtotal: fixed2(subtotal),
    vat_total: fixed2(vatTotal),
    total: fixed2(total),
    vat_breakdown: [...groups.values()].map((g) => ({
      vat_pct: g.pct === null ? null : g.pct.toNumber(),
      net: fixed2(g.net),
      vat: fixed2(g.vat),
      gross: fixed2(g.gross),
    })),
    total_kopecks: toMinorUnits(total.toFixed(2)),
  };
}
