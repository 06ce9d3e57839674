/**
 * "Named by the purpose" (operating contract §6.1): a document is named when its `number`
 * appears in the payment's purpose as a whole token, compared without case. A token is a run of
 * letters, digits, `-`, `/`, `_` and `.`, except that a `.` followed by whitespace or the end
 * of the purpose is not part of it. So `СЧ-15` is named by «Оплата по счёту №сч-15 от
 * 10.01.2026» and by «счет СЧ-15.», not by «СЧ-150», «АСЧ-15» or «СЧ-15.1».
 *
 * Decisions:
 * - Letters are Unicode letters (\p{L}) with their combining marks (\p{M}); digits are decimal
 *   digits (\p{Nd}). Text is put in NFC first, so «й» typed as «и» + combining breve equals «й».
 * - "Without case" is Unicode lower-casing (`toLowerCase`, locale-independent). «ё» and «е» stay
 *   different letters: a number written with «ё» is named only by «ё».
 * - A number containing anything else (a space, «№», a comma) or ending in `.` is never a whole
 *   token, so it is never named.
 *
 * Lookup without scanning: purposeTokens gives the purpose's distinct tokens (at most
 * MAX_PURPOSE_TOKENS, each at most MAX_NUMBER_CHARS), and the storage finds the named documents
 * by an index on numberMatchKey(number), the same normalization, computed here and stored,
 * never by SQL `lower()` (SQLite's folds ASCII only). matchPayment uses the same token list, so
 * the storage's lookup and the matching always agree on what is named.
 */

/** A document number is at most 64 characters (the invoice schema): longer tokens name nothing. */
export const MAX_NUMBER_CHARS = 64;
/**
 * Distinct tokens looked up per purpose. A statement purpose is at most 210 characters (≤ 105
 * tokens); the first 128 distinct tokens of a longer API purpose are the ones that name.
 */
export const MAX_PURPOSE_TOKENS = 128;

const TOKEN = /(?:[\p{L}\p{M}\p{Nd}_/-]|\.(?!\s|$))+/gu;

/** The form a number is compared in: NFC, lower-cased. Store it beside the number and index it. */
export function numberMatchKey(number: string): string {
  return number.normalize('NFC').toLowerCase();
}

/** The purpose's distinct tokens in numberMatchKey form, in order of first appearance (bounded). */
export function purposeTokens(purpose: string): string[] {
  const tokens = new Set<string>();
  for (const m of purpose.normalize('NFC').matchAll(TOKEN)) {
    const token = m[0].toLowerCase();
    if (token.length > MAX_NUMBER_CHARS) continue;
    tokens.add(token);
    if (tokens.size >= MAX_PURPOSE_TOKENS) break;
  }
  return [...tokens];
}

/** True when `number` is named by `purpose` (within the first MAX_PURPOSE_TOKENS distinct tokens). */
export function isNamedBy(number: string, purpose: string): boolean {
  const key = numberMatchKey(number);
  return key !== '' && purposeTokens(purpose).includes(key);
}
