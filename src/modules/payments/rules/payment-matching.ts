/**
 * Matching an incoming payment to the team's documents (operating contract §6.1). Pure: the
 * storage hands in the candidates, this decides the allocations or the review list.
 *
 * What the storage hands in (never a scan of the team's documents). Base filter B: the team's
 * documents in the payment's currency, `seller_status` `issued`, outstanding > 0, and seller INN
 * = the recipient INN when the payment names one. Then the union (duplicates are fine) of:
 *   1. named: B and numberMatchKey(number) IN purposeTokens(purpose) — at most
 *      MATCH_LIMITS.namedCandidates + 1 rows (one more than the limit shows it was passed);
 *   2. when the payment has a payer INN: B and buyer INN = payer INN and outstanding = amount,
 *      the first MATCH_LIMITS.sameAmountCandidates by (date, public_id);
 *   3. when the payment has a payer INN: B and buyer INN = payer INN, the first
 *      MATCH_LIMITS.payerCandidates by (date, public_id).
 * Indexes that serve them: (team_id, number_key) and (team_id, buyer_inn, outstanding, date,
 * public_id). With these, rules (a)–(c) are decided exactly and the review list is exactly the
 * top 5 of the ranking below (queries 2 and 3 return at least as many of their group as can
 * reach the top 5, because the named documents they may also return rank above their group).
 * public_id ties compare in code-unit order (`COLLATE "C"` on PostgreSQL).
 *
 * Rules, in order (the payment's amount > 0; otherwise nothing is allocated):
 *   (a) exactly one candidate is named and its buyer INN equals the payer INN: it gets
 *       min(amount, outstanding);
 *   (b) two or more are named, each with the payer's INN, and the amount equals the sum of their
 *       outstanding amounts: each gets its outstanding;
 *   (c) none is named and exactly one candidate with the payer's INN has an outstanding amount
 *       equal to the amount: it gets it;
 *   otherwise `review` when a candidate is named or has the payer's INN, else `unmatched`.
 * More than MATCH_LIMITS.namedCandidates named documents allocate nothing: such a purpose is
 * not a payment for one invoice or a few.
 * After an allocation: `matched` when the whole amount is allocated, `partially_matched` when a
 * remainder is left (an overpayment under (a)); the remainder stays unallocated.
 *
 * Review ranking (deterministic), groups first:
 *   0 named with the payer's INN, 1 named with another or unknown INN,
 *   2 not named, payer's INN, outstanding = amount, 3 not named, payer's INN;
 * inside groups 0 and 1: outstanding = amount first, then amount < outstanding, then
 * amount > outstanding; then (groups 0–3) older date first, then public_id.
 */
import { numberMatchKey, purposeTokens } from './purpose-tokens.js';

export const MATCH_LIMITS = {
  /** Named documents that can still be allocated automatically (rule (b) sums at most this many). */
  namedCandidates: 50,
  /** Candidates listed for review. */
  reviewCandidates: 5,
  /** Query 2: payer's INN and outstanding = amount; 2 decide rule (c), 5 fill the review list. */
  sameAmountCandidates: 5,
  /** Query 3: payer's INN, oldest first. */
  payerCandidates: 5,
} as const;

/**
 * Why a document is a candidate (closed list, shown to the user in `candidates[].reasons`):
 * - `named_in_purpose`: its number is a whole token of the purpose;
 * - `payer_inn_equal`: its buyer INN equals the payer INN;
 * - `payer_differs`: named, but its buyer INN is not the payer INN (never allocated automatically);
 * - `payer_inn_unknown`: with `payer_differs`, when the payment or the document has no INN;
 * - `amount_equals_outstanding`: the amount equals its outstanding amount;
 * - `partial_amount`: the amount is less than its outstanding amount;
 * - `overpayment`: the amount is more than its outstanding amount;
 * - `amount_equals_named_total`: several documents are named and the amount equals the sum of
 *   their outstanding amounts (rule (b) failing only on the payer's INN).
 */
export const MATCH_REASONS = [
  'named_in_purpose',
  'payer_inn_equal',
  'payer_differs',
  'payer_inn_unknown',
  'amount_equals_outstanding',
  'partial_amount',
  'overpayment',
  'amount_equals_named_total',
] as const;
export type MatchReason = (typeof MATCH_REASONS)[number];

export type MatchStatus = 'matched' | 'partially_matched' | 'review' | 'unmatched';

export interface PaymentToMatch {
  /** Kopecks. */
  amount: bigint;
  currency: string;
  payer_inn: string | null;
  purpose: string;
}

export interface MatchCandidate {
  public_id: string;
  number: string;
  /** YYYY-MM-DD. */
  date: string;
  currency: string;
  buyer_inn: string | null;
  seller_inn: string | null;
  /** Kopecks still to be paid. */
  outstanding: bigint;
}

export interface MatchAllocation {
  public_id: string;
  /** Kopecks, ≤ the document's outstanding. */
  amount: bigint;
}

export interface ReviewCandidate {
  public_id: string;
  number: string;
  date: string;
  outstanding: bigint;
  reasons: MatchReason[];
}

