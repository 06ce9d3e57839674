import crypto from 'node:crypto';

/** Hash of the request body with object keys sorted, so key order does not matter. */
export function requestHash(body: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as Record<string, unknown>)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return crypto.createHash('sha256').update(JSON.stringify(canonical(body) ?? null)).digest('hex');
}
