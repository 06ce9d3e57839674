/**
 * Who a document's e-mail goes to (operating contract 4, "Notifications"): the API recipients,
 * deduplicated by address case-insensitively (first occurrence wins, entries without an address
 * are skipped), or else the buyer's own address. Pure.
 */

export interface RecipientSource {
  api_recipients?: ReadonlyArray<{ email?: unknown; name?: unknown; position?: unknown }> | undefined;
  buyer: { email?: unknown; name?: unknown };
}

export interface Recipient {
  /** The address as given, trimmed. */
  email: string;
  name: string | null;
  /** Which share link is this recipient's own: its `recipient` link, or the buyer link. */
  linkKind: 'recipient' | 'buyer';
  /** False for a malformed address: reported as failed with `invalid_address`, never sent. */
  valid: boolean;
}

const MAX_ADDRESS = 254;
const MAX_LOCAL = 64;
// dot-atom local part (RFC 5322) plus non-ASCII letters and digits (RFC 6531).
const LOCAL = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const TLD = /^(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/iu;

/**
 * A bare mailbox `local@domain.tld`: no display name, comments, quoted local part or domain
 * literal, at least two domain labels and an alphabetic top-level domain. Stricter than
 * RFC 5322 on purpose: what passes can be put on an SMTP envelope as it is.
 */
export function isValidEmailAddress(value: string): boolean {
  if (value.length === 0 || value.length > MAX_ADDRESS) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0 || at !== value.indexOf('@')) return false;
  if (at > MAX_LOCAL) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (!LOCAL.test(local)) return false;
  const labels = domain.split('.');
  if (labels.length < 2) return false;
  if (!labels.every((l) => LABEL.test(l))) return false;
  return TLD.test(labels[labels.length - 1] as string);
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The recipients of one notification, in order. Empty when nobody has an address. */
export function resolveRecipients(doc: RecipientSource): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  for (const r of doc.api_recipients ?? []) {
    const email = text(r.email);
    if (email === null) continue;
    const key = email.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ email, name: text(r.name), linkKind: 'recipient', valid: isValidEmailAddress(email) });
  }
  if (out.length > 0) return out;
  const buyerEmail = text(doc.buyer.email);
  if (buyerEmail === null) return [];
  return [{ email: buyerEmail, name: text(doc.buyer.name), linkKind: 'buyer', valid: isValidEmailAddress(buyerEmail) }];
}

/** The key a recipient is deduplicated and idempotent by. */
export function recipientKey(email: string): string {
  return email.trim().toLowerCase();
}
