/**
 * Hostile bodies: the worst cases found against the documents API, each close to the
 * 5 MB body limit. `hostileScenarios` drive them through the running service like any other
 * scenario (their p99 is the event-loop time one such request holds a node for, since the body is
 * processed synchronously); `bench/hostile-body.ts` times the synchronous passes alone.
 */
import type { Scenario } from './scenario.js';

const BENCH_KEY_HEADER = { 'x-api-key': 'ak_bench_0000000000000000000000000001' };
const LIMIT = 5 * 1024 * 1024 - 4096;

function doc(extra: string): string {
  const base = JSON.stringify({
    number: 'hostile',
    date: '2026-03-02',
    currency: 'RUB',
    seller: { inn: '7707083893' },
    buyer: { name: 'ООО «Покупатель»' },
    items: [{ name: 'Работа', qty: 1, price: 100, vat_pct: 22 }],
    extra: '__X__',
  });
  return base.replace('"__X__"', extra);
}

/** The worst cases, by name: each is a whole POST body just under 5 MB. */
export function hostileBodies(): Record<string, string> {
  // 30 objects of 2,000 *_url keys (the body parser refuses an object of more than 2,000).
  const urlKeys = Array.from({ length: 30 }, (_, j) => `{${Array.from({ length: 2_000 }, (_, i) => `"f${j}_${i}_url":null`).join(',')}}`).join(',');
  const keyLength = LIMIT - urlKeys.length - 400;
  const depth = Math.floor((LIMIT - 400) / 2);
  const wide = Math.floor((LIMIT - 400) / 12);
  return {
    // One ~3.4 MB key holding 60,000 *_url keys: quadratic in the old prohibited-field walk.
    'long-key-urls': doc(`{${JSON.stringify('k'.repeat(keyLength))}:[${urlKeys}]}`),
    // 2,000 properties of 2,000 entries each: as wide as the body parser lets through.
    'wide-allowed': doc(`{${Array.from({ length: 400 }, (_, j) => `"k${j}":[${Array.from({ length: 2_000 }, () => '0').join(',')}]`).join(',')}}`),
    // 2.6M-deep array (the Idempotency-Key hash used to recurse into it: 500).
    deep: `{"invoice":${doc('1')},"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    // ~430,000 properties in one object (refused by the body parser's shape scan).
    wide: doc(`{${Array.from({ length: wide }, (_, i) => `"k${i.toString(36)}":0`).join(',').slice(0, LIMIT - 400).replace(/,[^,]*$/, '')}}`),
    // One 5 MB string that almost looks like a URL.
    'long-string': doc(JSON.stringify(`http://${'a'.repeat(LIMIT - 400)} b`)),
  };
}

/** Each worst case as a bench scenario (answers 400: the bench counts them as non-2xx). */
export const hostileScenarios: Scenario[] = Object.entries(hostileBodies()).map(([name, body]) => ({
  name: `hostile-${name}`,
  target: 'service',
  method: 'POST',
  path: '/api/v1/invoices',
  headers: { ...BENCH_KEY_HEADER, 'idempotency-key': `hostile-${name}` },
  body,
}));
