/**
 * Issue 10, items 2, 4 and 10: hostile bodies through the real app. Every pass over a body is
 * linear in its size, refusals list at most 100 offenders, every part of a document is bounded,
 * and service-owned fields never reach the stored document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME, countRows, createOk, get, post, put, simpleDoc } from './write-helpers.js';

describe('hostile bodies (issue 10)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  describe('item 2: the prohibited-field walk is linear and its report capped', () => {
    it('a ~1 MB body: one 700,000-character key holding 20,000 *_url keys is refused quickly, listing 100 and counting the rest', async () => {
      const inner: Record<string, null> = {};
      for (let i = 0; i < 20_000; i++) inner[`f${i}_url`] = null;
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
      expect(json.errors[0].field).toBe(`[${JSON.stringify(`${'k'.repeat(100)}…`)}].f0_url`);
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
});
