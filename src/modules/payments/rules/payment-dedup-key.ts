/**
 * The deduplication key of a payment (operating contract §6.1): a payment already stored with
 * the same direction, date, number, amount, payer account (or, without one, payer INN) and
 * recipient account is a duplicate. The storage keeps this key under a unique index led by the
 * team (`(team_id, dedup_key)`), so re-importing a file or two imports at once store each
 * payment once: the second insert of a key conflicts instead of racing a lookup.
 */
import { createHash } from 'node:crypto';
import type { PaymentDirection } from './payment-direction.js';

export interface DedupKeyInput {
  direction: PaymentDirection;
  /** The payment's date (YYYY-MM-DD), as paymentDate gives it. */
  date: string;
  number: string | null;
  /** Kopecks. */
  amount: bigint;
  payer: { account: string | null; inn: string | null };
  recipient: { account: string | null };
}

/** Version of the key's recipe: a stored key is only ever compared with keys of its own version. */
const KEY_VERSION = 'v1';
/** U+001F (unit separator) between the parts; one inside a value becomes a space, so parts never run into each other. */
const SEPARATOR = '\u001f';

/**
 * The readable key: its parts joined by U+001F. The payer is `a:<account>` or, without an
 * account, `i:<INN>` (an account and an INN never compare equal); an absent value is empty.
 * The number is compared as written (trimmed), the amount as integer kopecks.
 */
export function dedupKeyText(p: DedupKeyInput): string {
  const clean = (v: string | null) => (v ?? '').trim().replaceAll(SEPARATOR, ' ');
  const payer = p.payer.account !== null && p.payer.account.trim() !== '' ? `a:${clean(p.payer.account)}` : `i:${clean(p.payer.inn)}`;
  return [KEY_VERSION, p.direction, p.date, clean(p.number), p.amount.toString(), payer, clean(p.recipient.account)].join(SEPARATOR);
}

/** The key to store: SHA-256 of dedupKeyText, 64 hex characters (fixed width for the index). */
export function paymentDedupKey(p: DedupKeyInput): string {
  return createHash('sha256').update(dedupKeyText(p), 'utf8').digest('hex');
}
