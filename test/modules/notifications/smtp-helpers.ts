/**
 * Real mail servers on loopback for the notification tests: an smtp-server that records what
 * it accepts (and can reject recipients or stall), a server that drops every connection and
 * one that never answers; plus a small MIME reader for the recorded messages.
 */
import net from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelopeTo: string[];
  raw: string;
}

export interface SmtpBehaviour {
  /** A reply text for a 550 rejection of this recipient, or null to accept. */
  rejectRecipient?: (address: string) => string | null;
  /** Accept the DATA stream but never answer it. */
  stallOnData?: boolean;
  /** Offer STARTTLS (with smtp-server's built-in self-signed certificate). */
  offerStartTls?: boolean;
  /** Require AUTH PLAIN/LOGIN with these credentials. */
  credentials?: { user: string; pass: string };
}

export interface TestSmtpServer {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** Changes how the server behaves from the next command on. */
  behaviour: SmtpBehaviour;
  close(): Promise<void>;
}

export async function startSmtpServer(behaviour: SmtpBehaviour = {}, port = 0): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const state = { behaviour };
  const server = new SMTPServer({
    secure: false,
    authOptional: !behaviour.credentials,
    disabledCommands: behaviour.offerStartTls ? [] : ['STARTTLS'],
    logger: false,
    disableReverseLookup: true,
    onAuth(auth, _session, callback) {
      const c = state.behaviour.credentials;
      if (c && auth.username === c.user && auth.password === c.pass) return callback(null, { user: auth.username });
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const reason = state.behaviour.rejectRecipient?.(address.address) ?? null;
      if (reason !== null) return callback(Object.assign(new Error(reason), { responseCode: 550 }));
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.behaviour.stallOnData) return; // never answers the DATA
        received.push({ envelopeTo: session.envelope.rcptTo.map((a) => a.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.server.address() as net.AddressInfo;
  const auth = behaviour.credentials ? `${encodeURIComponent(behaviour.credentials.user)}:${encodeURIComponent(behaviour.credentials.pass)}@` : '';
  return {
    port: address.port,
    url: `smtp://${auth}127.0.0.1:${address.port}`,
    received,
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(b: SmtpBehaviour) {
      state.behaviour = b;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TCP server that accepts and at once drops every connection, or never says anything. */
export async function startBrokenServer(mode: 'drop' | 'silent', port = 0): Promise<{ port: number; url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    if (mode === 'drop') {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    url: `smtp://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A free loopback port (listened on and released). */
export { freePort } from '../../helpers/process.js';

// --- A small MIME reader (enough for what nodemailer writes) ---------------------------------

export interface ParsedMail {
  headers: Map<string, string>;
  subject: string;
  text: string;
  html: string;
  attachments: Array<{ filename: string; contentType: string; content: Buffer }>;
}

function splitHeadBody(raw: string): { head: string; body: string } {
  const i = raw.search(/\r?\n\r?\n/);
  if (i < 0) return { head: raw, body: '' };
  const sep = raw.slice(i).match(/^\r?\n\r?\n/)?.[0] ?? '\n\n';
  return { head: raw.slice(0, i), body: raw.slice(i + sep.length) };
}

function parseHeaders(head: string): Map<string, string> {
  const map = new Map<string, string>();
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const c = line.indexOf(':');
    if (c > 0) map.set(line.slice(0, c).trim().toLowerCase(), line.slice(c + 1).trim());
  }
  return map;
}

function decodeQp(value: string): Buffer {
  const soft = value.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const ch = soft[i] as string;
    if (ch === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(ch, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/** RFC 2047 encoded words, as nodemailer writes them (UTF-8, B or Q). */
export function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQp(data.replace(/_/g, ' ')).toString('utf8'),
    );
}

function param(header: string | undefined, name: string): string | null {
  const m = new RegExp(`${name}\\*?="?([^";]+)"?`, 'i').exec(header ?? '');
  return m ? (m[1] as string) : null;
}

function decodeBody(body: string, encoding: string | undefined): Buffer {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64');
    case 'quoted-printable':
      return decodeQp(body);
    default:
      return Buffer.from(body, 'utf8');
  }
}

function walk(raw: string, into: ParsedMail): void {
  const { head, body } = splitHeadBody(raw);
  const headers = parseHeaders(head);
  const type = headers.get('content-type') ?? 'text/plain';
  if (type.toLowerCase().startsWith('multipart/')) {
    const boundary = param(type, 'boundary');
    if (!boundary) return;
    const parts = body.split(new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?\\r?\\n?`));
    for (const part of parts.slice(1)) if (part.trim() !== '') walk(part, into);
    return;
  }
  const content = decodeBody(body, headers.get('content-transfer-encoding'));
  const disposition = headers.get('content-disposition') ?? '';
  if (disposition.toLowerCase().startsWith('attachment')) {
    into.attachments.push({ filename: decodeWords(param(disposition, 'filename') ?? ''), contentType: type.split(';')[0] as string, content });
  } else if (type.toLowerCase().startsWith('text/html')) {
    into.html += content.toString('utf8');
  } else if (type.toLowerCase().startsWith('text/plain')) {
    into.text += content.toString('utf8');
  }
}

export function parseMail(raw: string): ParsedMail {
  const { head } = splitHeadBody(raw);
  const headers = parseHeaders(head);
  const mail: ParsedMail = { headers, subject: decodeWords(headers.get('subject') ?? ''), text: '', html: '', attachments: [] };
  walk(raw, mail);
  return mail;
}

/** Waits until `check` is true, polling; fails after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
