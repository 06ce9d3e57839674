import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { countRows, createOk, get, put, simpleDoc, storedRow } from './write-helpers.js';

/**
 * Seller status (contract 4 "Statuses"): draft → issued → paid, draft|issued → cancelled,
 * staying put is always allowed; a paid or cancelled document accepts no other change.
 */
describe('seller_status transitions and locked documents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  const doc = (number: string, seller_status?: string, extra: Record<string, unknown> = {}) =>
    simpleDoc(number, { ...(seller_status ? { seller_status } : {}), ...extra });

  async function createWith(status: string | undefined, number = `s-${status}`) {
    return createOk(t, { invoice: doc(number, status) });
  }

  async function move(id: string, number: string, status: string | undefined, extra: Record<string, unknown> = {}) {
    return put(t, id, { invoice: doc(number, status, extra) });
  }

  it('creates documents as issued (Выставлен) unless the payload says otherwise', async () => {
    const issued = await createWith(undefined, 'd1');
    expect(issued.status).toMatchObject({ seller_status: 'issued', seller_status_label: 'Выставлен' });
    expect(issued.invoice.seller_status).toBe('issued');
    const draft = await createWith('draft', 'd2');
    expect(draft.status).toMatchObject({ seller_status: 'draft', seller_status_label: 'Черновик' });
    expect((await get(t, draft.public_id)).json().status.seller_status).toBe('draft');
  });

  it('refuses an unknown status with 400', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: { 'x-api-key': 'ak_acme_erp_0001' }, payload: doc('d3', 'sent') });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual(expect.objectContaining({ field: 'seller_status', code: 'invalid_value' }));
  });

  it('moves draft → issued → paid, with the labels', async () => {
    const created = await createWith('draft', 'm1');
    const issued = await move(created.public_id, 'm1', 'issued');
    expect(issued.statusCode).toBe(200);
    expect(issued.json().status).toMatchObject({ seller_status: 'issued', seller_status_label: 'Выставлен' });
    const paid = await move(created.public_id, 'm1', 'paid');
    expect(paid.statusCode).toBe(200);
    expect(paid.json().status).toMatchObject({ seller_status: 'paid', seller_status_label: 'Оплачен' });
    expect(paid.json().metadata.status.seller_status).toBe('paid');
    expect(paid.json().api.revision).toBe(3);
  });

  it('keeps the current status when the payload does not name one', async () => {
    const created = await createWith('draft', 'k1');
    const res = await move(created.public_id, 'k1-changed', undefined);
    expect(res.statusCode).toBe(200);
    expect(res.json().status.seller_status).toBe('draft');
  });

  it.each([
    ['issued', 'draft'],
    ['draft', 'paid'],
  ])('refuses %s → %s with 409 invalid_status_transition, changing nothing', async (from, to) => {
    const created = await createWith(from, `t-${from}-${to}`);
    const before = await storedRow(t, created.public_id);
    const res = await move(created.public_id, `t-${from}-${to}`, to);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid_status_transition', document_public_id: created.public_id });
    expect(res.json().details).toContain(`from ${from} to ${to}`);
    expect(await storedRow(t, created.public_id)).toEqual(before);
  });

  it.each([['draft'], ['issued']])('cancels a %s document', async (from) => {
    const created = await createWith(from, `c-${from}`);
    const res = await move(created.public_id, `c-${from}`, 'cancelled');
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toMatchObject({ seller_status: 'cancelled', seller_status_label: 'Отменён' });
  });

  describe.each([['paid'], ['cancelled']])('a %s document is locked', (locked) => {
    let id: string;
    let stored: Awaited<ReturnType<typeof storedRow>>;
    let lockedResponse: Record<string, any>;
    beforeAll(async () => {
      const created = await createWith('issued', `l-${locked}`);
      id = created.public_id;
      const res = await move(id, `l-${locked}`, locked);
      expect(res.statusCode).toBe(200);
      lockedResponse = res.json();
      stored = await storedRow(t, id);
    });

    it.each([
      ['another item, same status', () => doc(`l-${locked}`, locked, { items: [{ name: 'Другое', qty: 1, price: 1 }] })],
      ['another number, no status', () => doc('other-number', undefined)],
      ['another buyer', () => doc(`l-${locked}`, locked, { buyer: { name: 'Другой покупатель' } })],
      ['back to issued', () => doc(`l-${locked}`, 'issued')],
      ['back to draft', () => doc(`l-${locked}`, 'draft')],
      ['to the other final status', () => doc(`l-${locked}`, locked === 'paid' ? 'cancelled' : 'paid')],
    ])('refuses a change (%s) with 409 document_locked', async (_name, make) => {
      const res = await put(t, id, { invoice: make() });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ ok: false, error: 'document_locked', document_public_id: id });
      expect(res.json().details).toContain(locked);
      expect(await storedRow(t, id)).toEqual(stored);
    });

    it('answers an identical PUT with 200 and the document as it is: no new revision, nothing written', async () => {
      const revisions = await countRows(t, 'invoice_revisions', id);
      const res = await put(t, id, { invoice: doc(`l-${locked}`, locked), actor_login: 'someone-else' });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.api.revision).toBe(2);
      expect(res.headers.etag).toBe(`"${id}.2"`);
      expect(body.invoice).toEqual(lockedResponse.invoice);
      expect(body.metadata.last_modified_by_login).toBe(lockedResponse.metadata.last_modified_by_login);
      expect(body.status.seller_status).toBe(locked);
      expect(await countRows(t, 'invoice_revisions', id)).toBe(revisions);
      expect(await storedRow(t, id)).toEqual(stored);
    });

    it('treats the same document in another key order, or without its status or with its public_id, as identical', async () => {
      const { seller_status: _s, ...withoutStatus } = doc(`l-${locked}`, locked);
      const reordered = Object.fromEntries(Object.entries({ ...doc(`l-${locked}`, locked), public_id: id }).reverse());
      for (const invoice of [withoutStatus, reordered, lockedResponse.invoice]) {
        const res = await put(t, id, { invoice });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().api.revision).toBe(2);
      }
      expect(await storedRow(t, id)).toEqual(stored);
    });

    it('still checks If-Match on an identical PUT', async () => {
      const res = await put(t, id, { invoice: doc(`l-${locked}`, locked) }, { 'if-match': `"${id}.1"` });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('revision_conflict');
    });
  });
});
