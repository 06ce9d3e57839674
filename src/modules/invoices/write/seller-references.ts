/**
 * The team's organizations and bank accounts a write resolves its seller from
 * (rules/seller-resolution.ts), kept per node under the team's catalog version.
 */
import type { LRUCache } from 'lru-cache';
import type { Executor } from '../../../db/database.js';
import { byteBoundedCache, jsonBytes, type ByteBudget } from '../../../shared/byte-cache.js';
import type { BankAccountRow, OrganizationRow } from '../../../db/types.js';
import { listBankAccounts, listOrganizations } from '../../teams/index.js';
import type { Party } from '../model/invoice.model.js';
import { resolveSellerFrom, type ResolvedSeller } from '../rules/seller-resolution.js';

interface TeamReferences {
  version: string;
  organizations: OrganizationRow[];
  bankAccounts: BankAccountRow[];
}

/** Teams whose organizations and bank accounts a node keeps (a few hundred bytes each). */
const DEFAULT_BUDGET: ByteBudget = { maxBytes: 4 * 1024 * 1024, maxEntryBytes: 256 * 1024 };

/**
 * The team's organizations and bank accounts for `resolveSellerFrom`, kept per team under the
 * version they were read at: the team's `catalog_version` (moved on by triggers in every
 * transaction that writes the team's organizations, bank accounts, managers or signers,
 * migration 2026-11-26T1410_catalog_version) and its `created_at`, both read from the database
 * with the team row in this very request (authentication reads it anyway), as the catalog's
 * cache does. Equal version: no query; any change shows on the very next write, on every node.
 * Saves two reads per create and PUT.
 */
export class SellerReferences {
  /** Per team, bounded by bytes (a share of INVOICING_REFERENCE_CACHE_MB). */
  private readonly teams: LRUCache<string, TeamReferences> | null;
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly db: Executor,
    budget: ByteBudget = DEFAULT_BUDGET,
  ) {
    this.teams = byteBoundedCache(budget, (refs) => jsonBytes(refs));
  }

  /** Served from this node's cache and read afresh (tests, diagnostics). */
  stats(): { hits: number; misses: number; size: number } {
    return { hits: this.hits, misses: this.misses, size: this.teams?.size ?? 0 };
  }

  async resolve(
    team: { id: string; catalog_version: number; created_at: string },
    seller: Party & { inn: string },
    maxOrganizations: number,
  ): Promise<ResolvedSeller> {
    const version = `${team.catalog_version}\u0000${team.created_at}`;
    let refs = this.teams?.get(team.id);
    if (refs !== undefined && refs.version === version) {
      this.hits += 1;
    } else {
      this.misses += 1;
      // Read after the version: the rows are at least as new as it (at worst newer, and then the
      // next request's version differs and they are read again).
      const [organizations, bankAccounts] = await Promise.all([listOrganizations(this.db, team.id), listBankAccounts(this.db, team.id)]);
      refs = { version, organizations: organizations.map((o) => Object.freeze(o)), bankAccounts: bankAccounts.map((b) => Object.freeze(b)) };
      this.teams?.set(team.id, refs);
    }
    return resolveSellerFrom(seller, refs.organizations, refs.bankAccounts, maxOrganizations);
  }
}
