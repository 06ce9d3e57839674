/**
 * Wires the limiter into Fastify: per IP on every route, per key and per team on `/api/v1/*`
 * after authentication. Every response says where the caller stands in the IETF RateLimit /
 * RateLimit-Policy headers; a refusal is a 429 in the contract's shape with Retry-After.
 *
 * One call to the store per request (on Redis, one round trip instead of two). On
 * the routes of the API scope (`rateLimitIpWithApi`), the per-IP rule is not counted in
 * onRequest but together with the key and team rules after authentication, in the same atomic
 * call (so a refused request counts against none of the seven, and the 429 names the full
 * limit that lasts longest, docs/api.md); a request whose authentication fails is counted
 * against its IP alone, and an IP refusal wins over the authentication error (429).
 * An IP found full in the current window is remembered by the node until that window ends
 * and refused in onRequest with no call at all, before its key is looked at: a counter never
 * goes down within its window, so the store would refuse it too, on every node.
 */
import crypto from 'node:crypto';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/errors.js';
import { formatRateLimit, formatRateLimitPolicy } from './headers.js';
import { MemoryStore } from './memory-store.js';
import type { ConsumeResult, LimitRule, LimitState, RateLimitStore } from './rate-limit.types.js';
import { apiRules, buildConsumeResult, demoRules, ipRules, windowOf, type RateProfile } from './rules.js';

declare module 'fastify' {
  interface FastifyRequest {
    rateLimitRules: LimitRule[];
    rateLimitStates: LimitState[];
    /** The per-IP rule left for the API hook to count with the key and team rules. */
    rateLimitPendingIp: LimitRule | null;
  }
  interface FastifyContextConfig {
    /** Set on the API scope's routes: their per-IP rule is counted after authentication. */
    rateLimitIpWithApi?: boolean;
  }
}

export interface RateLimitHooksOptions {
  store: RateLimitStore;
  ipRatePerSec: number;
  /**
   * INVOICING_DEMO_RATE_PER_SEC: requests a second per client (IPv6: per /64) with the published
   * demo token, counted on this node only (a demo request never reaches Redis). Default 2.
   */
  demoRatePerSec?: number;
  onRefused?: (code: string) => void;
  log: FastifyBaseLogger;
}

/** IPs remembered as exhausted at most (cleared when full; a forgotten one is asked of the store). */
const EXHAUSTED_MAX = 10_000;
/** Callers whose rules are kept at most (cleared when full). */
const RULES_MAX = 10_000;

