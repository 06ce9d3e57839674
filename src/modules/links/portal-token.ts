/**
 * Portal tokens: signed (HMAC-SHA256 with the service secret), scoped to one team, document
 * and mode, and expiring. They are not stored; rotating INVOICING_SECRET revokes them all, and
 * `invoicing links rotate PUBLIC_ID` revokes one document's: the token carries the document's
 * link epoch (`invoices.link_epoch`), which the rotation moves on.
 */
import crypto from 'node:crypto';

export type PortalMode = 'view' | 'edit';

export interface PortalClaims {
  teamId: string;
  publicId: string;
  mode: PortalMode;
  /** Expiry, seconds since the epoch. */
  exp: number;
  /** The document's link epoch when the token was signed; a token of an older epoch is refused. */
  epoch: number;
}

/** The team id of tokens in the old, four-part format that may not be honoured (demo-signed). */
export interface VerifyOptions {
  refuseLegacyTeam: string;
}

/** View links live 30 days, edit links 7; a fresh one comes with every API response. */
export const PORTAL_TOKEN_TTL_SEC: Record<PortalMode, number> = { view: 30 * 86_400, edit: 7 * 86_400 };

function sign(secret: string, payload: string): string {
  return crypto.createHmac('sha256', secret).update(payload).digest('base64url');
}

export function signPortalToken(secret: string, claims: PortalClaims): string {
  const payload = Buffer.from(JSON.stringify([claims.teamId, claims.publicId, claims.mode, claims.exp, claims.epoch]), 'utf8').toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

/**
 * The claims of a valid, unexpired token; null for anything else. Tokens signed before link
 * epochs existed (four parts) count as epoch 0, except those naming `refuseLegacyTeam` (the
 * demo world's former id, which a real team may also have: such a token may be demo-signed).
 */
export function verifyPortalToken(secret: string, token: string, nowSec: number, options?: VerifyOptions): PortalClaims | null {
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined) return null;
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || (parsed.length !== 4 && parsed.length !== 5)) return null;
  const [teamId, publicId, mode, exp, epoch = 0] = parsed as unknown[];
  if (typeof teamId !== 'string' || typeof publicId !== 'string' || typeof exp !== 'number') return null;
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 0) return null;
  if (parsed.length === 4 && options && teamId === options.refuseLegacyTeam) return null;
  if (mode !== 'view' && mode !== 'edit') return null;
  if (exp < nowSec) return null;
  return { teamId, publicId, mode, exp, epoch };
}

/**
 * Expiry rounded up to the next UTC midnight, so responses of one day carry the same link
 * instead of a new one per request.
 */
export function portalExpiry(mode: PortalMode, now: Date): number {
  const base = Math.floor(now.getTime() / 1000) + PORTAL_TOKEN_TTL_SEC[mode];
  return Math.ceil(base / 86_400) * 86_400;
}

/**
 * The edit form's CSRF token: HMAC(secret, "csrf:" + portal token). Stateless (nothing is
 * stored, no cookie), bound to the one edit link, and revoked with it when the secret rotates.
 */
export function csrfTokenFor(secret: string, portalToken: string): string {
  return sign(secret, `csrf:${portalToken}`);
}

/** Constant-time check of a posted CSRF token. */
export function verifyCsrfToken(secret: string, portalToken: string, given: string): boolean {
  const expected = Buffer.from(csrfTokenFor(secret, portalToken));
  const actual = Buffer.from(given);
  return expected.length === actual.length && crypto.timingSafeEqual(expected, actual);
}
