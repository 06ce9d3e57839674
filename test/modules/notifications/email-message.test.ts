import { describe, expect, it } from 'vitest';
import { retryDelayMs, resolvePolicy } from '../../../src/modules/notifications/delivery-policy.js';
import { formatAmount } from '../../../src/modules/notifications/email-format.js';
import {
  buildInvoiceEmail,
  emailLocale,
  messageIdFor,
  messageIdHost,
  type InvoiceEmailView,
} from '../../../src/modules/notifications/email-message.js';
import { classifySmtpError, smtpOptionsFromUrl, DEFAULT_SMTP_TIMEOUTS } from '../../../src/modules/notifications/mail-transport.js';
import { isValidEmailAddress, resolveRecipients } from '../../../src/modules/notifications/recipients.js';

const view: InvoiceEmailView = {
  locale: 'ru',
  publicId: 'inv_ABCdef123',
  revision: 3,
  number: 'A-17',
  date: '2026-11-28',
  dueDate: '2026-12-05',
  sellerName: 'ООО «Ромашка»',
  buyerName: 'ООО «Покупатель»',
  recipientName: 'Пётр',
  total: '1234567.5',
  amountDue: '1234567.50',
  currency: 'RUB',
  link: 'https://share.example/s/tok1',
  documentLink: 'https://share.example/s/tok1/document.pdf',
  managerName: 'Иван Петров',
  managerEmail: 'ivan@romashka.example',
};
const envelope = { from: 'invoices@billing.example', to: 'petr@buyer.example', messageId: '<x@billing.example>' };