export interface MatchResult {
  status: MatchStatus;
  allocations: MatchAllocation[];
  /** The ranked review list (status `review` only; empty otherwise). */
  candidates: ReviewCandidate[];
  allocated: bigint;
  unallocated: bigint;
}

interface Judged {
  candidate: MatchCandidate;
  named: boolean;
  payerEqual: boolean;
}

const hasInn = (inn: string | null): inn is string => inn !== null && inn.trim() !== '';
const sameInn = (a: string | null, b: string | null): boolean => hasInn(a) && hasInn(b) && a.trim() === b.trim();

function allocated(payment: PaymentToMatch, allocations: MatchAllocation[]): MatchResult {
  const total = allocations.reduce((sum, a) => sum + a.amount, 0n);
  return { status: total === payment.amount ? 'matched' : 'partially_matched', allocations, candidates: [], allocated: total, unallocated: payment.amount - total };
}

const nothing = (payment: PaymentToMatch, status: MatchStatus, candidates: ReviewCandidate[] = []): MatchResult => ({
  status,
  allocations: [],
  candidates,
  allocated: 0n,
  unallocated: payment.amount,
});

/**
 * Decides the allocations of an incoming payment among the candidates the storage found.
 * Candidates of another currency or with nothing outstanding are ignored, so an allocation never
 * exceeds a document's outstanding amount whatever is handed in.
 */
export function matchPayment(payment: PaymentToMatch, candidates: readonly MatchCandidate[]): MatchResult {
  if (payment.amount <= 0n) return nothing(payment, 'unmatched');
  const tokens = new Set(purposeTokens(payment.purpose));
  const seen = new Set<string>();
  const judged: Judged[] = [];
  for (const candidate of candidates) {
    if (seen.has(candidate.public_id) || candidate.currency !== payment.currency || candidate.outstanding <= 0n) continue;
    seen.add(candidate.public_id);
    judged.push({ candidate, named: tokens.has(numberMatchKey(candidate.number)), payerEqual: sameInn(candidate.buyer_inn, payment.payer_inn) });
  }
  const named = judged.filter((j) => j.named);
  const namedTotal = named.reduce((sum, j) => sum + j.candidate.outstanding, 0n);
  if (named.length <= MATCH_LIMITS.namedCandidates) {
    const only = named[0];
    if (named.length === 1 && only !== undefined && only.payerEqual) {
      const amount = payment.amount < only.candidate.outstanding ? payment.amount : only.candidate.outstanding;
      return allocated(payment, [{ public_id: only.candidate.public_id, amount }]);
    }
    if (named.length >= 2 && named.every((j) => j.payerEqual) && namedTotal === payment.amount) {
      return allocated(payment, named.map((j) => ({ public_id: j.candidate.public_id, amount: j.candidate.outstanding })));
    }
    if (named.length === 0) {
      const exact = judged.filter((j) => j.payerEqual && j.candidate.outstanding === payment.amount);
      const one = exact[0];
      if (exact.length === 1 && one !== undefined) return allocated(payment, [{ public_id: one.candidate.public_id, amount: one.candidate.outstanding }]);
    }
  }
  const relevant = judged.filter((j) => j.named || j.payerEqual);
  if (relevant.length === 0) return nothing(payment, 'unmatched');
  const namedSumMatches = named.length >= 2 && namedTotal === payment.amount;
  const ranked = relevant
    .map((j) => ({ j, key: rankKey(j, payment.amount) }))
    .sort((x, y) => compareRank(x.key, y.key))
    .slice(0, MATCH_LIMITS.reviewCandidates)
    .map(({ j }) => toReview(j, payment, namedSumMatches));
  return nothing(payment, 'review', ranked);
}

/** 0 amount = outstanding, 1 amount < outstanding, 2 amount > outstanding (the rank order). */
function amountClass(amount: bigint, outstanding: bigint): number {
  return amount === outstanding ? 0 : amount < outstanding ? 1 : 2;
}

type RankKey = [group: number, amountClass: number, date: string, publicId: string];

function rankKey(j: Judged, amount: bigint): RankKey {
  const c = j.candidate;
  if (j.named) return [j.payerEqual ? 0 : 1, amountClass(amount, c.outstanding), c.date, c.public_id];
  return [c.outstanding === amount ? 2 : 3, 0, c.date, c.public_id];
}

function compareRank(a: RankKey, b: RankKey): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number | string;
    const y = b[i] as number | string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function toReview(j: Judged, payment: PaymentToMatch, namedSumMatches: boolean): ReviewCandidate {
  const c = j.candidate;
  const reasons: MatchReason[] = [];
  if (j.named) reasons.push('named_in_purpose');
  if (j.payerEqual) reasons.push('payer_inn_equal');
  else if (j.named) {
    reasons.push('payer_differs');
    if (!hasInn(payment.payer_inn) || !hasInn(c.buyer_inn)) reasons.push('payer_inn_unknown');
  }
  const cls = amountClass(payment.amount, c.outstanding);
  reasons.push(cls === 0 ? 'amount_equals_outstanding' : cls === 1 ? 'partial_amount' : 'overpayment');
  if (j.named && namedSumMatches) reasons.push('amount_equals_named_total');
  return { public_id: c.public_id, number: c.number, date: c.date, outstanding: c.outstanding, reasons };
}
