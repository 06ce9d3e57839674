/**
 * From a written document to its e-mails: who gets one, through which share link, and what
 * it says. Pure; the service decides the gates and stores the result.
 */
import type { ShareLinkRow } from '../../db/types.js';
import { shareUrls, type LinkBases } from '../links/index.js';
import { emailLocale, type InvoiceEmailView } from './email-message.js';
import { isValidEmailAddress, resolveRecipients, type Recipient } from './recipients.js';

/** The document fields an e-mail needs (a NormalizedInvoice fits). */
export interface NotifiableDocument {
  number: string;
  date: string;
  currency: string;
  due_date?: unknown;
  seller_status?: unknown;
  seller: { name?: unknown };
  buyer: { name?: unknown; email?: unknown };
  api_recipients?: ReadonlyArray<{ email?: unknown; name?: unknown; position?: unknown }> | undefined;
  manager?: { name?: unknown; email?: unknown } | undefined;
}

/** What the write path hands over, inside its transaction, after the document is written. */
export interface NotificationRequest {
  teamId: string;
  /** `teams.locale`: `en…` gives English e-mails, anything else Russian. */
  teamLocale: string;
  tariff: { emails_per_day: number; external_share: boolean };
  publicId: string;
  /** The revision just written. */
  revision: number;
  document: NotifiableDocument;
  /** Decimal text totals of the document (`totalsOf(invoice)`). */
  totals: { total: string };
  /** Every share link of the document as written (buyer, colleague, recipients). */
  links: ReadonlyArray<Pick<ShareLinkRow, 'kind' | 'email' | 'token'>>;
}

export interface PlannedEmail {
  recipient: Recipient;
  view: InvoiceEmailView;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

function linkTokenFor(recipient: Recipient, links: NotificationRequest['links']): string {
  const own =
    recipient.linkKind === 'recipient'
      ? links.find((l) => l.kind === 'recipient' && (l.email ?? '').toLowerCase() === recipient.email.toLowerCase())
      : undefined;
  const link = own ?? links.find((l) => l.kind === 'buyer');
  if (!link) throw new Error('the document has no buyer share link');
  return link.token;
}

export function planEmails(request: NotificationRequest, bases: LinkBases): PlannedEmail[] {
  const doc = request.document;
  const managerEmail = text(doc.manager?.email);
  const closed = doc.seller_status === 'paid' || doc.seller_status === 'cancelled';
  return resolveRecipients(doc).map((recipient) => {
    const urls = shareUrls(bases, linkTokenFor(recipient, request.links));
    const view: InvoiceEmailView = {
      locale: emailLocale(request.teamLocale),
      publicId: request.publicId,
      revision: request.revision,
      number: doc.number,
      date: doc.date,
      dueDate: text(doc.due_date),
      sellerName: text(doc.seller.name) ?? '',
      buyerName: text(doc.buyer.name) ?? '',
      recipientName: recipient.name,
      total: request.totals.total,
      amountDue: closed ? '0.00' : request.totals.total,
      currency: doc.currency,
      link: urls.url,
      documentLink: urls.document_url,
      managerName: text(doc.manager?.name),
      managerEmail: managerEmail !== null && isValidEmailAddress(managerEmail) ? managerEmail : null,
    };
    return { recipient, view };
  });
}