export function createRateLimitHooks(options: RateLimitHooksOptions) {
  const { store, ipRatePerSec, onRefused, log } = options;
  const demoRatePerSec = options.demoRatePerSec ?? 2;
  /** The demo token's counters: in this process, never the shared store. */
  const demoStore = new MemoryStore();
  store.reportTo?.(log);
  /** Per-IP counters this node saw full: rule key → end of that window (ms). */
  const exhausted = new Map<string, number>();
  /** `RateLimit-Policy` texts by the rules' policies, limits and windows. */
  const policyTexts = new Map<string, string>();
  /**
   * The rules of a caller, built once (seven rule objects and their key strings per request
   * were a measurable share of the limiter's cost and of the garbage):
   * the per-IP rule by IP and limit, the key and team rules by key, team and the tariff's
   * rates. Rules are never modified (frozen); bounded, cleared when full.
   */
  const ipRuleCache = new Map<string, LimitRule>();
  const apiRuleCache = new Map<string, readonly LimitRule[]>();

  function cachedIpRule(ip: string): LimitRule {
    let rule = ipRuleCache.get(ip);
    if (rule === undefined) {
      rule = Object.freeze((ipRules(ip, ipRatePerSec) as [LimitRule])[0]);
      if (ipRuleCache.size >= RULES_MAX) ipRuleCache.clear();
      ipRuleCache.set(ip, rule);
    }
    return rule;
  }

  /** A team key counts on its own counters; a service key on one set per team it acts for. */
  function cachedApiRules(keyId: number, serviceKey: boolean, teamId: string, keyRate: RateProfile, teamRate: RateProfile): readonly LimitRule[] {
    const id = `${keyId}\u0000${serviceKey ? 1 : 0}\u0000${teamId}\u0000${keyRate.per_sec}/${keyRate.per_min}/${keyRate.per_day}\u0000${teamRate.per_sec}/${teamRate.per_min}/${teamRate.per_day}`;
    let rules = apiRuleCache.get(id);
    if (rules === undefined) {
      const key = serviceKey ? `${keyId}@${teamId}` : String(keyId);
      rules = Object.freeze(apiRules({ keyId: key, teamId, keyRate, teamRate }).map((rule) => Object.freeze(rule)));
      if (apiRuleCache.size >= RULES_MAX) apiRuleCache.clear();
      apiRuleCache.set(id, rules);
    }
    return rules;
  }

  function knownExhausted(rule: LimitRule, nowMs: number): boolean {
    const endMs = exhausted.get(rule.key);
    if (endMs === undefined) return false;
    if (endMs > nowMs && endMs === windowOf(rule, nowMs).endMs) return true;
    exhausted.delete(rule.key);
    return false;
  }

  function rememberExhausted(rule: LimitRule, nowMs: number): void {
    if (exhausted.size >= EXHAUSTED_MAX) exhausted.clear();
    exhausted.set(rule.key, windowOf(rule, nowMs).endMs);
  }

  async function consume(request: FastifyRequest, reply: FastifyReply, rules: LimitRule[], ipRule: LimitRule | null, on: RateLimitStore = store): Promise<void> {
    const nowMs = Date.now();
    let result: ConsumeResult;
    try {
      result = await on.consume(rules, nowMs);
    } catch (err) {
      // A store with no fallback of its own (the primary's counters, src/cluster/) does not answer:
      // serve rather than refuse everyone (fail open), and say so. Redis has its fallback
      // (fallback-store.ts), so its failures never come here.
      log.warn({ err }, 'rate-limit store unavailable; request allowed without counting');
      return;
    }
    refuseIfNeeded(request, reply, rules, result, ipRule, nowMs);
  }

  function refuseIfNeeded(request: FastifyRequest, reply: FastifyReply, rules: LimitRule[], result: ConsumeResult, ipRule: LimitRule | null, nowMs: number): void {
    for (const rule of rules) request.rateLimitRules.push(rule);
    for (const state of result.states) request.rateLimitStates.push(state);
    if (result.allowed || !result.refused) return;
    // The store's choice when several are full: the one that lasts longest (docs/api.md).
    const refused = result.refused;
    if (ipRule !== null) {
      // A refused request's counts are the current ones: remaining 0 means the IP's window is full.
      const ipState = result.states[rules.indexOf(ipRule)];
      if (ipState !== undefined && ipState.remaining === 0) rememberExhausted(ipRule, nowMs);
    }
    const retryAfter = Math.max(1, refused.resetSec);
    onRefused?.(refused.rule.code);
    writeHeaders(request, reply);
    const error = new ApiError('rate_limited', { retry_after_sec: retryAfter }, { 'retry-after': String(retryAfter) });
    error.body.error = 'rate_limited';
    error.body.code = refused.rule.code;
    error.body.details = `rate limit ${refused.rule.policy} (${refused.rule.limit} per ${refused.rule.windowSec}s) exceeded`;
    throw error;
  }

  function policyText(rules: readonly LimitRule[]): string {
    let id = '';
    for (const rule of rules) id += `${rule.policy}\u0000${rule.limit}\u0000${rule.windowSec}\u0001`;
    let text = policyTexts.get(id);
    if (text === undefined) {
      text = formatRateLimitPolicy(rules);
      // Bounded: one entry per distinct tariff in use; cleared if callers vary it wildly.
      if (policyTexts.size >= 1_000) policyTexts.clear();
      policyTexts.set(id, text);
    }
    return text;
  }

  function writeHeaders(request: FastifyRequest, reply: FastifyReply): void {
    if (request.rateLimitRules.length === 0) return;
    reply.header('RateLimit-Policy', policyText(request.rateLimitRules));
    reply.header('RateLimit', formatRateLimit(request.rateLimitStates));
  }

  /** The IP rule, refused at once when this node knows its window is full. */
  function ipRuleOrRefuse(request: FastifyRequest, reply: FastifyReply): LimitRule {
    const rule = cachedIpRule(request.ip);
    const nowMs = Date.now();
    if (knownExhausted(rule, nowMs)) refuseIfNeeded(request, reply, [rule], buildConsumeResult([rule], [rule.limit], false, nowMs), rule, nowMs);
    return rule;
  }

  return {
    /** onRequest, on every route: counts the IP, or leaves it to limitByKeyAndTeam on the API's routes. */
    async limitByIp(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      request.rateLimitRules = [];
      request.rateLimitStates = [];
      request.rateLimitPendingIp = null;
      const rule = ipRuleOrRefuse(request, reply);
      if (request.routeOptions.config.rateLimitIpWithApi === true) {
        request.rateLimitPendingIp = rule;
        return;
      }
      await consume(request, reply, [rule], rule);
    },
    /** After a failed authentication on /api/v1/*: the IP alone (its refusal wins). */
    async limitPendingIp(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const rule = request.rateLimitPendingIp;
      if (!rule) return;
      request.rateLimitPendingIp = null;
      await consume(request, reply, [rule], rule);
    },
    /** After authentication on /api/v1/*: the pending IP rule, the key's and the team's, in one call. */
    async limitByKeyAndTeam(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const ipRule = request.rateLimitPendingIp;
      request.rateLimitPendingIp = null;
      const auth = request.auth;
      const rules: LimitRule[] = ipRule ? [ipRule] : [];
      if (auth?.mode === 'demo') {
        // The published token: its own per-client rate, on this node (docs/security.md).
        rules.push(...demoRules(request.ip, demoRatePerSec));
        await consume(request, reply, rules, ipRule, demoStore);
        return;
      }
      if (auth) {
        for (const rule of cachedApiRules(auth.keyId, auth.mode === 'live' && auth.keyKind === 'service', auth.teamId, auth.tariff.key_rate, auth.tariff.team_rate)) {
          rules.push(rule);
        }
      }
      if (rules.length > 0) await consume(request, reply, rules, ipRule);
    },
    /**
     * On the share and portal routes: per link token (INVOICING_LINK_RATE_PER_MIN per minute),
     * on top of the per-IP limit. The counter is keyed by a hash of the token, never the token.
     */
    async limitByLink(request: FastifyRequest, reply: FastifyReply, token: string, perMin: number): Promise<void> {
      const id = crypto.createHash('sha256').update(token).digest('base64url').slice(0, 32);
      await consume(request, reply, [{ policy: 'link-min', code: 'link_per_min', key: `link:${id}`, limit: perMin, windowSec: 60 }], null);
    },
    /** onSend, on every route. */
    async addHeaders(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (request.rateLimitRules) writeHeaders(request, reply);
    },
  };
}
