/** `extended` (src/shared/objects.ts): what `{ ...base, ...extra }` gives, `__proto__` keys included. */
import { describe, expect, it } from 'vitest';
import { extended } from '../../src/shared/objects.js';

describe('extended', () => {
  it('gives the properties of the spread, in its key order, without changing its inputs', () => {
    const base = { b: 1, a: { deep: true }, c: 'x' };
    const out = extended(base, { c: 'y', d: null });
    expect(out).toEqual({ b: 1, a: { deep: true }, c: 'y', d: null });
    expect(Object.keys(out)).toEqual(Object.keys({ ...base, ...{ c: 'y', d: null } }));
    expect(out.a).toBe(base.a);
    expect(base).toEqual({ b: 1, a: { deep: true }, c: 'x' });
  });

  it('keeps an own "__proto__" key an own property, never the prototype', () => {
    const stored = JSON.parse('{"number":"1","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const out = extended(stored, { public_id: 'inv_1' }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out.polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"number":"1","__proto__":{"polluted":true},"public_id":"inv_1"}');
  });
});
