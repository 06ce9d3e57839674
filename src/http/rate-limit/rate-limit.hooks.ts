/**
 * Wires the limiter into Fastify: per IP on every route (before anything else runs), per
 * key and per team on `/api/v1/*` after authentication. Every response says where the
 * caller stands in the IETF RateLimit / RateLimit-Policy headers; a refusal is a 429 in the
 * contract's shape with Retry-After.
 */
import crypto from 'node:crypto';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/errors.js';
import { formatRateLimit, formatRateLimitPolicy } from './headers.js';
import type { LimitRule, LimitState, RateLimitStore } from './rate-limit.types.js';
import { apiRules, ipRules } from './rules.js';

declare module 'fastify' {
  interface FastifyRequest {
    rateLimitRules: LimitRule[];
    rateLimitStates: LimitState[];
  }
}

export interface RateLimitHooksOptions {
  store: RateLimitStore;
  ipRatePerSec: number;
  onRefused?: (code: string) => void;
  log: FastifyBaseLogger;
}

export function createRateLimitHooks(options: RateLimitHooksOptions) {
  const { store, ipRatePerSec, onRefused, log } = options;

  async function consume(request: FastifyRequest, reply: FastifyReply, rules: LimitRule[]): Promise<void> {
    let result;
    try {
      result = await store.consume(rules, Date.now());
    } catch (err) {
      // The shared store is down: serve rather than refuse everyone (fail open), and say so.
      log.warn({ err }, 'rate-limit store unavailable; request allowed without counting');
      return;
    }
    request.rateLimitRules.push(...rules);
    request.rateLimitStates.push(...result.states);
    if (!result.allowed && result.refused) {
      const retryAfter = Math.max(1, result.refused.resetSec);
      onRefused?.(result.refused.rule.code);
      writeHeaders(request, reply);
      const error = new ApiError('rate_limited', { retry_after_sec: retryAfter }, { 'retry-after': String(retryAfter) });
      error.body.error = 'rate_limited';
      error.body.code = result.refused.rule.code;
      error.body.details = `rate limit ${result.refused.rule.policy} (${result.refused.rule.limit} per ${result.refused.rule.windowSec}s) exceeded`;
      throw error;
    }
  }

  function writeHeaders(request: FastifyRequest, reply: FastifyReply): void {
    if (request.rateLimitRules.length === 0) return;
    reply.header('RateLimit-Policy', formatRateLimitPolicy(request.rateLimitRules));
    reply.header('RateLimit', formatRateLimit(request.rateLimitStates));
  }

  return {
    /** onRequest, on every route. */
    async limitByIp(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      request.rateLimitRules = [];
      request.rateLimitStates = [];
      await consume(request, reply, ipRules(request.ip, ipRatePerSec));
    },
    /** After authentication on /api/v1/*. */
    async limitByKeyAndTeam(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const auth = request.auth;
      if (!auth) return;
      await consume(
        request,
        reply,
        apiRules({
          keyId: String(auth.keyId),
          teamId: auth.teamId,
          keyRate: auth.tariff.key_rate,
          teamRate: auth.tariff.team_rate,
        }),
      );
    },
    /**
     * On the share and portal routes: per link token (INVOICING_LINK_RATE_PER_MIN per minute),
     * on top of the per-IP limit. The counter is keyed by a hash of the token, never the token.
     */
    async limitByLink(request: FastifyRequest, reply: FastifyReply, token: string, perMin: number): Promise<void> {
      const id = crypto.createHash('sha256').update(token).digest('base64url').slice(0, 32);
      await consume(request, reply, [{ policy: 'link-min', code: 'link_per_min', key: `link:${id}`, limit: perMin, windowSec: 60 }]);
    },
    /** onSend, on every route. */
    async addHeaders(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (request.rateLimitRules) writeHeaders(request, reply);
    },
  };
}
