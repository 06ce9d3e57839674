/**
 * Where e-mail goes: an SMTP server named by SMTP_URL (through nodemailer), or, without one,
 * `.eml` files in `<dataDir>/outbox/` that count as sent (operating contract 2).
 *
 * SMTP defaults are the secure ones: STARTTLS is used whenever the server offers it and a
 * failed upgrade fails the attempt (no silent fallback to plain text); certificates are
 * verified; TLS 1.2 at least. `smtps://` connects with TLS from the start (port 465). With
 * credentials, a server that does not offer STARTTLS is refused unless `require_tls=false`.
 * Every network step is bounded (connection, greeting, socket inactivity) and the caller's
 * AbortSignal bounds the whole attempt.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { SMTPTransportOptions } from 'nodemailer';
import type { InvoiceEmail } from './email-message.js';

export type TransportKind = 'smtp' | 'eml_file';

export interface SmtpTimeouts {
  /** TCP (and TLS for smtps) connect. */
  connectionTimeoutMs: number;
  /** From connect to the server's 220 greeting. */
  greetingTimeoutMs: number;
  /** Inactivity on an open connection (a server that stops answering mid-session). */
  socketTimeoutMs: number;
}

export const DEFAULT_SMTP_TIMEOUTS: Readonly<SmtpTimeouts> = Object.freeze({
  connectionTimeoutMs: 5_000,
  greetingTimeoutMs: 5_000,
  socketTimeoutMs: 10_000,
});

export interface MailTransportOptions {
  /** SMTP_URL; null writes `.eml` files instead. */
  smtpUrl: string | null;
  /** INVOICING_DATA_DIR: `.eml` files go to `<dataDir>/outbox/`. */
  dataDir: string;
  timeouts?: Partial<SmtpTimeouts>;
}

/** Why an attempt failed, in the terms the outcome reports. */
export type SendErrorCode = 'smtp_rejected' | 'smtp_timeout' | 'smtp_connection' | 'smtp_tls' | 'smtp_auth' | 'smtp_error' | 'file_error';

export class MailSendError extends Error {
  constructor(
    message: string,
    readonly code: SendErrorCode,
    /** True when sending the same message again would be refused again (a 5xx for it). */
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'MailSendError';
  }
}

export interface MailTransport {
  readonly kind: TransportKind;
  /** Resolves with the server's reply (or the file written); rejects with MailSendError. */
  send(message: InvoiceEmail, signal: AbortSignal): Promise<{ response: string }>;
  close(): void;
}

/**
 * nodemailer options from SMTP_URL: `smtp[s]://[user:pass@]host[:port][?require_tls=true|false&tls_reject_unauthorized=false]`.
 * With credentials, `smtp://` requires STARTTLS (the password never crosses in plain text)
 * unless the URL says `require_tls=false` explicitly (docs/notifications.md).
 */
