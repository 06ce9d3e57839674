/**
 * Hostile bodies of up to 5 MB (deep, wide, long keys, many `*_url` keys,
 * NUL, lone surrogates) sent to POST and PUT never get a 5xx. The event-loop cost of the worst
 * of them is measured by the bench scenario `hostile-body`, not here.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ACME, createOk, simpleDoc } from './write-helpers.js';

const MAX_BODY = 5 * 1024 * 1024;

/** One hostile value, as JSON text (deep nesting is built as text: no recursion anywhere). */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  // deep arrays or objects
  fc.record({ depth: fc.integer({ min: 33, max: 1_000_000 }), object: fc.boolean() }).map(({ depth, object }) =>
    object ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`,
  ),
  // wide objects
  fc.integer({ min: 1, max: 200_000 }).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`),
  // wide arrays
  fc.integer({ min: 1, max: 500_000 }).map((n) => `[${Array.from({ length: n }, () => '0').join(',')}]`),
  // one long key over many *_url keys
  fc.record({ keyLength: fc.integer({ min: 1, max: 2_000_000 }), urls: fc.integer({ min: 0, max: 60_000 }) }).map(
    ({ keyLength, urls }) =>
      `{${JSON.stringify('k'.repeat(keyLength))}:{${Array.from({ length: urls }, (_, i) => `"f${i}_url":null`).join(',')}}}`,
  ),
  // long strings, with NUL, lone surrogates or URL-ish prefixes
  fc
    .record({
      length: fc.integer({ min: 1, max: 4_000_000 }),
      filler: fc.constantFrom('x', '\u0000', '\ud800', '\udc00', 'A', 'я', ' '),
      prefix: fc.constantFrom('', 'http://', 'data:image/png;base64,', 'iVBORw0KGgo'),
    })
    .map(({ length, filler, prefix }) => JSON.stringify(prefix + filler.repeat(length))),
  // keys with NUL and lone surrogates
  fc.array(fc.constantFrom('\u0000', '\ud800', '\udfff', 'a_url', '__proto__', 'constructor', ''), { minLength: 1, maxLength: 50 }).map(
    (keys) => `{${keys.map((k, i) => `${JSON.stringify(k + i)}:${JSON.stringify(k)}`).join(',')}}`,
  ),
);

/** Where the hostile value goes in the document. */
const placement = fc.constantFrom('root', 'manager', 'item', 'buyer', 'signers', 'envelope');

function bodyText(where: string, hostile: string, number: string, wrap: boolean): string {
  const doc = simpleDoc(number);
  const marker = '"__HOSTILE__"';
  if (where === 'manager') doc.manager = '__HOSTILE__';
  else if (where === 'item') doc.items[0].extra = '__HOSTILE__';
  else if (where === 'buyer') doc.buyer.extra = '__HOSTILE__';
  else if (where === 'signers') doc.signers = ['__HOSTILE__'];
  else if (where === 'root') doc.extra = '__HOSTILE__';
  const text = where === 'envelope' ? JSON.stringify({ invoice: doc, extra: '__HOSTILE__' }) : JSON.stringify(wrap ? { invoice: doc } : doc);
  return text.replace(marker, hostile);
}

describe('hostile bodies to POST and PUT (property)', () => {
  let t: TestApp;
  let publicId: string;
  beforeAll(async () => {
    t = await buildTestApp();
    publicId = (await createOk(t, simpleDoc('hostile-base'))).public_id;
  });
  afterAll(async () => t.close());

  it('never answers 5xx', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(hostileText, placement, fc.constantFrom('POST', 'POST-idem', 'PUT'), async (hostile, where, method) => {
        const text = bodyText(where, hostile, `h-${n++}`, method === 'PUT');
        fc.pre(Buffer.byteLength(text) <= MAX_BODY);
        const res = await t.call({
          method: method === 'PUT' ? 'PUT' : 'POST',
          url: method === 'PUT' ? `/api/v1/invoices/${publicId}` : '/api/v1/invoices',
          headers: { ...ACME, 'content-type': 'application/json', ...(method === 'POST-idem' ? { 'idempotency-key': `idem-${n}` } : {}) },
          payload: text,
        });
        expect(res.statusCode, res.body.slice(0, 500)).toBeLessThan(500);
        const body = res.json();
        expect(typeof body.ok).toBe('boolean');
        if (!body.ok) expect((body.errors ?? []).length).toBeLessThanOrEqual(100);
      }),
      { numRuns: 30, seed: 20261126 },
    );
  }, 600_000);
});
