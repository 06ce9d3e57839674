/**
 * Caches that callers can fill are bounded by the memory they hold, not by their number of
 * entries: a thousand entries of 5 MB documents would be 5 GB. Every such cache (document
 * responses, list pages and items, catalogs, seller references, callers, rendered files) is an
 * LRU cache (lru-cache) with a byte budget from the configuration, and an entry above the
 * per-entry threshold is not kept at all, so one large document cannot push out hundreds of
 * small ones (docs/security.md, "Memory").
 */
import { LRUCache } from 'lru-cache';

export interface ByteBudget {
  /** What all entries together may hold; 0 turns the cache off. */
  maxBytes: number;
  /** An entry costing more is not kept (it is served, then dropped). */
  maxEntryBytes: number;
}

/**
 * An LRU cache of at most `budget.maxBytes`, each entry costing `sizeOf(value, key)` bytes;
 * null when the budget is 0 (the caller then builds every answer afresh).
 */
export function byteBoundedCache<V extends object>(budget: ByteBudget, sizeOf: (value: V, key: string) => number): LRUCache<string, V> | null {
  if (budget.maxBytes <= 0) return null;
  return new LRUCache<string, V>({
    maxSize: budget.maxBytes,
    maxEntrySize: Math.max(1, Math.min(budget.maxEntryBytes, budget.maxBytes)),
    // A key is held too (V8 strings: up to 2 bytes a character); at least 1, as lru-cache requires.
    sizeCalculation: (value, key) => Math.max(1, Math.ceil(sizeOf(value, key) + 2 * key.length)),
  });
}

/** The heap a string may hold: V8 keeps non-Latin-1 text (Cyrillic) at 2 bytes a character. */
export function stringBytes(value: string | null | undefined): number {
  return value == null ? 0 : 2 * value.length;
}

/** The heap a flat record of strings and numbers may hold (a database row): its strings plus 16 bytes a field. */
export function rowBytes(row: object): number {
  let bytes = 0;
  for (const value of Object.values(row)) bytes += 16 + (typeof value === 'string' ? stringBytes(value) : 0);
  return bytes;
}

/** A rough size of any JSON-like value (its JSON text at 2 bytes a character): for small reference data. */
export function jsonBytes(value: unknown): number {
  return stringBytes(JSON.stringify(value) ?? '');
}
