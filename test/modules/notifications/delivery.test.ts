/**
 * The request's bounded attempt against real SMTP servers on loopback: what arrives, what is
 * reported, and how fast a broken server is given up on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createMailTransport,
  NotificationService,
  type DeliveryPolicy,
  type MailTransport,
} from '../../../src/modules/notifications/index.js';
import { utcDay } from '../../../src/modules/notifications/store/portable.js';
import { reservedOn } from '../../helpers/quota.js';
import { createStores } from '../../../src/stores.js';
import { systemClock } from '../../../src/shared/clock.js';
import { createTestDb, type TestDatabase } from '../../helpers/db.js';
import { BASES, createAndDeliver, outboxRows, seedTeams, storedInvoice, updateDocument } from './fixtures.js';
import { parseMail, startBrokenServer, startSmtpServer, type TestSmtpServer } from './smtp-helpers.js';
import { documentStatusPort } from '../../../src/modules/invoices/index.js';


const POLICY: Partial<DeliveryPolicy> = { requestTimeoutMs: 2_000, attemptTimeoutMs: 2_000, leaseMs: 10_000, retryBaseMs: 60_000 };
const TIMEOUTS = { connectionTimeoutMs: 1_000, greetingTimeoutMs: 1_000, socketTimeoutMs: 1_000 };

let db: TestDatabase;
const cleanup: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  db = await createTestDb();
  await seedTeams(db.db);
});
afterAll(async () => {
  await db.drop();
});
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

function serviceFor(smtpUrl: string | null, extra: { dataDir?: string; policy?: Partial<DeliveryPolicy> } = {}): NotificationService {
  const transport: MailTransport = createMailTransport({ smtpUrl, dataDir: extra.dataDir ?? os.tmpdir(), timeouts: TIMEOUTS });
  cleanup.push(() => transport.close());
  return new NotificationService({
    db: db.db,
    stores: createStores(db).notifications,
    clock: systemClock,
    transport,
    documents: documentStatusPort,
    bases: BASES,
    mailFrom: 'invoices@billing.example',
    policy: { ...POLICY, ...extra.policy },
  });
}

async function smtp(behaviour: Parameters<typeof startSmtpServer>[0] = {}): Promise<TestSmtpServer> {
  const server = await startSmtpServer(behaviour);
  cleanup.push(() => server.close());
  return server;
}

describe('delivery through a real SMTP server', () => {
  it('sends one message per recipient with its own link, escaped HTML and a stable Message-ID', async () => {
    const server = await smtp();
    const service = serviceFor(server.url);
    const { publicId, links, report } = await createAndDeliver(db.db, service, {
      buyerName: '<script>alert("x")</script> ООО',
      recipients: [{ email: 'Anna@Buyer.example', name: 'Анна' }, { email: 'anna@buyer.example' }, { email: 'petr@buyer.example' }],
      manager: { name: 'Иван Петров', email: 'ivan@romashka.example' },
    });

    expect(report.status).toBe(200);
    expect(report.delivered).toBe(true);
    expect(report.notifications).toMatchObject({
      document_public_id: publicId,
      requested: true,
      revision: 1,
      planned_count: 2,
      sent_count: 2,
      failed_count: 0,
      sent_to: ['Anna@Buyer.example', 'petr@buyer.example'],
      failed: [],
      blocked_by_service_gate: false,
      block_reason: '',
      mail_runtime: { transport: 'smtp', retry_queue: 0 },
    });
    expect(server.received).toHaveLength(2);

    for (const email of ['Anna@Buyer.example', 'petr@buyer.example']) {
      const got = server.received.find((m) => m.envelopeTo[0]?.toLowerCase() === email.toLowerCase());
      expect(got, email).toBeDefined();
      const mail = parseMail(got!.raw);
      const token = links.find((l) => l.kind === 'recipient' && l.email?.toLowerCase() === email.toLowerCase())!.token;
      expect(mail.headers.get('to')?.toLowerCase()).toContain(email.toLowerCase());
      expect(mail.headers.get('from')).toContain('invoices@billing.example');
      expect(mail.headers.get('reply-to')).toContain('ivan@romashka.example');
      expect(mail.headers.get('message-id')).toMatch(new RegExp(`^<${publicId}\\.1\\.[0-9a-f]{16}@billing\\.example>$`));
      expect(mail.subject).toBe('Счёт № A-17 от 28.11.2026 — ООО «Ромашка»');
      expect(mail.text).toContain(`https://share.example/s/${token}`);
      expect(mail.html).toContain(`href="https://share.example/s/${token}"`);
      expect(mail.text).toContain('1\u00a0234,50\u00a0RUB');
      // The buyer name is not in this template, the recipient's is; neither may carry markup.
      expect(mail.html).not.toMatch(/<script/i);
    }
    const row = await storedInvoice(db.db, 'acme', publicId);
    expect(row.buyer_status).toBe('sent');
    expect(JSON.parse(row.notifications!)).toMatchObject({ sent_count: 2, revision: 1 });
  });

  it('escapes a hostile recipient and seller name in the HTML that arrives', async () => {
    const server = await smtp();
    const service = serviceFor(server.url);
    await createAndDeliver(db.db, service, {
      sellerName: 'Seller <script>alert(1)</script>',
      recipients: [{ email: 'x@buyer.example', name: '<script>steal()</script>' }],
    });
    const mail = parseMail(server.received[0]!.raw);
    expect(mail.html).not.toMatch(/<script/i);
    expect(mail.html).toContain('&lt;script&gt;steal()&lt;/script&gt;');
    expect(mail.html).toContain('Seller &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.subject).toBe('Счёт № A-17 от 28.11.2026 — Seller <script>alert(1)</script>');
  });

  it('falls back to buyer.email with the buyer link, in English for an English team', async () => {
    const server = await smtp();
    const service = serviceFor(server.url);
    const { links, report } = await createAndDeliver(db.db, service, { buyerEmail: 'buyer@buyer.example', teamLocale: 'en' });
    expect(report.notifications.sent_to).toEqual(['buyer@buyer.example']);
    const mail = parseMail(server.received[0]!.raw);
    expect(mail.subject).toBe('Invoice No. A-17 of 28.11.2026 — ООО «Ромашка»');
    expect(mail.text).toContain(`https://share.example/s/${links.find((l) => l.kind === 'buyer')!.token}`);
    expect(mail.headers.get('reply-to')).toBeUndefined();
  });

  it('reports a malformed address as invalid_address and still sends to the others (207)', async () => {
    const server = await smtp();
    const service = serviceFor(server.url);
    const { report } = await createAndDeliver(db.db, service, { recipients: [{ email: 'not-an-email' }, { email: 'ok@buyer.example' }] });
    expect(report.status).toBe(207);
    expect(report.notifications).toMatchObject({
      planned_count: 2,
      sent_count: 1,
      failed_count: 1,
      sent_to: ['ok@buyer.example'],
      failed: [{ email: 'not-an-email', error: 'invalid_address', code: 'invalid_address', state: 'failed' }],
      blocked_by_service_gate: false,
    });
    expect(server.received.map((m) => m.envelopeTo)).toEqual([['ok@buyer.example']]);
  });

  it('reports a recipient rejected with 550 as a final failure with the server reply (207)', async () => {
    const server = await smtp({ rejectRecipient: (a) => (a === 'gone@buyer.example' ? 'Mailbox unavailable' : null) });
    const service = serviceFor(server.url);
    const { publicId, report } = await createAndDeliver(db.db, service, {
      recipients: [{ email: 'gone@buyer.example' }, { email: 'here@buyer.example' }],
    });
    expect(report.status).toBe(207);
    expect(report.notifications.sent_to).toEqual(['here@buyer.example']);
    expect(report.notifications.failed).toHaveLength(1);
    const failure = report.notifications.failed[0]!;
    expect(failure).toMatchObject({ email: 'gone@buyer.example', code: 'smtp_rejected', state: 'failed', attempts: 1 });
    expect(failure.error).toMatch(/^550\b.*Mailbox unavailable/);
    expect(report.notifications.mail_runtime.retry_queue).toBe(0);
    const rows = await outboxRows(db.db, publicId);
    expect(rows.map((r) => r.state)).toEqual(['failed', 'sent']);
  });

  it('gives up on a server that drops the connection within the bounded time, leaving a retry', async () => {
    const broken = await startBrokenServer('drop');
    cleanup.push(() => broken.close());
    const service = serviceFor(broken.url);
    const started = Date.now();
    const { publicId, report } = await createAndDeliver(db.db, service, { recipients: [{ email: 'a@buyer.example' }] });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(report.status).toBe(207);
    expect(report.delivered).toBe(false);
    expect(report.notifications.failed[0]).toMatchObject({ email: 'a@buyer.example', code: 'smtp_connection', state: 'retrying', attempts: 1 });
    expect(report.notifications.failed[0]!.next_attempt_at).toBeDefined();
    expect(report.notifications.mail_runtime.retry_queue).toBe(1);
    const [row] = await outboxRows(db.db, publicId);
    expect(row).toMatchObject({ state: 'pending', attempts: 1, locked_by: null });
    expect((await storedInvoice(db.db, 'acme', publicId)).buyer_status).toBe('not_sent');
  });

  it('gives up on a server that never answers within the bounded time', async () => {
    const silent = await startBrokenServer('silent');
    cleanup.push(() => silent.close());
    const service = serviceFor(silent.url);
    const started = Date.now();
    const { report } = await createAndDeliver(db.db, service, { recipients: [{ email: 'a@buyer.example' }, { email: 'b@buyer.example' }] });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(2_800);
    expect(report.status).toBe(207);
    expect(report.notifications.failed.map((f) => [f.code, f.state])).toEqual([
      ['smtp_timeout', 'retrying'],
      ['smtp_timeout', 'retrying'],
    ]);
  });

  it('bounds the whole attempt when the server stalls after the message data', async () => {
    const server = await smtp({ stallOnData: true });
    const service = serviceFor(server.url, { policy: { requestTimeoutMs: 1_500 } });
    const started = Date.now();
    const { report } = await createAndDeliver(db.db, service, { recipients: [{ email: 'a@buyer.example' }] });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(report.notifications.failed[0]).toMatchObject({ state: 'retrying', code: 'smtp_timeout' });
  });

  it('upgrades with STARTTLS when offered, refusing an untrusted certificate unless told otherwise', async () => {
    const server = await smtp({ offerStartTls: true });
    const strict = await createAndDeliver(db.db, serviceFor(server.url), { recipients: [{ email: 'a@buyer.example' }] });
    expect(strict.report.notifications.failed[0]).toMatchObject({ code: 'smtp_tls', state: 'retrying' });
    expect(server.received).toHaveLength(0);
    const relaxed = await createAndDeliver(db.db, serviceFor(`${server.url}?tls_reject_unauthorized=false`), {
      recipients: [{ email: 'a@buyer.example' }],
    });
    expect(relaxed.report.status).toBe(200);
    expect(server.received).toHaveLength(1);
  });

  it('authenticates with the credentials of SMTP_URL, never over plain text unless the URL says require_tls=false', async () => {
    const server = await smtp({ credentials: { user: 'mailer', pass: 's3cr:et' } });
    // The server offers no STARTTLS: the password must not cross in plain text.
    const plain = await createAndDeliver(db.db, serviceFor(server.url), { recipients: [{ email: 'a@buyer.example' }] });
    expect(plain.report.notifications.failed[0]).toMatchObject({ code: 'smtp_tls', state: 'retrying' });
    expect(server.received).toHaveLength(0);
    const explicit = `${server.url}?require_tls=false`;
    const { report } = await createAndDeliver(db.db, serviceFor(explicit), { recipients: [{ email: 'a@buyer.example' }] });
    expect(report.status).toBe(200);
    const wrong = await createAndDeliver(db.db, serviceFor(explicit.replace('s3cr', 'nope')), { recipients: [{ email: 'a@buyer.example' }] });
    expect(wrong.report.notifications.failed[0]).toMatchObject({ code: 'smtp_auth', state: 'retrying' });
  });
});

describe('without SMTP_URL', () => {
  it('writes one .eml file per message into <dataDir>/outbox and counts it as sent', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-eml-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const service = serviceFor(null, { dataDir });
    const { report } = await createAndDeliver(db.db, service, {
      buyerName: '<b>Buyer</b>',
      recipients: [{ email: 'a@buyer.example', name: '<b>A</b>' }, { email: 'b@buyer.example' }],
    });
    expect(report.status).toBe(200);
    expect(report.notifications.mail_runtime.transport).toBe('eml_file');
    const files = fs.readdirSync(path.join(dataDir, 'outbox'));
    expect(files).toHaveLength(2);
    expect(files.every((f) => f.endsWith('.eml'))).toBe(true);
    const mail = parseMail(fs.readFileSync(path.join(dataDir, 'outbox', files[0]!), 'utf8'));
    expect(mail.subject).toBe('Счёт № A-17 от 28.11.2026 — ООО «Ромашка»');
    expect(mail.html).not.toContain('<b>');
  });
});

describe('gates and plans', () => {
  it('blocks every e-mail when the tariff forbids external sharing, without using the quota', async () => {
    const server = await smtp();
    const service = serviceFor(server.url);
    const day = utcDay(new Date());
    const before = await reservedOn(db.db, 'beta', day);
    const { report } = await createAndDeliver(db.db, service, {
      teamId: 'beta',
      tariff: { emails_per_day: 50, external_share: false },
      recipients: [{ email: 'a@buyer.example' }, { email: 'bad' }],
    });
    expect(report.status).toBe(207);
    expect(report.notifications).toMatchObject({
      planned_count: 2,
      sent_count: 0,
      failed_count: 2,
      blocked_by_service_gate: true,
      block_reason: 'tariff_external_share_disabled',
      failed: [
        { email: 'a@buyer.example', error: 'tariff_external_share_disabled', state: 'blocked' },
        { email: 'bad', error: 'invalid_address', state: 'failed' },
      ],
    });
    expect(server.received).toHaveLength(0);
    expect(await reservedOn(db.db, 'beta', day)).toBe(before);
  });

  it('plans nothing when nobody has an address (200, requested)', async () => {
    const service = serviceFor(null);
    const { publicId, report } = await createAndDeliver(db.db, service, {});
    expect(report.status).toBe(200);
    expect(report.notifications).toMatchObject({ requested: true, planned_count: 0, sent_count: 0, failed: [] });
    expect(JSON.parse((await storedInvoice(db.db, 'acme', publicId)).notifications!)).toMatchObject({ requested: true, planned_count: 0 });
  });

  it('reports demo mode as blocked without storing anything', () => {
    const service = serviceFor(null);
    const report = service.demoOutcome('demo-invoice', {
      number: '1',
      date: '2026-01-01',
      currency: 'RUB',
      seller: {},
      buyer: { email: 'b@x.example' },
    });
    expect(report).toMatchObject({
      status: 207,
      delivered: false,
      notifications: { planned_count: 1, sent_count: 0, failed_count: 1, blocked_by_service_gate: true, block_reason: 'demo_mode' },
    });
    expect(service.notRequested('x')).toMatchObject({ requested: false, planned_count: 0, block_reason: '' });
  });

  it('sends again for a new revision and keeps the latest outcome on the document', async () => {
    const server = await smtp();
    const service = serviceFor(server.url);
    const first = await createAndDeliver(db.db, service, { recipients: [{ email: 'a@buyer.example' }] });
    const second = await updateDocument(db.db, service, first.publicId, { recipients: [{ email: 'a@buyer.example' }, { email: 'c@buyer.example' }] });
    const report = await service.deliverNow(second.pending);
    expect(report.notifications).toMatchObject({ revision: 2, sent_count: 2 });
    expect(server.received).toHaveLength(3);
    const ids = server.received.map((m) => parseMail(m.raw).headers.get('message-id'));
    expect(new Set(ids).size).toBe(3);
    expect(JSON.parse((await storedInvoice(db.db, 'acme', first.publicId)).notifications!)).toMatchObject({ revision: 2, sent_count: 2 });
    // A late outcome of revision 1 does not overwrite revision 2's.
    await service.refreshOutcome('acme', first.publicId, 1, 0, 0);
    expect(JSON.parse((await storedInvoice(db.db, 'acme', first.publicId)).notifications!)).toMatchObject({ revision: 2 });
  });
});