export function smtpOptionsFromUrl(smtpUrl: string, timeouts: SmtpTimeouts): SMTPTransportOptions {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const flag = (name: string) => ['1', 'true', 'yes'].includes((url.searchParams.get(name) ?? '').toLowerCase());
  const off = (name: string) => ['0', 'false', 'no'].includes((url.searchParams.get(name) ?? '').toLowerCase());
  const user = decodeURIComponent(url.username);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTLS: !secure && (user ? !off('require_tls') : flag('require_tls')),
    ignoreTLS: false,
    opportunisticTLS: false,
    ...(user ? { auth: { user, pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: timeouts.connectionTimeoutMs,
    greetingTimeout: timeouts.greetingTimeoutMs,
    socketTimeout: timeouts.socketTimeoutMs,
    dnsTimeout: timeouts.connectionTimeoutMs,
    tls: { minVersion: 'TLSv1.2', rejectUnauthorized: !off('tls_reject_unauthorized') },
  };
}

interface SmtpErrorLike {
  name?: string;
  code?: string;
  /** The socket's own code under nodemailer's (e.g. CERT_HAS_EXPIRED under ESOCKET). */
  originalCode?: string;
  message?: string;
  response?: string;
  responseCode?: number;
  permanent?: boolean;
  rejectedErrors?: SmtpErrorLike[];
}

/** The reply text to report: the server's own words when there are any. */
function describe(err: SmtpErrorLike): string {
  const first = err.rejectedErrors?.[0];
  const response = first?.response ?? err.response;
  if (response) return response.trim();
  return (err.message ?? 'unknown error').trim();
}

/** Node's certificate and TLS error codes. */
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|HOSTNAME_MISMATCH|ERR_OSSL_)/;

export function classifySmtpError(raw: unknown, signal?: AbortSignal): MailSendError {
  const err = (raw ?? {}) as SmtpErrorLike;
  const first = err.rejectedErrors?.[0];
  const responseCode = first?.responseCode ?? err.responseCode;
  if (signal?.aborted || err.code === 'EABORT' || err.name === 'AbortError') {
    return new MailSendError('the attempt ran out of time (no answer from the SMTP server)', 'smtp_timeout', false);
  }
  if (TLS_FAILURE.test(err.originalCode ?? '')) {
    return new MailSendError(`TLS: ${describe(err)}`, 'smtp_tls', false);
  }
  switch (err.code) {
    case 'EENVELOPE':
    case 'EMESSAGE': {
      const permanent = (first?.permanent ?? err.permanent) === true || (responseCode !== undefined && responseCode >= 500 && responseCode !== 503);
      return new MailSendError(describe(err), 'smtp_rejected', permanent);
    }
    case 'ETIMEDOUT':
      return new MailSendError(describe(err), 'smtp_timeout', false);
    case 'ECONNECTION':
    case 'ESOCKET':
    case 'EDNS':
    case 'EPROTOCOL':
      return new MailSendError(describe(err), 'smtp_connection', false);
    case 'ETLS':
    case 'EREQUIRETLS':
      return new MailSendError(describe(err), 'smtp_tls', false);
    case 'EAUTH':
    case 'ENOAUTH':
      // Retried: credentials are the operator's to fix, not a property of the message.
      return new MailSendError(describe(err), 'smtp_auth', false);
    default:
      return new MailSendError(describe(err), 'smtp_error', false);
  }
}

function toMailOptions(message: InvoiceEmail) {
  return {
    from: message.from,
    to: message.to,
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    subject: message.subject,
    text: message.text,
    html: message.html,
    messageId: message.messageId,
    headers: message.headers,
    attachments: message.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
    // Never read local files or URLs named in a message: the content is always inline.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

class SmtpTransport implements MailTransport {
  readonly kind = 'smtp' as const;
  private readonly transporter;

  constructor(options: SMTPTransportOptions) {
    this.transporter = nodemailer.createTransport(options);
  }

  async send(message: InvoiceEmail, signal: AbortSignal): Promise<{ response: string }> {
    try {
      const info = await this.transporter.sendMail({ ...toMailOptions(message), signal });
      if (info.rejected.length > 0) {
        throw Object.assign(new Error(`recipient rejected: ${info.rejected.join(', ')}`), { code: 'EENVELOPE', responseCode: 550, permanent: true });
      }
      return { response: info.response };
    } catch (err) {
      throw err instanceof MailSendError ? err : classifySmtpError(err, signal);
    }
  }

  close(): void {
    this.transporter.close();
  }
}

/** One `.eml` file per message, named after its Message-ID: a repeated attempt rewrites the same file. */
class EmlFileTransport implements MailTransport {
  readonly kind = 'eml_file' as const;
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

  constructor(private readonly dir: string) {}

  async send(message: InvoiceEmail, signal: AbortSignal): Promise<{ response: string }> {
    const name = `${message.messageId.replace(/^<|>$/g, '').replace(/[^A-Za-z0-9._-]/g, '_')}.eml`;
    const file = path.join(this.dir, name);
    try {
      signal.throwIfAborted();
      const info = await this.composer.sendMail(toMailOptions(message));
      await fs.mkdir(this.dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.writeFile(tmp, info.message as Buffer);
      await fs.rename(tmp, file);
      return { response: `written to ${file}` };
    } catch (err) {
      if (signal.aborted) throw new MailSendError('the attempt ran out of time', 'smtp_timeout', false);
      throw new MailSendError(`could not write ${file}: ${(err as Error).message}`, 'file_error', false);
    }
  }

  close(): void {
    this.composer.close();
  }
}

export function createMailTransport(options: MailTransportOptions): MailTransport {
  if (!options.smtpUrl) return new EmlFileTransport(path.join(options.dataDir, 'outbox'));
  const timeouts = { ...DEFAULT_SMTP_TIMEOUTS, ...options.timeouts };
  return new SmtpTransport(smtpOptionsFromUrl(options.smtpUrl, timeouts));
}
