import crypto from 'node:crypto';

/**
 * Hash of the request body with object keys sorted, so key order does not matter. Iterative
 * (an explicit stack) and linear in the body's size, so no nesting can overflow the call stack;
 * the service still refuses a body nested too deep before hashing it (docs/security.md). The
 * canonical text is gathered and hashed in one call: one `update` per token cost more than the
 * rest of the walk (the same digest either way).
 */
export function requestHash(body: unknown): string {
  let text = '';
  // Each entry is text to write or a value to serialize; popped in order.
  const stack: Array<{ text: string } | { value: unknown }> = [{ value: body ?? null }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if ('text' in top) {
      text += top.text;
      continue;
    }
    const v = top.value;
    if (Array.isArray(v)) {
      text += '[';
      stack.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] === undefined ? null : v[i] });
        if (i > 0) stack.push({ text: ',' });
      }
    } else if (v !== null && typeof v === 'object') {
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
      text += '{';
      stack.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ value: record[k] });
        stack.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
      }
    } else {
      text += JSON.stringify(v) ?? 'null';
    }
  }
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}
