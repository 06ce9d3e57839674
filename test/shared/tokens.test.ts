import { describe, expect, it } from 'vitest';
import { randomToken, sortableToken } from '../../src/shared/tokens.js';

describe('randomToken', () => {
  it('gives URL-safe tokens of the asked size, never the same one twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const t = randomToken();
      expect(t).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(20_000);
    // Other sizes, small and large.
    for (const bytes of [1, 7, 32, 300, 5000]) {
      const t = randomToken(bytes);
      expect(Buffer.from(t, 'base64url').length).toBe(bytes);
    }
  });

  it('spreads its bytes evenly', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 4_000; i++) for (const b of Buffer.from(randomToken(16), 'base64url')) counts[b] = (counts[b] ?? 0) + 1;
    // 64,000 bytes: 250 expected per value; zeroed or repeating bytes would be far off.
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(370);
  });
});

describe('sortableToken (time-ordered ids for B-tree keys)', () => {
  it('sorts by the millisecond it was made, bytewise and by localeCompare, and carries 128 random bits', () => {
    const t0 = Date.UTC(2026, 10, 27, 0, 0, 0, 0);
    const made = [0, 1, 2, 999, 1000, 60_000, 3_600_000, 86_400_000, 365 * 86_400_000].map((d) => sortableToken(t0 + d));
    for (const id of made) {
      expect(id).toMatch(/^[0-9a-z]{9}[A-Za-z0-9_-]{22}$/);
      // A generated public_id must pass the contract's rule for client-supplied ones.
      expect(id).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
      expect(Buffer.from(id.slice(9), 'base64url').length).toBe(16);
    }
    const bytewise = [...made].reverse().sort();
    expect(bytewise).toEqual(made);
    const byLocale = [...made].reverse().sort((a, b) => a.slice(0, 9).localeCompare(b.slice(0, 9)));
    expect(byLocale).toEqual(made);
  });

  it('gives a different id each call within one millisecond, and ids of one millisecond share the prefix', () => {
    const now = Date.UTC(2030, 0, 1);
    const ids = Array.from({ length: 1000 }, () => sortableToken(now));
    expect(new Set(ids).size).toBe(1000);
    expect(new Set(ids.map((id) => id.slice(0, 9))).size).toBe(1);
    expect(sortableToken(now).slice(0, 9)).toBe(now.toString(36).padStart(9, '0'));
    // The default clock is the wall clock.
    const before = Date.now();
    const id = sortableToken();
    expect(Number.parseInt(id.slice(0, 9), 36)).toBeGreaterThanOrEqual(before);
    expect(Number.parseInt(id.slice(0, 9), 36)).toBeLessThanOrEqual(Date.now());
  });
});
