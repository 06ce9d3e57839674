import type { LimitRule, LimitState } from './rate-limit.types.js';

/**
 * IETF `RateLimit-Policy` / `RateLimit` headers in the structured-field form of
 * draft-ietf-httpapi-ratelimit-headers (draft 9 onwards): a list of policy names
 * (sf-strings) with parameters — `q` quota and `w` window in seconds for the policy,
 * `r` remaining and `t` seconds to reset for the current state. No `pk` partition key:
 * it would echo the client's IP or key id back.
 */

/** e.g. `"key-sec";q=5;w=1, "key-min";q=100;w=60` */
export function formatRateLimitPolicy(rules: readonly LimitRule[]): string {
  return rules
    .map((rule) => `${sfString(rule.policy)};q=${sfInteger(rule.limit, 0)};w=${sfInteger(rule.windowSec, 1)}`)
    .join(', ');
}

/** e.g. `"key-sec";r=3;t=1, "key-min";r=97;t=42` */
export function formatRateLimit(states: readonly LimitState[]): string {
  return states
    .map((state) => `${sfString(state.rule.policy)};r=${sfInteger(state.remaining, 0)};t=${sfInteger(state.resetSec, 1)}`)
    .join(', ');
}

/** Policy names as sf-strings: the names are a fixed set from the code (rules.ts), quoted once each. */
const quoted = new Map<string, string>();

/** sf-string: printable ASCII with `\` and `"` escaped; anything else would make the header invalid. */
function sfString(value: string): string {
  let text = quoted.get(value);
  if (text === undefined) {
    text = toSfString(value);
    if (quoted.size < 100) quoted.set(value, text);
  }
  return text;
}

function toSfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`rate-limit policy name is not printable ASCII: ${JSON.stringify(value)}`);
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** sf-integer, clamped to `min` so a header never shows a negative remaining or a zero reset. */
function sfInteger(value: number, min: number): number {
  return Math.max(min, Math.floor(value));
}
