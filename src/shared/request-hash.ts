import crypto from 'node:crypto';

/**
 * Hash of the request body with object keys sorted, so key order does not matter. Iterative
 * (an explicit stack) and linear in the body's size, so no nesting can overflow the call stack;
 * the service still refuses a body nested too deep before hashing it (docs/security.md).
 */
export function requestHash(body: unknown): string {
  const hash = crypto.createHash('sha256');
  // Each entry is text to write or a value to serialize; popped in order.
  const stack: Array<{ text: string } | { value: unknown }> = [{ value: body ?? null }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if ('text' in top) {
      hash.update(top.text);
      continue;
    }
    const v = top.value;
    if (Array.isArray(v)) {
      hash.update('[');
      stack.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] === undefined ? null : v[i] });
        if (i > 0) stack.push({ text: ',' });
      }
    } else if (v !== null && typeof v === 'object') {
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
      hash.update('{');
      stack.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ value: record[k] });
        stack.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
      }
    } else {
      hash.update(JSON.stringify(v) ?? 'null');
    }
  }
  return hash.digest('hex');
}
