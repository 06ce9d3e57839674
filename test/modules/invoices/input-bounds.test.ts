/**
 * Hostile bodies through the real app. Every pass over a body is
 * linear in its size, refusals list at most 100 offenders, every part of a document is bounded,
 * and service-owned fields never reach the stored document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME, countRows, createOk, get, post, put, simpleDoc } from './write-helpers.js';

describe('hostile bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  describe('item 2: the prohibited-field walk is linear and its report capped', () => {
    it('a ~1 MB body: one 700,000-character key holding 20,000 *_url keys is refused quickly, listing 100 and counting the rest', async () => {
      // 10 objects of 2,000 `*_url` keys each (an object of more than 2,000 is refused before parsing).
      const inner = Array.from({ length: 10 }, (_, j) => Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`f${j}_${i}_url`, null])));
      const body = simpleDoc('hostile-1', { ['k'.repeat(700_000)]: inner });
      const started = process.hrtime.bigint();
      const res = await post(t, body);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
      const json = res.json();
      expect(json.error).toBe('prohibited_field');
      expect(json.errors).toHaveLength(100);
      expect(json.errors_not_listed).toBe(19_900);
      expect(json.details).toContain('and 19900 more');
      // A key is quoted cut short in a path: the report stays small.
      expect(json.errors[0].field).toBe(`[${JSON.stringify(`${'k'.repeat(100)}…`)}][0].f0_0_url`);
      expect(res.body.length).toBeLessThan(100_000);
      // The old walk took seconds; generous for a loaded machine.
      expect(ms).toBeLessThan(3000);
    });

    it('with Idempotency-Key, a 2,000,000-deep array is a 400 too_deep, not a 500', async () => {
      const doc = JSON.stringify(simpleDoc('deep-1'));
      const text = `{"invoice":${doc},"extra":${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}}`;
      const res = await t.call({
        method: 'POST',
        url: '/api/v1/invoices',
        headers: { ...ACME, 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
        payload: text,
      });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed', errors: [{ code: 'too_deep' }] });
    });

    it('a body far beyond the document bounds is refused before JSON.parse: 400 validation_failed naming the bound', async () => {
      const wide = `{"invoice":${JSON.stringify(simpleDoc('wide'))},"extra":{${Array.from({ length: 300_000 }, (_, i) => `"k${i}":0`).join(',')}}}`;
      const res = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: { ...ACME, 'content-type': 'application/json' }, payload: wide });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_failed', errors: [{ code: 'too_many_properties' }] });
      const long = `{"invoice":${JSON.stringify(simpleDoc('long', { extra: Array.from({ length: 600_000 }, () => 0) }))}}`;
      const res2 = await t.call({ method: 'POST', url: '/api/v1/invoices', headers: { ...ACME, 'content-type': 'application/json' }, payload: long });
      expect(res2.json()).toMatchObject({ error: 'validation_failed', errors: [{ code: 'too_many_items' }] });
    });

    it('validation errors are capped at 100 with a count of the rest', async () => {
      const items = Array.from({ length: 300 }, () => ({ name: 'x', qty: -1, price: -1 }));
      const res = await post(t, simpleDoc('many-errors', { items }));
      expect(res.statusCode).toBe(400);
      const json = res.json();
      expect(json.error).toBe('validation_failed');
      expect(json.errors).toHaveLength(100);
      expect(json.errors_not_listed).toBe(500);
    });
  });

  describe('item 4: every part of a document is bounded', () => {
    it.each([
      ['manager.name', { manager: { name: 'м'.repeat(501) } }, 'too_long'],
      ['buyer_contact.phone', { buyer_contact: { phone: '1'.repeat(101) } }, 'too_long'],
      ['signers[0].position', { signers: [{ name: 'A', position: 'p'.repeat(201) }] }, 'too_long'],
      ['basis', { basis: 'b'.repeat(2001) }, 'too_long'],
      ['document_title', { document_title: 't'.repeat(501) }, 'too_long'],
      ['items[0].note', { items: [{ name: 'Работа', qty: 1, price: 1, note: 'n'.repeat(2001) }] }, 'too_long'],
      ['extra', { extra: Array.from({ length: 1001 }, () => 1) }, 'too_many_items'],
      ['manager', { manager: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, 1])) }, 'too_many_properties'],
      ['buyer_contact.note', { buyer_contact: { note: 'a\u0000b' } }, 'invalid_character'],
    ])('%s beyond its bound is 400 validation_failed, nothing stored', async (field, extra, code) => {
      const before = await countRows(t, 'invoices');
      const res = await post(t, simpleDoc('bounded', extra as Record<string, unknown>));
      expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
      expect(res.json().error).toBe('validation_failed');
      expect(res.json().errors).toContainEqual(expect.objectContaining({ field, code }));
      expect(await countRows(t, 'invoices')).toBe(before);
    });

    it('a property name longer than 200 characters is too_long', async () => {
      const res = await post(t, simpleDoc('long-key', { manager: { ['k'.repeat(201)]: 'x' } }));
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0]).toMatchObject({ code: 'too_long' });
    });

    it('generous real values pass: a 500-character manager name, a 1000-character item name, a 2000-character basis', async () => {
      const res = await post(
        t,
        simpleDoc('generous', {
          manager: { name: 'м'.repeat(500), phone: '+7 495 000-00-00' },
          basis: 'b'.repeat(2000),
          items: [{ name: 'n'.repeat(1000), qty: 1, price: 1, note: 'x'.repeat(2000) }],
        }),
      );
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    });
  });

  describe('item 10: service-owned fields inside invoice are dropped with a warning', () => {
    it('buyer_status, revision, team_id and totals sent in the document are not stored nor echoed', async () => {
      const res = await post(t, {
        invoice: simpleDoc('owned-1', {
          buyer_status: 'paid',
          revision: 99,
          team_id: 'beta',
          total: 1,
          totals: { total: 1 },
          status: { buyer_status: 'paid' },
          items: [{ name: 'Работа', qty: 1, price: 100, vat_pct: 22, gross: 1 }],
        }),
      });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      const body = res.json();
      for (const key of ['buyer_status', 'revision', 'team_id', 'total', 'totals', 'status']) expect(body.invoice).not.toHaveProperty(key);
      expect(body.invoice.items[0]).not.toHaveProperty('gross');
      const warned = body.validation.warnings.filter((w: { code: string }) => w.code === 'service_owned_field').map((w: { field: string }) => w.field);
      expect(warned.sort()).toEqual(['buyer_status', 'items[0].gross', 'revision', 'status', 'team_id', 'total', 'totals'].sort());
      expect(body.status.buyer_status).not.toBe('paid');

      const read = await get(t, body.public_id);
      expect(read.json().invoice).not.toHaveProperty('buyer_status');
      const updated = await put(t, body.public_id, { invoice: simpleDoc('owned-1', { buyer_status: 'paid', revision: 1 }) });
      expect(updated.statusCode).toBe(200);
      expect(updated.json().invoice).not.toHaveProperty('buyer_status');
      expect(updated.json().api.revision).toBe(2);
    });
  });
});
