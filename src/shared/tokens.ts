/** Random identifiers, secrets and their hashes. Every token carries at least 128 random bits. */
import crypto from 'node:crypto';

/** A URL-safe random token of `bytes` random bytes (default 16 = 128 bits), from the CSPRNG. */
export function randomToken(bytes = 16): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

/**
 * Digits of the time prefix: 0-9 then a-z, whose order is the same bytewise (SQLite's BINARY,
 * PostgreSQL's "C") and in the usual locales (digits before letters, one case only).
 */
const TIME_PREFIX_LENGTH = 9;
let prefixMs = -1;
let prefix = '';

/**
 * A URL-safe identifier that sorts by the time it was made: the milliseconds since the epoch in
 * 9 base-36 digits (until the year 5188), then `randomToken(16)`, 128 random bits: 31
 * characters. The random part alone makes it unguessable, as `randomToken`; the prefix only says
 * when it was made, which nobody holding the token needs to be kept from.
 *
 * Why: the generated public_id and share-link tokens are keys of B-tree indexes (the documents',
 * their items', their links'). Random keys put every new document on leaf pages of their own
 * all over each index, and a commit writes each such page whole (SQLite's WAL, PostgreSQL's
 * full-page writes); keys in time order land on the few right-most leaves that the documents of
 * one commit share. Ordering is by the wall clock, so a clock stepped back only scatters a few
 * keys; it never makes two the same.
 */
export function sortableToken(nowMs: number = Date.now()): string {
  if (nowMs !== prefixMs) {
    prefixMs = nowMs;
    prefix = Math.max(0, Math.floor(nowMs)).toString(36).padStart(TIME_PREFIX_LENGTH, '0');
  }
  return prefix + randomToken(16);
}

/** A new API key secret: 256 random bits behind a readable prefix. */
export function newApiKeySecret(): string {
  return `ak_${randomToken(32)}`;
}

/** API keys are high-entropy, so a plain SHA-256 is the right hash (no need for a slow KDF). */
export function hashSecret(secret: string): string {
  return secretDigest(secret).toString('hex');
}

/**
 * The SHA-256 of a secret as bytes (one call, no Hash object): `digest.toString('hex')` is
 * `hashSecret(secret)`, and `timingSafeEqual` of two digests is `safeEqual` of their secrets.
 */
export function secretDigest(secret: string): Buffer {
  return crypto.hash('sha256', secret, 'buffer') as unknown as Buffer;
}

/** Constant-time equality of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(secretDigest(a), secretDigest(b));
}
