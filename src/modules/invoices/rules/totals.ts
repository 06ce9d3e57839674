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
 */
export function computeTotals(items: readonly TotalsItemInput[], options: TotalsOptions): DocumentTotals {
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
