/**
 * The notification e-mail of a document: subject, plain text and HTML bodies, headers. Pure:
 * the same view model always gives the same message, so a retry sends what the first attempt
 * would have. Every user-supplied string is escaped in the HTML and made one-line in headers.
 */
import crypto from 'node:crypto';
import { formatDateShortRu as formatDate } from '../../shared/ru-format.js';
import { escapeHtml, formatMoney, oneLine } from './email-format.js';

export type EmailLocale = 'ru' | 'en';

/** What the message says; stored with the outbox row, so sending never re-reads the document. */
export interface InvoiceEmailView {
  locale: EmailLocale;
  publicId: string;
  revision: number;
  number: string;
  /** `YYYY-MM-DD`. */
  date: string;
  dueDate: string | null;
  sellerName: string;
  buyerName: string;
  recipientName: string | null;
  /** Decimal text, e.g. `12345.60`. */
  total: string;
  amountDue: string;
  currency: string;
  /** The recipient's own share page. */
  link: string;
  /** The printable PDF behind that link. */
  documentLink: string;
  managerName: string | null;
  /** Becomes Reply-To when set. */
  managerEmail: string | null;
}

export interface EmailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface InvoiceEmail {
  from: string;
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: Record<string, string>;
  attachments: EmailAttachment[];
}

/** `team.locale` → the language of the e-mail: English for `en…`, otherwise Russian. */
export function emailLocale(teamLocale: string | null | undefined): EmailLocale {
  return typeof teamLocale === 'string' && teamLocale.toLowerCase().startsWith('en') ? 'en' : 'ru';
}

/** The host part of Message-IDs: the sender's domain, reduced to safe characters. */
export function messageIdHost(mailFrom: string): string {
  const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1).toLowerCase().replace(/[^a-z0-9.-]/g, '');
  return domain === '' ? 'localhost' : domain;
}

/** Stable per document revision and recipient: a retry is recognisably the same message. */
export function messageIdFor(publicId: string, revision: number, recipient: string, host: string): string {
  const who = crypto.hash('sha256', recipient.trim().toLowerCase(), 'hex').slice(0, 16);
  return `<${publicId}.${revision}.${who}@${host}>`;
}

interface Texts {
  subject: (v: InvoiceEmailView) => string;
  greeting: (name: string | null) => string;
  intro: (seller: string, number: string, date: string) => string;
  total: string;
  due: string;
  dueDate: string;
  open: string;
  pdf: string;
  manager: string;
  footer: string;
}

const TEXTS: Record<EmailLocale, Texts> = {
  ru: {
    subject: (v) => `Счёт № ${v.number} от ${formatDate(v.date)} — ${v.sellerName}`,
    greeting: (name) => (name ? `Здравствуйте, ${name}!` : 'Здравствуйте!'),
    intro: (seller, number, date) => `${seller} направляет вам счёт № ${number} от ${date}.`,
    total: 'Сумма счёта',
    due: 'К оплате',
    dueDate: 'Оплатить до',
    open: 'Открыть счёт',
    pdf: 'Счёт в PDF',
    manager: 'Ваш менеджер',
    footer: 'Письмо отправлено автоматически. Ссылка открывает счёт без входа; не пересылайте её посторонним.',
  },
  en: {
    subject: (v) => `Invoice No. ${v.number} of ${formatDate(v.date)} — ${v.sellerName}`,
    greeting: (name) => (name ? `Hello ${name},` : 'Hello,'),
    intro: (seller, number, date) => `${seller} has sent you invoice No. ${number} of ${date}.`,
    total: 'Invoice total',
    due: 'Amount due',
    dueDate: 'Due date',
    open: 'View the invoice',
    pdf: 'Invoice as PDF',
    manager: 'Your manager',
    footer: 'This message was sent automatically. The link opens the invoice without signing in; do not forward it to others.',
  },
};

/** The message for one recipient. `from` is the configured sender (INVOICING_MAIL_FROM). */
export function buildInvoiceEmail(
  view: InvoiceEmailView,
  envelope: { from: string; to: string; messageId: string },
  attachments: EmailAttachment[] = [],
): InvoiceEmail {
  const t = TEXTS[view.locale];
  const seller = oneLine(view.sellerName);
  const number = oneLine(view.number);
  const recipientName = view.recipientName ? oneLine(view.recipientName) : null;
  const date = formatDate(view.date);
  const total = formatMoney(view.total, view.currency, view.locale);
  const due = formatMoney(view.amountDue, view.currency, view.locale);
  const manager = view.managerName || view.managerEmail
    ? [view.managerName ? oneLine(view.managerName) : '', view.managerEmail ? `<${view.managerEmail}>` : ''].filter(Boolean).join(' ')
    : null;

  const lines = [
    t.greeting(recipientName),
    '',
    t.intro(seller, number, date),
    '',
    `${t.total}: ${total}`,
    `${t.due}: ${due}`,
    ...(view.dueDate ? [`${t.dueDate}: ${formatDate(view.dueDate)}`] : []),
    '',
    `${t.open}: ${view.link}`,
    `${t.pdf}: ${view.documentLink}`,
    ...(manager ? ['', `${t.manager}: ${manager}`] : []),
    '',
    '--',
    t.footer,
  ];

  const e = escapeHtml;
  const row = (label: string, value: string) =>
    `<tr><td style="padding:4px 16px 4px 0;color:#555">${e(label)}</td><td style="padding:4px 0"><strong>${e(value)}</strong></td></tr>`;
  const html = [
    '<!DOCTYPE html>',
    `<html lang="${view.locale}"><head><meta charset="utf-8"><title>${e(t.subject({ ...view, number, sellerName: seller }))}</title></head>`,
    '<body style="font-family:Arial,Helvetica,sans-serif;font-size:15px;color:#222;line-height:1.5">',
    `<p>${e(t.greeting(recipientName))}</p>`,
    `<p>${e(t.intro(seller, number, date))}</p>`,
    '<table role="presentation" style="border-collapse:collapse">',
    row(t.total, total),
    row(t.due, due),
    ...(view.dueDate ? [row(t.dueDate, formatDate(view.dueDate))] : []),
    '</table>',
    `<p><a href="${e(view.link)}" style="display:inline-block;padding:10px 18px;background:#1a73e8;color:#fff;text-decoration:none;border-radius:4px">${e(t.open)}</a></p>`,
    `<p><a href="${e(view.documentLink)}">${e(t.pdf)}</a></p>`,
    ...(manager ? [`<p>${e(t.manager)}: ${e(manager)}</p>`] : []),
    `<p style="color:#888;font-size:12px">${e(t.footer)}</p>`,
    '</body></html>',
  ].join('\n');

  return {
    from: envelope.from,
    to: envelope.to,
    ...(view.managerEmail ? { replyTo: view.managerEmail } : {}),
    subject: oneLine(t.subject({ ...view, number, sellerName: seller })),
    text: lines.join('\n'),
    html,
    messageId: envelope.messageId,
    headers: {
      // RFC 3834: keeps vacation responders from answering.
      'Auto-Submitted': 'auto-generated',
      'X-Invoice-Public-Id': view.publicId,
      'X-Invoice-Revision': String(view.revision),
    },
    attachments,
  };
}