describe('buildInvoiceEmail', () => {
  it('writes the Russian subject, both bodies with total, amount due and the link, and Reply-To the manager', () => {
    const m = buildInvoiceEmail(view, envelope);
    expect(m.subject).toBe('Счёт № A-17 от 28.11.2026 — ООО «Ромашка»');
    expect(m.replyTo).toBe('ivan@romashka.example');
    expect(m.to).toBe('petr@buyer.example');
    expect(m.messageId).toBe('<x@billing.example>');
    expect(m.text).toContain('Здравствуйте, Пётр!');
    expect(m.text).toContain('1\u00a0234\u00a0567,50\u00a0RUB');
    expect(m.text).toContain('Оплатить до: 05.12.2026');
    expect(m.text).toContain('https://share.example/s/tok1');
    expect(m.html).toContain('href="https://share.example/s/tok1"');
    expect(m.html).toContain('ООО «Ромашка»');
    expect(m.headers['Auto-Submitted']).toBe('auto-generated');
  });

  it('writes English for an English-speaking team', () => {
    const m = buildInvoiceEmail({ ...view, locale: emailLocale('en-GB') }, envelope);
    expect(m.subject).toBe('Invoice No. A-17 of 28.11.2026 — ООО «Ромашка»');
    expect(m.text).toContain('Amount due: 1,234,567.50\u00a0RUB');
    expect(m.html).toContain('<html lang="en">');
  });

  it('escapes every user string in the HTML and keeps headers on one line', () => {
    const hostile = {
      ...view,
      sellerName: 'Evil <script>alert(1)</script>\r\nBcc: victim@x.example',
      recipientName: '<img src=x onerror=alert(1)>',
      number: '"><b>1',
      managerName: '<i>boss</i>',
    };
    const m = buildInvoiceEmail(hostile, envelope);
    expect(m.html).not.toMatch(/<script|<img|<b>|<i>/);
    expect(m.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(m.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(m.html).toContain('&quot;&gt;&lt;b&gt;1');
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject).toContain('Bcc: victim@x.example'); // harmless once on the subject line
  });

  it('omits Reply-To without a manager address, and due date and manager lines when absent', () => {
    const m = buildInvoiceEmail({ ...view, managerEmail: null, managerName: null, dueDate: null, recipientName: null }, envelope);
    expect(m.replyTo).toBeUndefined();
    expect(m.text).not.toContain('Оплатить до');
    expect(m.text).not.toContain('менеджер');
    expect(m.text.startsWith('Здравствуйте!')).toBe(true);
  });

  it('carries the attachments it is given (the PDF, once rendered)', () => {
    const pdf = { filename: 'invoice-A-17.pdf', content: Buffer.from('%PDF-1.7'), contentType: 'application/pdf' };
    expect(buildInvoiceEmail(view, envelope, [pdf]).attachments).toEqual([pdf]);
  });
});

describe('Message-ID', () => {
  it('is stable per document revision and recipient, case-insensitively, and differs otherwise', () => {
    const a = messageIdFor('inv_1', 2, 'Petr@Buyer.example', 'billing.example');
    expect(a).toMatch(/^<inv_1\.2\.[0-9a-f]{16}@billing\.example>$/);
    expect(messageIdFor('inv_1', 2, 'petr@buyer.example', 'billing.example')).toBe(a);
    expect(messageIdFor('inv_1', 3, 'petr@buyer.example', 'billing.example')).not.toBe(a);
    expect(messageIdFor('inv_1', 2, 'anna@buyer.example', 'billing.example')).not.toBe(a);
  });

  it('takes its host from the sender address', () => {
    expect(messageIdHost('invoices@Billing.Example')).toBe('billing.example');
    expect(messageIdHost('invoices@localhost')).toBe('localhost');
  });
});

describe('formatAmount', () => {
  it.each([
    ['0', 'ru', '0,00'],
    ['5.5', 'ru', '5,50'],
    ['1000', 'en', '1,000.00'],
    ['1234567.891', 'ru', '1\u00a0234\u00a0567,89'],
  ] as const)('%s in %s is %s', (amount, locale, expected) => {
    expect(formatAmount(amount, locale)).toBe(expected);
  });
});

describe('recipients', () => {
  it('takes api_recipients, deduplicated case-insensitively, first one winning', () => {
    const r = resolveRecipients({
      api_recipients: [{ email: ' A@x.example ', name: 'A' }, { email: 'a@X.example', name: 'dup' }, { email: '' }, { name: 'no address' }, { email: 'b@x.example' }],
      buyer: { email: 'buyer@x.example' },
    });
    expect(r.map((x) => [x.email, x.name, x.linkKind, x.valid])).toEqual([
      ['A@x.example', 'A', 'recipient', true],
      ['b@x.example', null, 'recipient', true],
    ]);
  });

  it('falls back to buyer.email, and to nobody', () => {
    expect(resolveRecipients({ api_recipients: [], buyer: { email: 'buyer@x.example', name: 'B' } })).toEqual([
      { email: 'buyer@x.example', name: 'B', linkKind: 'buyer', valid: true },
    ]);
    expect(resolveRecipients({ buyer: { name: 'B' } })).toEqual([]);
  });

  it('marks malformed addresses instead of dropping them', () => {
    const r = resolveRecipients({ api_recipients: [{ email: 'not-an-email' }, { email: 'ok@x.example' }], buyer: {} });
    expect(r.map((x) => x.valid)).toEqual([false, true]);
  });

  it.each(['a@b.co', 'first.last+tag@sub.example.org', 'иван@пример.рф', 'x@xn--80ak6aa92e.com', 'a@b.xn--p1ai', 'a@b.XN--P1AI', `a@${'b'.repeat(63)}.cc`, `${'a'.repeat(64)}@x.cc`, "!#$%&'*+/=?^_`{|}~-@x.cc"])('accepts %s', (a) => {
    expect(isValidEmailAddress(a)).toBe(true);
  });

  it.each(['', 'plain', '@x.example', 'a@', 'a@b', 'a@@b.example', 'a b@x.example', 'a@x..example', '.a@x.example', 'a.@x.example', 'A <a@x.example>', 'a@x.example\r\nBcc: c@d.example', 'a@-x.example', 'a@x.1', `${'a'.repeat(65)}@x.example`, 'a@b.xn--', 'a@b.c1', 'a@b.c-', 'a@b-.cc', `a@${'b'.repeat(64)}.cc`, 'a"b@x.cc', 'a@b.c', 'a@b.cc.'])(
    'rejects %j',
    (a) => {
      expect(isValidEmailAddress(a)).toBe(false);
    },
  );
});

describe('delivery policy', () => {
  it('backs off exponentially with ±20 % jitter, capped', () => {
    const p = { retryBaseMs: 30_000, retryMaxMs: 3_600_000 };
    expect(retryDelayMs(1, p, 0.5)).toBe(30_000);
    expect(retryDelayMs(2, p, 0.5)).toBe(60_000);
    expect(retryDelayMs(4, p, 0.5)).toBe(240_000);
    expect(retryDelayMs(30, p, 0.5)).toBe(3_600_000);
    expect(retryDelayMs(1, p, 0)).toBe(24_000);
    expect(retryDelayMs(1, p, 0.999999)).toBeLessThanOrEqual(36_000);
  });

  it('refuses a lease no longer than an attempt', () => {
    expect(() => resolvePolicy({ leaseMs: 5_000, attemptTimeoutMs: 5_000 })).toThrow(/leaseMs/);
  });
});

describe('SMTP settings', () => {
  it('reads host, port, credentials and TLS from SMTP_URL with secure defaults', () => {
    const o = smtpOptionsFromUrl('smtp://us%40er:p%3Ass@mail.example:2525', DEFAULT_SMTP_TIMEOUTS);
    expect(o).toMatchObject({
      host: 'mail.example',
      port: 2525,
      secure: false,
      // Credentials: STARTTLS is required unless the URL says otherwise.
      requireTLS: true,
      ignoreTLS: false,
      opportunisticTLS: false,
      auth: { user: 'us@er', pass: 'p:ss' },
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: 10_000,
      tls: { rejectUnauthorized: true, minVersion: 'TLSv1.2' },
    });
    expect(smtpOptionsFromUrl('smtps://mail.example', DEFAULT_SMTP_TIMEOUTS)).toMatchObject({ port: 465, secure: true });
    expect(smtpOptionsFromUrl('smtp://mail.example', DEFAULT_SMTP_TIMEOUTS)).toMatchObject({ port: 587 });
    expect(smtpOptionsFromUrl('smtp://mail.example', DEFAULT_SMTP_TIMEOUTS).auth).toBeUndefined();
    expect(smtpOptionsFromUrl('smtp://mail.example', DEFAULT_SMTP_TIMEOUTS).requireTLS).toBe(false);
    expect(smtpOptionsFromUrl('smtp://u:p@mail.example?require_tls=false', DEFAULT_SMTP_TIMEOUTS).requireTLS).toBe(false);
    expect(smtpOptionsFromUrl('smtps://u:p@mail.example', DEFAULT_SMTP_TIMEOUTS)).toMatchObject({ secure: true, requireTLS: false });
    expect(smtpOptionsFromUrl('smtp://m.example?require_tls=true&tls_reject_unauthorized=false', DEFAULT_SMTP_TIMEOUTS)).toMatchObject({
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    });
  });

  it('treats a 5xx rejection as permanent and connection trouble as transient', () => {
    const rejected = classifySmtpError({ code: 'EENVELOPE', responseCode: 550, response: '550 5.1.1 No such user', permanent: true });
    expect([rejected.code, rejected.permanent, rejected.message]).toEqual(['smtp_rejected', true, '550 5.1.1 No such user']);
    expect(classifySmtpError({ code: 'EENVELOPE', responseCode: 450, response: '450 try later' }).permanent).toBe(false);
    expect(classifySmtpError({ code: 'ECONNECTION', message: 'Connection closed' }).code).toBe('smtp_connection');
    expect(classifySmtpError({ code: 'ETIMEDOUT', message: 'Greeting never received' }).code).toBe('smtp_timeout');
    expect(classifySmtpError({ code: 'EAUTH', responseCode: 535, response: '535 bad' }).permanent).toBe(false);
  });
});
