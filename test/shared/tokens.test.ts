import { describe, expect, it } from 'vitest';
import { randomToken } from '../../src/shared/tokens.js';

describe('randomToken (drawn from a pooled CSPRNG buffer)', () => {
  it('gives URL-safe tokens of the asked size, never the same one twice across pool refills', () => {
    const seen = new Set<string>();
    // 16-byte tokens: 256 per 4 KiB pool, so 20,000 draws cross ~80 refills.
    for (let i = 0; i < 20_000; i++) {
      const t = randomToken();
      expect(t).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(20_000);
    // Sizes that do not divide the pool, and one larger than it is drawn from.
    for (const bytes of [1, 7, 32, 300, 5000]) {
      const t = randomToken(bytes);
      expect(Buffer.from(t, 'base64url').length).toBe(bytes);
    }
  });

  it('spreads its bytes evenly (no stale or zeroed pool handed out)', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 4_000; i++) for (const b of Buffer.from(randomToken(16), 'base64url')) counts[b] = (counts[b] ?? 0) + 1;
    // 64,000 bytes: 250 expected per value; a zeroed or repeating pool would be far off.
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(370);
  });
});
