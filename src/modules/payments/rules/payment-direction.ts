/**
 * Which way a statement's payment goes and which of its dates is the payment's date
 * (operating contract §6.1). Pure.
 */

export type PaymentDirection = 'incoming' | 'outgoing';

/** The parts of a statement document these rules read. */
export interface DirectedDocument {
  payer: { account: string | null };
  recipient: { account: string | null };
}

/**
 * `incoming` when the recipient account is one of the statement's accounts and the payer
 * account is not; every other payment is `outgoing` (kept, never allocated): a transfer
 * between two of the statement's accounts is outgoing, and so is a document naming none of them.
 */
export function direction(doc: DirectedDocument, statementAccounts: ReadonlySet<string> | readonly string[]): PaymentDirection {
  const accounts: ReadonlySet<string> = statementAccounts instanceof Set ? statementAccounts : new Set(statementAccounts);
  const toUs = doc.recipient.account !== null && accounts.has(doc.recipient.account);
  const fromUs = doc.payer.account !== null && accounts.has(doc.payer.account);
  return toUs && !fromUs ? 'incoming' : 'outgoing';
}

export interface DatedDocument {
  date: string | null;
  received_date: string | null;
  written_off_date: string | null;
}

/**
 * The payment's `date`: `ДатаПоступило` for an incoming payment, `ДатаСписано` for an outgoing
 * one, else `Дата`; when that is absent too, the other of the two (the parser refuses a
 * document with none of the three, so the answer is never null for a parsed document).
 */
export function paymentDate(doc: DatedDocument, dir: PaymentDirection): string {
  const own = dir === 'incoming' ? doc.received_date : doc.written_off_date;
  const other = dir === 'incoming' ? doc.written_off_date : doc.received_date;
  const date = own ?? doc.date ?? other;
  if (date === null) throw new Error('a statement document without any date');
  return date;
}
