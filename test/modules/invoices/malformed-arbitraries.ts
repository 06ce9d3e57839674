/**
 * fast-check generators of write bodies the API must refuse with a 4xx. Each "breaker" makes
 * a valid document invalid in one way, and no breaker ever sets a field to a valid value, so
 * any sequence of them leaves the document invalid.
 */
import fc from 'fast-check';
import { simpleDoc } from './write-helpers.js';

type Doc = Record<string, any>;
type Breaker = (doc: Doc) => void;

const CURRENCIES = ['RUB', 'USD', 'EUR', 'CNY', 'KZT', 'BYN'];
const PUBLIC_ID = /^[A-Za-z0-9_-]{8,64}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Small JSON values of every kind. */
const json = fc.jsonValue({ maxDepth: 2 });
/** Present, not null and not a string: a wrong type for a string field. */
const notString = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.array(json, { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 2 }));
/** Anything that is not a usable non-blank string: missing, null, blank or another type. */
const notUsableString = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constantFrom('', '   '), notString);
/** Present and not a boolean (null means "not given", so it is excluded). */
const notBoolean = fc.oneof(fc.integer(), fc.string({ minLength: 1, maxLength: 5 }), fc.array(fc.boolean(), { maxLength: 2 }));
/** A number out of the range of a quantity (> 0) or a price (≥ 0), or not a number at all. */
const badQty = fc.oneof(fc.double({ max: 0, noNaN: true }), fc.constant(-1), fc.constant(1e10), fc.constant(0.1234567), notString.filter((v) => typeof v !== 'number'));
const badPrice = fc.oneof(fc.double({ max: -0.0001, noNaN: true }), fc.constant(1e13), fc.constant(1.00001), fc.string({ minLength: 1, maxLength: 4 }));
// No infinities here: JSON turns them into null, which for vat_pct means "без НДС", a valid value.
const badVat = fc.oneof(fc.double({ min: 100.01, max: 1e6, noNaN: true }), fc.double({ max: -0.01, noNaN: true, noDefaultInfinity: true }), fc.string({ minLength: 1, maxLength: 3 }), fc.boolean());
const okItem = () => ({ name: 'Работа', qty: 1, price: 100 });

function set(path: readonly string[], value: unknown): Breaker {
  return (doc) => {
    let node: Doc = doc;
    for (const key of path.slice(0, -1)) {
      if (typeof node[key] !== 'object' || node[key] === null || Array.isArray(node[key])) node[key] = {};
      node = node[key];
    }
    const last = path[path.length - 1] as string;
    if (value === undefined) delete node[last];
    else node[last] = value;
  };
}

