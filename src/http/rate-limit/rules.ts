import ipaddr from 'ipaddr.js';
import type { ConsumeResult, LimitRule, LimitState } from './rate-limit.types.js';

/** A tariff's rate profile, as in the bootstrap file's `key_rate` / `team_rate`. */
export interface RateProfile {
  per_sec: number;
  per_min: number;
  per_day: number;
}

export interface ApiRulesInput {
  /** The key's counters: a service key counts per team it acts for (`key:<id>@<team>`). */
  keyId: number | string;
  teamId: string;
  keyRate: RateProfile;
  teamRate: RateProfile;
}

const WINDOWS = [
  { suffix: 'sec', code: 'per_sec', windowSec: 1, field: 'per_sec' },
  { suffix: 'min', code: 'per_min', windowSec: 60, field: 'per_min' },
  { suffix: 'day', code: 'per_day', windowSec: 86_400, field: 'per_day' },
] as const;

/**
 * Whom a per-IP counter counts: an IPv4 address (also when written IPv4-mapped, `::ffff:a.b.c.d`),
 * or an IPv6 address's /64. One subscriber usually holds a whole /64 and can pick any address in
 * it, so a counter per exact IPv6 address would give one client 2^64 counters.
 */
export function clientOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
}

/** The per-IP rule that applies to every route (an IPv6 client by its /64). */
export function ipRules(ip: string, perSec: number): LimitRule[] {
  return [{ policy: 'ip-sec', code: 'ip_per_sec', key: `ip:${clientOf(ip)}`, limit: perSec, windowSec: 1 }];
}

/** The published demo token's own per-IP rule (INVOICING_DEMO_RATE_PER_SEC), counted on this node only. */
export function demoRules(ip: string, perSec: number): LimitRule[] {
  return [{ policy: 'demo-sec', code: 'demo_per_sec', key: `demo:${clientOf(ip)}`, limit: perSec, windowSec: 1 }];
}

/** The six per-key and per-team rules that apply to `/api/v1/*`, key rules first. */
export function apiRules(input: ApiRulesInput): LimitRule[] {
  const scoped = (scope: 'key' | 'team', id: string, rate: RateProfile): LimitRule[] =>
    WINDOWS.map((w) => ({
      policy: `${scope}-${w.suffix}`,
      code: `${scope}_${w.code}`,
      key: `${scope}:${id}`,
      limit: rate[w.field],
      windowSec: w.windowSec,
    }));
  return [...scoped('key', String(input.keyId), input.keyRate), ...scoped('team', input.teamId, input.teamRate)];
}

/** The fixed window containing `nowMs`; shared by both stores so they cannot disagree. */
export function windowOf(rule: LimitRule, nowMs: number): { index: number; endMs: number } {
  const lengthMs = rule.windowSec * 1000;
  const index = Math.floor(nowMs / lengthMs);
  return { index, endMs: (index + 1) * lengthMs };
}

/**
 * Turns per-rule counts into a result. `counts[i]` is the count after this request when
 * allowed, or the untouched current count when refused.
 */
export function buildConsumeResult(rules: LimitRule[], counts: number[], allowed: boolean, nowMs: number): ConsumeResult {
  const states: LimitState[] = rules.map((rule, i) => {
    const count = counts[i] ?? 0;
    const { endMs } = windowOf(rule, nowMs);
    return {
      rule,
      remaining: Math.max(0, rule.limit - count),
      resetSec: Math.max(1, Math.ceil((endMs - nowMs) / 1000)),
    };
  });
  if (allowed) return { allowed, states };
  let refused: LimitState | undefined;
  states.forEach((state, i) => {
    const exhausted = (counts[i] ?? 0) >= state.rule.limit;
    if (exhausted && (refused === undefined || state.resetSec > refused.resetSec)) refused = state;
  });
  return refused === undefined ? { allowed, states } : { allowed, states, refused };
}
