import type { ConsumeResult, LimitRule, LimitState } from './rate-limit.types.js';

/** A tariff's rate profile, as in the bootstrap file's `key_rate` / `team_rate`. */
export interface RateProfile {
  per_sec: number;
  per_min: number;
  per_day: number;
}

export interface ApiRulesInput {
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

/** The per-IP rule that applies to every route. */
export function ipRules(ip: string, perSec: number): LimitRule[] {
  return [{ policy: 'ip-sec', code: 'ip_per_sec', key: `ip:${ip}`, limit: perSec, windowSec: 1 }];
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