const breakers: fc.Arbitrary<Breaker> = fc.oneof(
  fc.constantFrom('number', 'date', 'currency', 'seller', 'buyer', 'items').map((k) => set([k], undefined)),
  notUsableString.map((v) => set(['number'], v)),
  fc.oneof(
    fc.constantFrom('2026-02-30', '2026-13-01', '2026-00-10', '02.03.2026', '1899-12-31', '3000-01-01', '2026-3-2', ''),
    fc.string({ maxLength: 12 }).filter((s) => !DATE.test(s)),
    notString,
  ).map((v) => set(['date'], v)),
  fc.oneof(fc.string({ maxLength: 5 }).filter((s) => !CURRENCIES.includes(s)), notString).map((v) => set(['currency'], v)),
  notUsableString.map((v) => set(['seller', 'inn'], v)),
  notUsableString.map((v) => set(['buyer', 'name'], v)),
  fc.oneof(notString.filter((v) => typeof v !== 'object' || Array.isArray(v)), fc.string({ minLength: 1, maxLength: 5 }).filter((s) => s.trim() !== '')).map((v) => set(['seller'], v)),
  fc.oneof(fc.integer(), fc.boolean(), fc.string({ minLength: 1, maxLength: 5 }).filter((s) => s.trim() !== '')).map((v) => set(['buyer'], v)),
  fc.oneof(fc.constant([]), fc.integer(), fc.string({ minLength: 1, maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 3 }), json, { maxKeys: 2 })).map((v) => set(['items'], v)),
  badQty.map((qty) => set(['items'], [okItem(), { ...okItem(), qty }])),
  badPrice.map((price) => set(['items'], [{ ...okItem(), price }])),
  badVat.map((vat_pct) => set(['items'], [{ ...okItem(), vat_pct }, okItem()])),
  notUsableString.map((name) => set(['items'], [{ ...okItem(), name }])),
  fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 3 }), fc.array(fc.integer(), { maxLength: 2 })).map((v) => set(['items'], [okItem(), v])),
  // Prohibited: a link-named property anywhere, a whole URL, image data.
  fc
    .tuple(fc.constantFrom([], ['seller'], ['buyer'], ['manager'], ['extra', 'deep']), fc.stringMatching(/^[a-z]{1,8}$/), fc.constantFrom('_url', '_URI', '_link'), json)
    .map(([where, stem, suffix, value]) => set([...where, `${stem}${suffix}`], value)),
  fc
    .tuple(fc.constantFrom(['comment'], ['buyer', 'address'], ['note']), fc.stringMatching(/^[a-z0-9.\/-]{1,20}$/), fc.constantFrom('https://', 'http://', 'data:,'))
    .map(([path, rest, scheme]) => set(path, `${scheme}${scheme.startsWith('data') ? '' : 'h.example/'}${rest}`)),
  fc.constant(set(['stamp'], 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk')),
  // Optional fields of a wrong type or value.
  fc.oneof(fc.string({ maxLength: 70 }).filter((s) => s.trim() !== '' && !PUBLIC_ID.test(s)), notString).map((v) => set(['public_id'], v)),
  notBoolean.map((v) => set(['prices_include_vat'], v)),
  notBoolean.map((v) => set(['public_share_enabled'], v)),
  fc.string({ minLength: 1, maxLength: 8 }).filter((s) => s.trim() !== '' && !['incoming', 'outgoing'].includes(s)).map((v) => set(['invoice_direction'], v)),
  fc.string({ minLength: 1, maxLength: 8 }).filter((s) => s.trim() !== '' && !['draft', 'issued', 'paid', 'cancelled'].includes(s)).map((v) => set(['seller_status'], v)),
  fc.oneof(fc.integer(), fc.string({ minLength: 1, maxLength: 4 }), fc.constant([1, 2])).map((v) => set(['api_recipients'], v)),
  fc.constant(set(['deep'], JSON.parse(`${'['.repeat(40)}1${']'.repeat(40)}`))),
  fc.constant(set(['number'], 'x'.repeat(65))),
  fc.constant(set(['buyer', 'name'], 'Имя\u0000')),
);

/** A valid document broken in one to three ways. */
export const malformedDocument: fc.Arbitrary<Doc> = fc
  .tuple(fc.integer({ min: 1, max: 9999 }), fc.array(breakers, { minLength: 1, maxLength: 3 }))
  .map(([n, broken]) => {
    const doc = simpleDoc(`m${n}`);
    for (const breaker of broken) breaker(doc);
    return doc;
  });

/** Envelope fields that are refused on their own (wrong types, too long, partial update). */
const badEnvelope: fc.Arbitrary<Doc> = fc.oneof(
  notString.map((actor_login) => ({ actor_login })),
  fc.constant({ actor_login: 'x'.repeat(201) }),
  notBoolean.map((notify_recipients) => ({ notify_recipients })),
  notBoolean.map((send_notifications) => ({ send_notifications })),
  json.map((partial_update) => ({ partial_update })),
  json.map((patch) => ({ patch })),
);

/** Envelope fields that are fine on their own. */
const okEnvelope: fc.Arbitrary<Doc> = fc.record(
  { actor_login: fc.oneof(fc.constant(null), fc.string({ maxLength: 20 })), notify_recipients: fc.constant(false), send_notifications: fc.constant(null) },
  { requiredKeys: [] },
);

/** POST bodies: a malformed document at the root or in `invoice`, or a valid one with a bad envelope. */
export const malformedCreateBody: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(malformedDocument, okEnvelope).map(([doc, env]) => ({ ...doc, ...env })),
  fc.tuple(malformedDocument, okEnvelope).map(([doc, env]) => ({ invoice: doc, ...env })),
  fc.tuple(badEnvelope, fc.boolean()).map(([env, wrapped]) => (wrapped ? { invoice: simpleDoc('e'), ...env } : { ...simpleDoc('e'), ...env })),
  fc.oneof(fc.constant(null), notString.filter((v) => typeof v !== 'object' || Array.isArray(v)), fc.string({ maxLength: 5 })).map((invoice) => ({ invoice })),
);

/** PUT bodies: as for POST, plus a valid document at the root (PUT takes only `invoice`). */
export const malformedUpdateBody: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(malformedDocument, okEnvelope).map(([doc, env]) => ({ invoice: doc, ...env })),
  fc.tuple(badEnvelope).map(([env]) => ({ invoice: simpleDoc('e'), ...env })),
  okEnvelope.map((env) => ({ ...simpleDoc('root'), ...env })),
  fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 5 }), fc.array(json, { maxLength: 2 })).map((invoice) => ({ invoice })),
);

/** Any JSON text at all, and some that is not JSON. */
export const anyJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('{', '{"invoice":', '[1,', '{"__proto__":{"x":1}}', '{"invoice":{"constructor":{"prototype":{}}}}', '\u0000', 'nul'),
);
