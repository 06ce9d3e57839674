/**
 * The text a document is found by (`invoices.search_text`, the list's `q`): its number, seller
 * and buyer names and INNs, lower-cased, joined by a separator that no field holds.
 */

/**
 * Separates the fields inside `search_text`, so that q cannot match across two of them
 * (number "15" followed by seller "ООО" must not match "15 ооо"). Rows written before this
 * separator used a space; they can at worst match such a spanning q.
 */
export const FIELD_SEPARATOR = '\u001f';

export function normalizeSearchText(...parts: Array<string | null | undefined>): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .join(FIELD_SEPARATOR)
    .toLowerCase();
}
