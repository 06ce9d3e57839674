/** Tenant isolation of the documents API: another team's document does not exist for you. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME_KEY, BETA_KEY, SERVICE_KEY } from '../../helpers/fixtures.js';
import { BETA_ORG_INN, createOk, simpleDoc, storedRow } from './write-helpers.js';

const ACME = { 'x-api-key': ACME_KEY };
const BETA = { 'x-api-key': BETA_KEY };
const SERVICE_AS_ACME = { 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'acme' };
const SERVICE_AS_BETA = { 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'beta' };

const SHARED_WORD = 'Изолятор';

describe('documents of one team are invisible to another (security)', () => {
  let t: TestApp;
  let acmeDoc: Record<string, any>;
  let betaDoc: Record<string, any>;

  const call = (method: 'GET' | 'PUT' | 'POST', url: string, headers: Record<string, string>, payload?: unknown) =>
    t.call({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as never }) });

  beforeAll(async () => {
    t = await buildTestApp();
    acmeDoc = await createOk(t, simpleDoc('ACME-1', { buyer: { name: `ООО «${SHARED_WORD} Акме»`, inn: '7736207543' } }), ACME);
    // A revision, so that the revisions route has something to hide.
    const res = await call('PUT', `/api/v1/invoices/${acmeDoc.public_id}`, ACME, {
      invoice: simpleDoc('ACME-1', { buyer: { name: `ООО «${SHARED_WORD} Акме»`, inn: '7736207543' } }),
    });
    expect(res.statusCode).toBe(200);
    betaDoc = await createOk(
      t,
      simpleDoc('BETA-1', { seller: { inn: BETA_ORG_INN }, buyer: { name: `ИП ${SHARED_WORD} Бета` } }),
      BETA,
    );
  });
  afterAll(async () => t.close());

  function expectNotFound(res: { statusCode: number; json(): any }, publicId: string) {
    expect(res.statusCode).toBe(404);
    const body = res.json();
    expect(body).toMatchObject({ ok: false, error: 'document_not_found', document_public_id: publicId });
    // Nothing of the document leaks into the refusal.
    expect(JSON.stringify(body)).not.toContain(SHARED_WORD);
  }

  it('GET of the other team’s document is 404 document_not_found', async () => {
    expectNotFound(await call('GET', `/api/v1/invoices/${acmeDoc.public_id}`, BETA), acmeDoc.public_id);
    expectNotFound(await call('GET', `/api/v1/invoices/${betaDoc.public_id}`, ACME), betaDoc.public_id);
  });

  it('GET revisions of the other team’s document is 404 document_not_found', async () => {
    expectNotFound(await call('GET', `/api/v1/invoices/${acmeDoc.public_id}/revisions`, BETA), acmeDoc.public_id);
    const own = await call('GET', `/api/v1/invoices/${acmeDoc.public_id}/revisions`, ACME);
    expect(own.statusCode).toBe(200);
    expect(own.json().revisions).toHaveLength(1);
  });

  it('PUT of the other team’s document is 404 document_not_found and changes nothing', async () => {
    const before = await storedRow(t, acmeDoc.public_id);
    const res = await call('PUT', `/api/v1/invoices/${acmeDoc.public_id}`, BETA, {
      invoice: simpleDoc('HIJACKED', { seller: { inn: BETA_ORG_INN }, buyer: { name: 'Захватчик' } }),
    });
    expectNotFound(res, acmeDoc.public_id);
    const after = await storedRow(t, acmeDoc.public_id);
    expect(after).toEqual(before);
    expect(after?.team_id).toBe('acme');
  });

  it('the list and q show only the caller’s documents', async () => {
    const acme = (await call('GET', '/api/v1/invoices?limit=200', ACME)).json();
    const beta = (await call('GET', '/api/v1/invoices?limit=200', BETA)).json();
    expect(acme.items.map((i: any) => i.public_id)).toEqual([acmeDoc.public_id]);
    expect(acme.total).toBe(1);
    expect(beta.items.map((i: any) => i.public_id)).toEqual([betaDoc.public_id]);
    expect(beta.total).toBe(1);
    // A word both teams' buyers carry: each sees its own match, nothing else.
    for (const q of [SHARED_WORD, SHARED_WORD.slice(0, 2), 'Акме', 'ACME-1']) {
      const res = (await call('GET', `/api/v1/invoices?q=${encodeURIComponent(q)}`, BETA)).json();
      expect(res.items.map((i: any) => i.public_id)).not.toContain(acmeDoc.public_id);
      expect(JSON.stringify(res)).not.toContain('Акме');
    }
    const shared = (await call('GET', `/api/v1/invoices?q=${encodeURIComponent(SHARED_WORD)}`, BETA)).json();
    expect(shared).toMatchObject({ total: 1, items: [{ public_id: betaDoc.public_id }] });
  });

  it('the same Idempotency-Key in two teams makes two documents', async () => {
    const key = { 'idempotency-key': 'shared-key-1' };
    const a = await call('POST', '/api/v1/invoices', { ...ACME, ...key }, simpleDoc('IDEM-1'));
    const b = await call('POST', '/api/v1/invoices', { ...BETA, ...key }, simpleDoc('IDEM-1', { seller: { inn: BETA_ORG_INN } }));
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().public_id).not.toBe(a.json().public_id);
    expect((await storedRow(t, b.json().public_id))?.team_id).toBe('beta');
  });

  describe('a service key acts for the team named by x-tenant-id, and only for it', () => {
    it('sees only that team in the list', async () => {
      const asBeta = (await call('GET', '/api/v1/invoices?limit=200', SERVICE_AS_BETA)).json();
      expect(asBeta.items.every((i: any) => i.seller_inn === BETA_ORG_INN)).toBe(true);
      expect(asBeta.items.map((i: any) => i.public_id)).toContain(betaDoc.public_id);
      expect(asBeta.items.map((i: any) => i.public_id)).not.toContain(acmeDoc.public_id);
      const asAcme = (await call('GET', `/api/v1/invoices?q=${encodeURIComponent(SHARED_WORD)}`, SERVICE_AS_ACME)).json();
      expect(asAcme.items.map((i: any) => i.public_id)).toEqual([acmeDoc.public_id]);
    });

    it('reads that team’s documents and gets 404 for the others', async () => {
      expect((await call('GET', `/api/v1/invoices/${betaDoc.public_id}`, SERVICE_AS_BETA)).statusCode).toBe(200);
      expectNotFound(await call('GET', `/api/v1/invoices/${acmeDoc.public_id}`, SERVICE_AS_BETA), acmeDoc.public_id);
      expectNotFound(await call('GET', `/api/v1/invoices/${acmeDoc.public_id}/revisions`, SERVICE_AS_BETA), acmeDoc.public_id);
      const put = await call('PUT', `/api/v1/invoices/${acmeDoc.public_id}`, SERVICE_AS_BETA, {
        invoice: simpleDoc('HIJACKED', { seller: { inn: BETA_ORG_INN } }),
      });
      expectNotFound(put, acmeDoc.public_id);
      expect((await call('GET', `/api/v1/invoices/${acmeDoc.public_id}`, SERVICE_AS_ACME)).statusCode).toBe(200);
    });

    it('writes into that team only, with that team’s organizations', async () => {
      const created = await call('POST', '/api/v1/invoices', SERVICE_AS_BETA, simpleDoc('SVC-1', { seller: { inn: BETA_ORG_INN } }));
      expect(created.statusCode).toBe(200);
      expect((await storedRow(t, created.json().public_id))?.team_id).toBe('beta');
      // acme's organization is not beta's seller.
      const refused = await call('POST', '/api/v1/invoices', SERVICE_AS_BETA, simpleDoc('SVC-2'));
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ ok: false, error: 'seller_org_not_allowed' });
    });

    it('without x-tenant-id, or naming an unknown team, is 403 tenant_scope_not_resolved', async () => {
      for (const headers of [{ 'x-api-key': SERVICE_KEY }, { 'x-api-key': SERVICE_KEY, 'x-tenant-id': 'nobody' }] as Array<Record<string, string>>) {
        const res = await call('GET', '/api/v1/invoices', headers);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ ok: false, error: 'tenant_scope_not_resolved' });
      }
    });

    it('a team key naming another team in x-tenant-id is 403 tenant_scope_not_resolved', async () => {
      const res = await call('GET', `/api/v1/invoices/${acmeDoc.public_id}`, { ...BETA, 'x-tenant-id': 'acme' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ ok: false, error: 'tenant_scope_not_resolved' });
    });
  });
});
