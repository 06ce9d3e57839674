/**
 * Resolves presented credentials to the caller: a team key, a service key scoped by
 * `x-tenant-id`, or the published demo token (dry-run). Keys are found by the SHA-256 of
 * the secret and the hashes compared in constant time. The key, its team, the team's tariff
 * and (for the routes that ask) the team's list version are read on every request in one
 * statement (the TeamStore's `findCaller`, store/): a key deactivated anywhere is refused on the
 * very next request everywhere, and a tariff change shows at once. Where the database has a
 * data version (SQLite), the statement's answer is kept while it stays the same (CallerCache
 * below); how the store reads it is its own (store/postgres.ts batches the lookups of one turn of
 * the event loop, each still read after its request came).
 */
import type { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import { byteBoundedCache, jsonBytes, type ByteBudget } from '../../shared/byte-cache.js';
import type { TeamRow } from '../../db/types.js';
import type { TeamListState } from '../../db/document-counts.js';
import { ApiError } from '../../shared/errors.js';
import crypto from 'node:crypto';
import { secretDigest } from '../../shared/tokens.js';
import { dataVersionOf } from '../../db/statement-cache.js';
import { DEFAULT_TARIFF, tariffFromRow, type Tariff } from './tariffs.js';
import type { CallerRow, TeamStore } from './store/index.js';

export type KeySource = 'x-api-key' | 'authorization' | 'query';

export interface PresentedCredentials {
  /** The first way present, by the contract's precedence. */
  source: KeySource | null;
  secret: string | null;
  tenantId: string | null;
  /** Only reads may carry the key in the query string. */
  isRead: boolean;
}

/** How the caller proved itself: an API key (by where it was sent) or a signed portal link. */
export type CallerSource = KeySource | 'signed_link';

export type AuthContext =
  | { mode: 'demo'; keyId: 0; keyName: 'demo'; teamId: typeof DEMO_TEAM_ID; tariff: Tariff; source: CallerSource }
  | {
      mode: 'live';
      keyId: number;
      keyName: string;
      keyKind: 'team' | 'service';
      teamId: string;
      team: TeamRow;
      tariff: Tariff;
      source: CallerSource;
      /**
       * The team's document count and list version (src/db/document-counts.ts), read with the
       * key when the route asked for it (`authenticate(…, { listState: true })`): before
       * anything the request then reads, so what is built from later reads is never older.
       */
      listState?: TeamListState;
    };

/**
 * The demo world's team id. It is outside the team id alphabet (`[A-Za-z0-9_.-]`), so no real
 * team can ever have it (bootstrap refuses it), and links signed for it only ever show the
 * built-in sample: demo mode never resolves to stored data (docs/security.md).
 */
export const DEMO_TEAM_ID = '~demo' as const;

/**
 * The team id the demo world used before it was moved out of the team id alphabet. Portal
 * tokens of the old format naming it are refused: they may have been signed in demo mode.
 */
export const LEGACY_DEMO_TEAM_ID = 'demo';

/** The demo token's context (dry-run): also what the demo share and portal links act as. */
export const DEMO_AUTH: Extract<AuthContext, { mode: 'demo' }> = Object.freeze({
  mode: 'demo',
  keyId: 0,
  keyName: 'demo',
  teamId: DEMO_TEAM_ID,
  tariff: DEFAULT_TARIFF,
  source: 'signed_link',
});

interface CachedTeam {
  team: TeamRow | null;
  tariff: Tariff;
}

/** Callers a process keeps on SQLite (see CallerCache): one entry per key, tenant and variant in use. */
const DEFAULT_BUDGET: ByteBudget = { maxBytes: 4 * 1024 * 1024, maxEntryBytes: 64 * 1024 };

/**
 * What `findCaller` answered, kept while the database has not changed at all (where it has a
 * data version: SQLite).
 *
 * SQLite's `PRAGMA data_version`, asked on the reading connection (statement-cache.ts
 * `dataVersionOf`), moves whenever any connection of any process has committed since; an equal
 * value means every row the statement read is as it was. So a request whose data version equals
 * the one its entry was read under gets the very row the statement would give, for the price of
 * the pragma (a read transaction's start, no query): the read is validated by a version read from
 * the database on every request, never kept by time. The version is taken BEFORE the statement,
 * so an entry is never older than the version it is kept under (a commit in between moves the
 * version, and the next request reads afresh). Only found keys are kept, within a byte budget
 * (least recently used out first): unknown keys cost their statement every time, so random
 * keys cannot churn out the real ones. Without a data version (PostgreSQL) every request reads.
 */
class CallerCache {
  private readonly entries: LRUCache<string, { version: number; caller: CallerRow }> | null;

  constructor(
    private readonly store: TeamStore,
    private readonly dataVersion: () => number,
    budget: ByteBudget,
  ) {
    this.entries = byteBoundedCache(budget, (entry) => jsonBytes(entry.caller));
  }

  async find(db: Db, hash: string, tenantId: string | null, withListState: boolean, lookedUp: () => void): Promise<CallerRow | undefined> {
    const version = this.dataVersion();
    const key = `${hash}\u0000${tenantId ?? ''}\u0000${withListState ? 1 : 0}`;
    const hit = this.entries?.get(key);
    if (hit !== undefined && hit.version === version) return hit.caller;
    lookedUp();
    const caller = await this.store.findCaller(db, hash, tenantId, withListState);
    if (caller === undefined) {
      this.entries?.delete(key);
      return undefined;
    }
    // Shared by every request it serves until the next commit: nobody may change it.
    Object.freeze(caller.key);
    if (caller.team) Object.freeze(caller.team);
    if (caller.tariff) Object.freeze(caller.tariff);
    if (caller.listState) Object.freeze(caller.listState);
    this.entries?.set(key, { version, caller: Object.freeze(caller) });
    return caller;
  }
}

export class AuthService {
  private lookups = 0;
  /** SHA-256 of the demo token, computed once: each request hashes its secret once, not three times. */
  private readonly demoDigest: Buffer;
  /** A database with a data version (SQLite's reading connection): callers kept while it holds; otherwise null. */
  private readonly callers: CallerCache | null;

  constructor(
    private readonly db: Db,
    private readonly store: TeamStore,
    demoToken: string,
    callerCache: ByteBudget = DEFAULT_BUDGET,
  ) {
    this.demoDigest = secretDigest(demoToken);
    const dataVersion = dataVersionOf(db);
    this.callers = dataVersion === null ? null : new CallerCache(store, dataVersion, callerCache);
  }

  /** `want.listState`: read the team's list state with the key (the list and GET detail use it). */
  async authenticate(creds: PresentedCredentials, want: { listState?: boolean } = {}): Promise<AuthContext> {
    if (creds.source === null || creds.secret === null) {
      throw ApiError.unauthorized(
        'api_key_missing',
        'send the API key in the x-api-key header, as Authorization: Bearer <key>, or (GET only) as the api_key query parameter',
      );
    }
    if (creds.source === 'query' && !creds.isRead) {
      throw ApiError.unauthorized(
        'api_key_missing',
        'the api_key query parameter is accepted for GET requests only; send the key in the x-api-key or Authorization header',
      );
    }
    // One hash per request: compared in constant time with the demo token's (safeEqual does the
    // same, hashing both), and in hex the key's lookup hash.
    const digest = secretDigest(creds.secret);
    if (crypto.timingSafeEqual(digest, this.demoDigest)) {
      return { mode: 'demo', keyId: 0, keyName: 'demo', teamId: DEMO_TEAM_ID, tariff: DEFAULT_TARIFF, source: creds.source };
    }

    const hash = digest.toString('hex');
    const withListState = want.listState === true;
    let caller: CallerRow | undefined;
    if (this.callers !== null) {
      caller = await this.callers.find(this.db, hash, creds.tenantId, withListState, () => (this.lookups += 1));
    } else {
      this.lookups += 1;
      caller = await this.store.findCaller(this.db, hash, creds.tenantId, withListState);
    }
    // The index found the row by hash; compare again in constant time all the same (the stored
    // hex against this request's digest: no more hashing).
    const key = caller && sameDigest(caller.key.secret_hash, digest) ? caller.key : null;
    if (!caller || !key) throw ApiError.unauthorized('api_key_invalid', 'the API key is not known');
    if (key.active !== 1) throw ApiError.unauthorized('api_key_inactive', 'the API key has been deactivated');

    let teamId: string;
    if (key.kind === 'service') {
      if (!creds.tenantId) {
        throw new ApiError('tenant_scope_not_resolved', { details: 'a service key needs the x-tenant-id header naming a team' });
      }
      teamId = creds.tenantId;
    } else {
      teamId = key.team_id as string;
      if (creds.tenantId && creds.tenantId !== teamId) {
        throw new ApiError('tenant_scope_not_resolved', { details: 'x-tenant-id names a team this key does not belong to' });
      }
    }
    if (!caller.team) {
      throw new ApiError('tenant_scope_not_resolved', { details: 'x-tenant-id does not name an existing team' });
    }
    const team = { team: caller.team, tariff: tariffFromRow(caller.team.tariff_id ? caller.tariff : undefined) };
    if (key.kind === 'team' && caller.rank >= team.tariff.max_api_keys) {
      throw ApiError.unauthorized(
        'api_key_over_tariff_limit',
        `the team's tariff allows ${team.tariff.max_api_keys} active API key(s); this key is beyond that limit`,
      );
    }
    return {
      mode: 'live',
      keyId: key.id,
      keyName: key.name,
      keyKind: key.kind,
      teamId,
      team: team.team,
      tariff: team.tariff,
      source: creds.source,
      ...(caller.listState ? { listState: caller.listState } : {}),
    };
  }

  /**
   * The team's context for work the service does on its behalf through a signed link (the
   * portal's pages and edits), acting as `actor` with no API key (keyId 0). Null when the team
   * does not exist. Reads the team afresh, as key authentication does.
   */
  async signedLinkContext(teamId: string, actor: string): Promise<Extract<AuthContext, { mode: 'live' }> | null> {
    if (teamId === DEMO_TEAM_ID) return null;
    const { team, tariff } = await this.lookupTeam(teamId);
    if (!team) return null;
    return { mode: 'live', keyId: 0, keyName: actor, keyKind: 'team', teamId, team, tariff, source: 'signed_link' };
  }

  /**
   * Key lookups that went to the database (tests, diagnostics): one per authenticated request,
   * except on SQLite for a request whose caller was read under the current data version.
   */
  keyLookups(): number {
    return this.lookups;
  }

  /** The team and its tariff, read afresh: a tariff change shows on the very next request, on every node. */
  private async lookupTeam(teamId: string): Promise<CachedTeam> {
    const found = await this.store.findTeamAndTariff(this.db, teamId);
    const team = found.team ?? null;
    return { team, tariff: tariffFromRow(team?.tariff_id ? found.tariff : undefined) };
  }
}

/** Whether the stored hex SHA-256 `storedHex` is `digest`, compared in constant time. */
function sameDigest(storedHex: string, digest: Buffer): boolean {
  const stored = Buffer.from(storedHex, 'hex');
  return stored.length === digest.length && storedHex.length === digest.length * 2 && crypto.timingSafeEqual(stored, digest);
}
