import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyStore } from '../../../src/modules/invoices/write/idempotency.js';
import { groupCommitFor } from '../../../src/db/group-commit.js';
import { statementsDuring } from '../../helpers/statements.js';
import { requestHash } from '../../../src/shared/request-hash.js';
import { systemClock } from '../../../src/shared/clock.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { BETA_KEY } from '../../helpers/fixtures.js';
import { usingPostgres } from '../../helpers/db.js';
import { sql } from 'kysely';
import { BETA_ORG_INN, ORG2_INN, countRows, createOk, get, post, put, simpleDoc } from './write-helpers.js';

const betaDoc = (number: string, extra: Record<string, unknown> = {}) => simpleDoc(number, { seller: { inn: BETA_ORG_INN }, ...extra });

describe('document identity: public_id and Idempotency-Key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  describe('public_id', () => {
    it('uses a client-supplied public_id', async () => {
      const body = await createOk(t, { invoice: simpleDoc('c1', { public_id: 'ERP_invoice-0001' }) });
      expect(body.public_id).toBe('ERP_invoice-0001');
      expect(body.invoice.public_id).toBe('ERP_invoice-0001');
      expect((await get(t, 'ERP_invoice-0001')).json().invoice.number).toBe('c1');
    });

    it.each([['1234567'], ['x'.repeat(65)], ['with.dot.inside'], ['пробел id 1'], ['a+b=c/d?e']])('refuses the public_id %j with 400', async (publicId) => {
      const before = await countRows(t, 'invoices');
      const res = await post(t, { invoice: simpleDoc('c2', { public_id: publicId }) });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toContainEqual(expect.objectContaining({ field: 'public_id' }));
      expect(await countRows(t, 'invoices')).toBe(before);
    });

    it('refuses a public_id taken in the same team or in another team with 409 public_id_conflict', async () => {
      await createOk(t, { invoice: simpleDoc('c3', { public_id: 'taken-by-acme-1' }) });
      await createOk(t, { invoice: betaDoc('c4', { public_id: 'taken-by-beta-1' }) }, { 'x-api-key': BETA_KEY });
      const before = await countRows(t, 'invoices');
      for (const id of ['taken-by-acme-1', 'taken-by-beta-1']) {
        const res = await post(t, { invoice: simpleDoc('c5', { public_id: id }) });
        expect(res.statusCode).toBe(409);
        expect(res.json()).toMatchObject({ ok: false, error: 'public_id_conflict', document_public_id: id });
      }
      const res = await post(t, { invoice: betaDoc('c6', { public_id: 'taken-by-acme-1' }) }, { 'x-api-key': BETA_KEY });
      expect(res.statusCode).toBe(409);
      expect(await countRows(t, 'invoices')).toBe(before);
      // The other team's document is untouched and still not visible to acme.
      expect((await get(t, 'taken-by-beta-1', { 'x-api-key': BETA_KEY })).json().invoice.number).toBe('c4');
      expect((await get(t, 'taken-by-beta-1')).statusCode).toBe(404);
    });

    it('lets exactly one of ten concurrent creates with the same client id win', async () => {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => post(t, { invoice: simpleDoc(`race-${i}`, { public_id: 'raced-client-id' }) })));
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([200, ...Array(9).fill(409)]);
      for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().error).toBe('public_id_conflict');
      const winner = results.find((r) => r.statusCode === 200)?.json();
      expect(await countRows(t, 'invoices', 'raced-client-id')).toBe(1);
      expect(await countRows(t, 'share_links', 'raced-client-id')).toBe(2);
      expect((await get(t, 'raced-client-id')).json().invoice.number).toBe(winner.invoice.number);
    });

    it('generates unique, URL-safe, unguessable ids', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push((await createOk(t, simpleDoc(`g${i}`))).public_id);
      expect(new Set(ids).size).toBe(50);
      for (const id of ids) {
        expect(id).toMatch(/^[A-Za-z0-9_-]{22,64}$/);
        expect(encodeURIComponent(id)).toBe(id);
      }
    });

    it('generates ids and share-link tokens in creation order (time prefix) with 128 random bits after it', async () => {
      const made: Array<{ id: string; tokens: string[] }> = [];
      for (let i = 0; i < 5; i++) {
        const body = await createOk(t, simpleDoc(`order-${i}`, { api_recipients: [{ email: `r${i}@example.com` }] }));
        const links = body.share_links as { buyer_url: string; colleague_url: string; recipients: Array<{ url: string }> };
        const urls = [links.buyer_url, links.colleague_url, ...links.recipients.map((r) => r.url)];
        expect(urls).toHaveLength(3);
        const tokens = urls.map((u) => u.split('/').pop() as string);
        made.push({ id: body.public_id, tokens });
        // A new millisecond for the next document.
        await new Promise((r) => setTimeout(r, 2));
      }
      const ids = made.map((m) => m.id);
      expect([...ids].sort()).toEqual(ids);
      for (const { id, tokens } of made) {
        for (const value of [id, ...tokens]) {
          expect(value).toMatch(/^[0-9a-z]{9}[A-Za-z0-9_-]{22}$/);
          expect(Buffer.from(value.slice(9), 'base64url').length).toBe(16);
        }
      }
      for (let i = 1; i < made.length; i++) {
        const previous = made[i - 1] as { tokens: string[] };
        for (const token of (made[i] as { tokens: string[] }).tokens) for (const older of previous.tokens) expect(token > older).toBe(true);
      }
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first response for the same key and body, storing one document', async () => {
      const before = await countRows(t, 'invoices');
      const body = { invoice: simpleDoc('idem-1'), actor_login: 'erp' };
      const first = await post(t, body, { 'idempotency-key': 'key-same-body' });
      expect(first.statusCode).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      // Key order of the body does not matter.
      const reordered = { actor_login: 'erp', invoice: Object.fromEntries(Object.entries(simpleDoc('idem-1')).reverse()) };
      for (const again of [body, reordered]) {
        const replay = await post(t, again, { 'idempotency-key': 'key-same-body' });
        expect(replay.statusCode).toBe(200);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.headers.etag).toBe(first.headers.etag);
        expect(replay.json()).toEqual(first.json());
      }
      expect(await countRows(t, 'invoices')).toBe(before + 1);
    });

    it('records the final answer with the document when no e-mail follows: the replay is the same bytes', async () => {
      const body = { invoice: simpleDoc('idem-final') };
      const first = await post(t, body, { 'idempotency-key': 'key-final' });
      expect(first.statusCode).toBe(200);
      const row = await t.db.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('team_id', '=', 'acme')
        .where('idem_key', '=', 'key-final')
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'done', response_status: 200 });
      expect(JSON.parse(row.response_body ?? 'null')).toEqual(first.json());
      const replay = await post(t, body, { 'idempotency-key': 'key-final' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.payload).toBe(first.payload);
      expect(replay.headers.etag).toBe(first.headers.etag);
    });

    it('sweeps the team’s expired keys on a keyed create, through an index that visits only the expired ones', async () => {
      const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
      const expired = { request_hash: '0'.repeat(64), state: 'done' as const, response_status: 200, response_body: '{}', created_at: old, expires_at: old };
      await t.db.db
        .insertInto('idempotency_keys')
        .values([
          { team_id: 'acme', idem_key: 'key-expired-acme', ...expired },
          { team_id: 'beta', idem_key: 'key-expired-beta', ...expired },
        ])
        .execute();
      await createOk(t, { invoice: simpleDoc('idem-sweep') }, { 'idempotency-key': 'key-sweep' });
      const left = await t.db.db.selectFrom('idempotency_keys').select(['team_id', 'idem_key']).where('idem_key', 'like', 'key-expired-%').orderBy('team_id').execute();
      // Only the creating team's keys are swept.
      expect(left).toEqual([{ team_id: 'beta', idem_key: 'key-expired-beta' }]);
      if (!usingPostgres()) {
        // Not the primary key (team_id, idem_key): that walked every key of the team, reading each stored response.
        const plan = await sql<{ detail: string }>`explain query plan delete from idempotency_keys where team_id = ${'acme'} and expires_at < ${old}`.execute(t.db.db);
        expect(plan.rows.map((r) => r.detail).join(' ')).toContain('idempotency_keys_team_expires_idx (team_id=? AND expires_at<?)');
      }
    });

    it('takes a key whose record expired as new, whatever body it had', async () => {
      const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
      await t.db.db
        .insertInto('idempotency_keys')
        .values({ team_id: 'acme', idem_key: 'key-reused-later', request_hash: '0'.repeat(64), state: 'done', response_status: 200, response_body: '{}', created_at: old, expires_at: old })
        .execute();
      const res = await post(t, { invoice: simpleDoc('idem-later') }, { 'idempotency-key': 'key-reused-later' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      const replay = await post(t, { invoice: simpleDoc('idem-later') }, { 'idempotency-key': 'key-reused-later' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json().public_id).toBe(res.json().public_id);
    });

    it.runIf(usingPostgres())('claims the key in one statement of its own on PostgreSQL: six round trips a keyed create', async () => {
      await post(t, { invoice: simpleDoc('idem-rt-warm') }, { 'idempotency-key': 'key-rt-warm' });
      let status = 0;
      const texts = await statementsDuring(async () => {
        status = (await post(t, { invoice: simpleDoc('idem-rt') }, { 'idempotency-key': 'key-rt' })).statusCode;
      });
      expect(status).toBe(200);
      // The caller, the claim, then the document's transaction: BEGIN, its statement, the key's record, COMMIT.
      expect(texts, JSON.stringify(texts.map((x) => x.slice(0, 60)))).toHaveLength(6);
      expect(texts.filter((x) => /^begin/i.test(x))).toHaveLength(1);
    });

    it('refuses the same key with another body: 409 idempotency_key_reused', async () => {
      await createOk(t, { invoice: simpleDoc('idem-2') }, { 'idempotency-key': 'key-other-body' });
      const before = await countRows(t, 'invoices');
      const res = await post(t, { invoice: simpleDoc('idem-2-changed') }, { 'idempotency-key': 'key-other-body' });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
      expect(await countRows(t, 'invoices')).toBe(before);
    });

    it("keeps keys per team: another team's identical key is its own request", async () => {
      const acme = await createOk(t, { invoice: simpleDoc('idem-3') }, { 'idempotency-key': 'key-per-team' });
      const beta = await post(t, { invoice: betaDoc('idem-3') }, { 'x-api-key': BETA_KEY, 'idempotency-key': 'key-per-team' });
      expect(beta.statusCode).toBe(200);
      expect(beta.headers['idempotent-replayed']).toBeUndefined();
      expect(beta.json().public_id).not.toBe(acme.public_id);
    });

    it('creates one document for eight concurrent retries: the others replay it or are told to wait', async () => {
      const before = await countRows(t, 'invoices');
      const body = { invoice: simpleDoc('idem-race') };
      const results = await Promise.all(Array.from({ length: 8 }, () => post(t, body, { 'idempotency-key': 'key-concurrent' })));
      expect(await countRows(t, 'invoices')).toBe(before + 1);
      const created = results.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
      expect(created).toHaveLength(1);
      const id = created[0]?.json().public_id;
      for (const r of results) {
        if (r.statusCode === 200) expect(r.json().public_id).toBe(id);
        else {
          expect(r.statusCode).toBe(409);
          expect(r.json().error).toBe('idempotency_request_in_progress');
          expect(r.headers['retry-after']).toBe('1');
        }
      }
      // Once the first has finished, a retry replays it.
      const later = await post(t, body, { 'idempotency-key': 'key-concurrent' });
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(later.json().public_id).toBe(id);
    });

    it('does not burn the key on a refused request: the corrected retry is accepted, and then owns the key', async () => {
      const key = 'key-after-refusal';
      const wrong = { invoice: simpleDoc('fix-1', { seller: { inn: ORG2_INN } }) };
      const refused = await post(t, wrong, { 'idempotency-key': key });
      expect(refused.statusCode).toBe(403);
      const invalid = await post(t, { invoice: { ...simpleDoc('fix-1'), date: '2026-02-30' } }, { 'idempotency-key': key });
      expect(invalid.statusCode).toBe(400);
      const corrected = { invoice: simpleDoc('fix-1') };
      const ok = await post(t, corrected, { 'idempotency-key': key });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['idempotent-replayed']).toBeUndefined();
      const replay = await post(t, corrected, { 'idempotency-key': key });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json().public_id).toBe(ok.json().public_id);
      // The key now belongs to the corrected body.
      const res = await post(t, wrong, { 'idempotency-key': key });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('idempotency_key_reused');
    });

    it('takes over the claim of a request that died mid-way (a pending key older than the lease)', async () => {
      // What a crash leaves behind: the claim, and no document (both commit together). Nothing was
      // stored, so as after any failed attempt the key is free, whatever body the retry carries.
      const claimedAt = new Date(Date.now() - 10 * 60_000);
      await t.db.db
        .insertInto('idempotency_keys')
        .values({
          team_id: 'acme',
          idem_key: 'key-abandoned',
          request_hash: '0'.repeat(64),
          state: 'pending',
          response_status: null,
          response_body: null,
          created_at: claimedAt.toISOString(),
          expires_at: new Date(claimedAt.getTime() + 86_400_000).toISOString(),
        })
        .execute();
      const body = { invoice: simpleDoc('abandoned') };
      const res = await post(t, body, { 'idempotency-key': 'key-abandoned' });
      expect(res.statusCode, res.body).toBe(200);
      const replay = await post(t, body, { 'idempotency-key': 'key-abandoned' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json().public_id).toBe(res.json().public_id);
    });

    it('still tells a retry to wait while a recent claim is running', async () => {
      const body = { invoice: simpleDoc('running') };
      await t.db.db
        .insertInto('idempotency_keys')
        .values({
          team_id: 'acme',
          idem_key: 'key-running',
          request_hash: requestHash(body),
          state: 'pending',
          response_status: null,
          response_body: null,
          created_at: new Date().toISOString(),
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        })
        .execute();
      const res = await post(t, body, { 'idempotency-key': 'key-running' });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('idempotency_request_in_progress');
    });

    it.runIf(!usingPostgres())('claims the key in the document\'s own write on SQLite: one group-commit write a keyed create, the claim rolled back with a failed write', async () => {
      const group = groupCommitFor(t.db.db);
      const writesBefore = group.stats.writes;
      const first = await post(t, { invoice: simpleDoc('idem-one-write') }, { 'idempotency-key': 'key-one-write' });
      expect(first.statusCode).toBe(200);
      expect(group.stats.writes - writesBefore).toBe(1);
      // A write that fails after its claim (the client's public_id is another document's): no key left behind.
      await createOk(t, { invoice: simpleDoc('idem-taken', { public_id: 'idem-taken-1' }) });
      const failed = await post(t, { invoice: simpleDoc('idem-taken', { public_id: 'idem-taken-1' }) }, { 'idempotency-key': 'key-failed-write' });
      expect(failed.statusCode).toBe(409);
      expect(await t.db.db.selectFrom('idempotency_keys').select('idem_key').where('idem_key', '=', 'key-failed-write').execute()).toEqual([]);
    });

    // On SQLite the claim commits with the document (above): no claim is ever seen pending mid-way.
    it.runIf(usingPostgres())('rolls back a slow first request whose claim was taken over, leaving the new claim alone', async () => {
      const store = new IdempotencyStore(t.stores.invoices, systemClock);
      const takenOverAt = new Date(Date.now() + 1000).toISOString();
      const work = store.run('acme', 'key-slow', 'f'.repeat(64), async (onCommit) => {
        // Meanwhile the lease lapsed and a retry took the claim over.
        await t.db.db.updateTable('idempotency_keys').set({ created_at: takenOverAt }).where('team_id', '=', 'acme').where('idem_key', '=', 'key-slow').execute();
        const outcome = { status: 200 as const, body: {} as never, etag: '', replayed: false };
        await t.db.db.transaction().execute(async (trx) => onCommit(trx, outcome, true));
        return outcome;
      });
      await expect(work).rejects.toMatchObject({ body: { error: 'idempotency_request_in_progress' } });
      const row = await t.db.db.selectFrom('idempotency_keys').selectAll().where('team_id', '=', 'acme').where('idem_key', '=', 'key-slow').executeTakeFirst();
      expect(row).toMatchObject({ state: 'pending', created_at: takenOverAt });
    });

    it('releases the key after a public_id conflict too', async () => {
      await createOk(t, { invoice: simpleDoc('dup', { public_id: 'idem-conflict-1' }) });
      const keys = await countRows(t, 'idempotency_keys');
      const res = await post(t, { invoice: simpleDoc('dup', { public_id: 'idem-conflict-1' }) }, { 'idempotency-key': 'key-conflict' });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('public_id_conflict');
      expect(await countRows(t, 'idempotency_keys')).toBe(keys);
    });

    it('refuses a key longer than 255 characters with 400', async () => {
      const res = await post(t, { invoice: simpleDoc('long-key') }, { 'idempotency-key': 'k'.repeat(256) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    });
  });

  describe('sending_restricted', () => {
    it.each([['notify_recipients'], ['send_notifications']])('refuses %s with public_share_enabled false: 409, nothing stored', async (flag) => {
      const before = await Promise.all([countRows(t, 'invoices'), countRows(t, 'share_links'), countRows(t, 'idempotency_keys')]);
      const res = await post(
        t,
        { invoice: simpleDoc('sr-1', { public_share_enabled: false, buyer: { name: 'B', email: 'b@buyer.example' } }), [flag]: true },
        { 'idempotency-key': `key-restricted-${flag}` },
      );
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'sending_restricted' });
      expect(await Promise.all([countRows(t, 'invoices'), countRows(t, 'share_links'), countRows(t, 'idempotency_keys')])).toEqual(before);
    });

    it('refuses it on update too, leaving the document as it was', async () => {
      const created = await createOk(t, { invoice: simpleDoc('sr-2') });
      const res = await put(t, created.public_id, { invoice: simpleDoc('sr-2-changed', { public_share_enabled: false }), notify_recipients: true });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('sending_restricted');
      expect((await get(t, created.public_id)).json()).toMatchObject({ invoice: { number: 'sr-2' }, metadata: { revision: 1 } });
    });

    it('accepts a document with sharing off when no e-mail is asked for', async () => {
      const body = await createOk(t, { invoice: simpleDoc('sr-3', { public_share_enabled: false }), notify_recipients: false });
      expect(body.share_gate).toMatchObject({ available: false, public_share_enabled: false, reason: 'public_share_disabled' });
    });
  });
});
