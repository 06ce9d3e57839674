/**
 * An endpoint secret the service cannot decrypt (the operator changed INVOICING_SECRET): the
 * delivery fails at once with the reason, the endpoint is disabled (`secret_unreadable`) and
 * `webhook_endpoint.disabled` recorded; nothing is retried for ever. Rotating the secret and
 * re-enabling resumes deliveries; an unreadable previous secret in the overlap is left out.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../src/modules/webhooks/secrets.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME } from '../invoices/write-helpers.js';
import { Receiver } from './receiver.js';

let t: TestApp;
let receiver: Receiver;
let url: string;

beforeAll(async () => {
  t = await buildTestApp({
    env: { INVOICING_WEBHOOK_ALLOW_HTTP: 'true', INVOICING_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1' },
    webhooks: { policy: { pollIntervalMs: 60_000 } },
  });
  receiver = new Receiver();
  url = await receiver.start();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const call = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
  t.call({ method, url: `/api/v1/webhook_endpoints${path}`, headers: ACME, ...(payload ? { payload: payload as never } : {}) });

describe('an undecryptable endpoint secret', () => {
  it('fails the delivery with the reason and disables the endpoint instead of retrying for ever', async () => {
    const created = await call('POST', '', { url, events: ['invoice.payment_reported'] });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().endpoint.id as string;
    // Sealed under another service secret, as after INVOICING_SECRET changed.
    const foreign = new SecretBox('another-service-secret-0123456789abcdef').seal('whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk=');
    await t.db.db.updateTable('webhook_endpoints').set({ secret: foreign }).where('team_id', '=', 'acme').where('id', '=', id).execute();

    expect((await call('POST', `/${id}/test`)).statusCode).toBe(200);
    const first = await t.app.webhooks.worker.runOnce();
    expect(first.attempted).toBe(1);
    expect(receiver.received).toHaveLength(0);
    const endpoint = (await call('GET', `/${id}`)).json().endpoint;
    expect(endpoint).toMatchObject({ enabled: false, disabled_reason: 'secret_unreadable' });
    const attempts = (await call('GET', `/${id}/deliveries`)).json().items;
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ status_code: null, next_attempt_at: null, error: expect.stringMatching(/cannot be decrypted.*rotate the secret/) });
    const feed = (await t.call({ method: 'GET', url: '/api/v1/events?types=webhook_endpoint.disabled', headers: ACME })).json();
    expect(feed.items.map((e: { data: unknown }) => e.data)).toContainEqual({ endpoint_id: id, url, reason: 'secret_unreadable' });

    // Nothing is left to retry, however long the worker runs.
    const deliveryRows = await t.db.db.selectFrom('webhook_deliveries').select(['state']).where('endpoint_id', '=', id).execute();
    expect(deliveryRows.map((r) => r.state)).toEqual(['failed']);
    expect((await t.app.webhooks.worker.runOnce()).attempted).toBe(0);

    // Rotate, re-enable: deliveries resume, signed with the new secret only (the old one is unreadable).
    const rotated = await call('POST', `/${id}/rotate_secret`, {});
    expect(rotated.statusCode).toBe(200);
    const secret = rotated.json().secret as string;
    expect((await call('PATCH', `/${id}`, { enabled: true })).json().endpoint).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await call('POST', `/${id}/test`)).statusCode).toBe(200);
    await t.app.webhooks.worker.runOnce();
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0] as { headers: Record<string, string>; body: string };
    expect(got.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(new Webhook(secret).verify(got.body, got.headers)).toMatchObject({ type: 'ping' });
  });
});
