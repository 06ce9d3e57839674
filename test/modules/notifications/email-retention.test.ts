/**
 * Retention of e-mails (INVOICING_DELIVERY_RETENTION_DAYS): a pass deletes every e-mail outbox
 * row that finished (sent, failed, blocked, superseded) longer ago than the retention, however
 * many (batches until none is left); rows still to send stay, and the document keeps its e-mails'
 * outcome (`metadata.notifications`), which it holds in its own row. A real SMTP server on
 * loopback; the notifications clock is moved, as a node running for weeks would see it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboxTable } from '../../../src/db/types.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { appEnv, doc, FAST_NOTIFICATIONS, get, post } from './api-helpers.js';
import { startSmtpServer, type TestSmtpServer } from './smtp-helpers.js';

const DAY = 86_400_000;
let server: TestSmtpServer;
let t: TestApp;
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

beforeAll(async () => {
  server = await startSmtpServer();
  t = await buildTestApp({ env: { ...appEnv(server.url), INVOICING_DELIVERY_RETENTION_DAYS: '30' }, notifications: { ...FAST_NOTIFICATIONS, clock } });
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

async function emailRows(publicId: string): Promise<Array<{ state: string }>> {
  return t.db.db.selectFrom('outbox').select('state').where('team_id', '=', 'acme').where('public_id', '=', publicId).where('kind', '=', 'email').execute();
}

describe('e-mail retention', () => {
  it('deletes every finished e-mail older than the retention in one pass, keeps the rest and the document’s outcome', async () => {
    const res = await post(t, { invoice: doc('RET-MAIL-1', { api_recipients: [{ email: 'kept@buyer.example' }] }), notify_recipients: true });
    expect(res.statusCode, res.body).toBe(200);
    const publicId = res.json().public_id as string;
    const outcome = (await get(t, publicId)).metadata.notifications;
    expect(outcome).toMatchObject({ sent_count: 1, sent_to: ['kept@buyer.example'] });

    const old = new Date(Date.now() - 40 * DAY).toISOString();
    const states = ['sent', 'failed', 'blocked', 'superseded', 'pending'] as const;
    const rows: OutboxTable[] = Array.from({ length: 2_501 }, (_, i) => {
      const state = i === 2_500 ? 'pending' : (states[i % 4] as OutboxTable['state']);
      return {
        team_id: 'acme', id: `old${String(i).padStart(6, '0')}`, kind: 'email', public_id: publicId, revision: 100 + i, position: 0,
        recipient: `old${i}@buyer.example`, idem_key: `${publicId}:${100 + i}:old${i}@buyer.example`, message_id: `<old${i}@billing.example>`,
        payload: '{}', state, attempts: 1, max_attempts: 4, next_attempt_at: old, locked_by: null, locked_until: null,
        last_error: null, last_error_code: null, sent_at: state === 'sent' ? old : null, created_at: old, updated_at: old, traceparent: null,
      };
    });
    // Far in the future, so no worker claims the one still pending.
    (rows[2_500] as OutboxTable).next_attempt_at = '2999-01-01T00:00:00.000Z';
    for (let i = 0; i < rows.length; i += 250) await t.db.db.insertInto('outbox').values(rows.slice(i, i + 250)).execute();

    const pass = await t.app.notifier.worker.runRetention();
    expect(pass.emails).toBe(2_500);
    expect((await emailRows(publicId)).map((r) => r.state).sort()).toEqual(['pending', 'sent']);

    offsetMs = 31 * DAY;
    await t.app.notifier.worker.runRetention();
    expect((await emailRows(publicId)).map((r) => r.state)).toEqual(['pending']);
    // The document still tells what happened to its e-mails.
    expect((await get(t, publicId)).metadata.notifications).toEqual(outcome);
  });
});
