/**
 * `{ ...base, ...extra }`, built with `Object.assign`: on Node.js 20 (V8 11.3) an object literal
 * that spreads one object and then adds properties it lacks (`{ ...doc, events }`) takes a slow
 * runtime path, about 1 µs per added property (and more the larger `base` is), against about
 * 0.1 µs for this: measured in docs/performance.md, "Session 12". Same own enumerable
 * properties, same key order. `base` must not have an own `__proto__` key (request bodies
 * cannot: Fastify's JSON parser refuses them), which `Object.assign` would take as the prototype.
 */
export function extended<T extends object, U extends object>(base: T, extra: U): Extended<T, U> {
  return Object.assign({}, base, extra) as Extended<T, U>;
}

/** The type of `{ ...T, ...U }` (kept: `T`'s index signature, if any). */
export type Extended<T, U> = { [K in keyof T as K extends keyof U ? never : K]: T[K] } & U;
