/**
 * The request hash (Idempotency-Key records, EDO content hashes): SHA-256 of the body as JSON
 * with sorted keys. Stored digests are compared with new ones, so the text must never change:
 * checked against texts written out by hand, against a digest pinned from this implementation,
 * and at nesting no call stack would survive.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { requestHash } from '../../src/shared/request-hash.js';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

describe('requestHash', () => {
  it('hashes the body as JSON with sorted keys, undefined members left out and undefined items as null', () => {
    const body = { z: 'я', a: [1, undefined, { c: null, b: 'x"y\n' }], u: undefined, n: 1.5, t: true, e: {} };
    const text = '{"a":[1,null,{"b":"x\\"y\\n","c":null}],"e":{},"n":1.5,"t":true,"z":"я"}';
    expect(requestHash(body)).toBe(sha256(text));
    expect(requestHash({ n: 1.5, t: true, e: {}, z: 'я', a: [1, null, { b: 'x"y\n', c: null }] })).toBe(sha256(text));
    expect(requestHash(undefined)).toBe(sha256('null'));
  });

  it('gives the digest stored records hold for the same body', () => {
    const body = { invoice: { number: 'СЧ-1', items: [{ name: 'Работа', qty: 1, price: 1234.5, vat_pct: null }], seller: { inn: '7707083893' } }, notify_recipients: true };
    expect(requestHash(body)).toBe('79d971db3d9daf66c9186d283de6ddffb714d5f643dfa55f3779a9bf4a1a616f');
  });

  it('hashes the same text at any depth without overflowing the call stack', () => {
    for (const depth of [1, 100, 100_000]) {
      let array: unknown = 1;
      let object: unknown = { v: 1 };
      for (let i = 0; i < depth; i++) {
        array = [array, { b: 2, a: undefined }];
        object = { z: object, a: [i] };
      }
      // Written from the inside out.
      let arrayText = '1';
      let objectText = '{"v":1}';
      for (let i = 0; i < depth; i++) {
        arrayText = `[${arrayText},{"b":2}]`;
        objectText = `{"a":[${i}],"z":${objectText}}`;
      }
      expect(requestHash(array)).toBe(sha256(arrayText));
      expect(requestHash(object)).toBe(sha256(objectText));
    }
  });
});
