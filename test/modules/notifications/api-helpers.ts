/**
 * Shared pieces of the HTTP-level notification tests: short delivery settings, request
 * shorthands, mail lookups on the test SMTP server and row counts of the test database.
 */
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { ACME_KEY } from '../../helpers/fixtures.js';
import { parseMail, type ParsedMail, type TestSmtpServer } from './smtp-helpers.js';
import { reservedOn } from '../../helpers/quota.js';

/** Fast enough for tests, still long enough for loopback SMTP; retries come after ~0.2 s. */
/**
 * Short retries for tests. The request's bound stays generous (a loaded CI machine renders the
 * attached PDF and talks SMTP slowly); the test of the bound itself sets its own (BOUNDED_POLICY).
 */
export const FAST_NOTIFICATIONS: NonNullable<TestAppOptions['notifications']> = {
  policy: {
    requestTimeoutMs: 8_000,
    attemptTimeoutMs: 8_000,
    leaseMs: 15_000,
    retryBaseMs: 200,
    retryMaxMs: 400,
    maxAttempts: 4,
    batchSize: 20,
    pollIntervalMs: 50,
  },
  smtpTimeouts: { connectionTimeoutMs: 2_000, greetingTimeoutMs: 2_000, socketTimeoutMs: 4_000 },
};

/** A 1.5 s bound on the request's delivery attempt, for the test that measures it. */
export const BOUNDED_POLICY = { ...FAST_NOTIFICATIONS.policy, requestTimeoutMs: 1_500, attemptTimeoutMs: 1_500 };

export const SHARE = 'https://share.example.test/s';

export function appEnv(smtpUrl: string): Record<string, string> {
  return {
    SMTP_URL: smtpUrl,
    INVOICING_MAIL_FROM: 'invoices@billing.example',
    INVOICING_PUBLIC_URL: 'https://api.example.test',
    INVOICING_SHARE_URL: SHARE,
    INVOICING_PORTAL_URL: 'https://portal.example.test',
  };
}

/**
 * An API node whose e-mails the workers send (INVOICING_IN_PROCESS_WORKER=false: a create
 * attempts nothing after its commit), mailing through `smtpUrl`, with the test delivery settings.
 */
export function buildWorkerNode(smtpUrl: string, options: Omit<TestAppOptions, 'env' | 'notifications'> = {}): Promise<TestApp> {
  return buildTestApp({ ...options, env: { ...appEnv(smtpUrl), INVOICING_IN_PROCESS_WORKER: 'false' }, notifications: FAST_NOTIFICATIONS });
}

export const ORG1_INN = '7707083893';

/** A small valid document of org-1 with the given recipients. */
export function doc(number: string, extra: Record<string, unknown> = {}): Record<string, any> {
  return {
    number,
    date: '2026-11-28',
    currency: 'RUB',
    seller: { inn: ORG1_INN },
    buyer: { name: 'ООО «Покупатель»' },
    items: [{ name: 'Работа', qty: 1, price: 1234.5, vat_pct: null }],
    ...extra,
  };
}

export function recipients(...emails: string[]): Array<{ email: string; name: string }> {
  return emails.map((email, i) => ({ email, name: `Получатель ${i + 1}` }));
}

export function post(t: TestApp, payload: unknown, headers: Record<string, string> = {}, key = ACME_KEY): Promise<LightMyRequestResponse> {
  return t.call({ method: 'POST', url: '/api/v1/invoices', headers: { 'x-api-key': key, ...headers }, payload: payload as never });
}

export function put(t: TestApp, publicId: string, payload: unknown, key = ACME_KEY): Promise<LightMyRequestResponse> {
  return t.call({ method: 'PUT', url: `/api/v1/invoices/${publicId}`, headers: { 'x-api-key': key }, payload: payload as never });
}

export async function get(t: TestApp, publicId: string, key = ACME_KEY): Promise<Record<string, any>> {
  const res = await t.call({ method: 'GET', url: `/api/v1/invoices/${publicId}`, headers: { 'x-api-key': key } });
  if (res.statusCode !== 200) throw new Error(`GET ${publicId}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** The messages the server accepted for `email` (envelope recipient, case-insensitive). */
export function mailTo(server: TestSmtpServer, email: string): ParsedMail[] {
  return server.received.filter((m) => m.envelopeTo.some((a) => a.toLowerCase() === email.toLowerCase())).map((m) => parseMail(m.raw));
}

export async function countRows(t: TestApp, table: 'invoices' | 'share_links' | 'outbox' | 'email_quota' | 'idempotency_keys'): Promise<number> {
  const row = await t.db.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function reserved(t: TestApp, teamId: string): Promise<number> {
  const day = new Date().toISOString().slice(0, 10);
  return reservedOn(t.db.db, teamId, day);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
