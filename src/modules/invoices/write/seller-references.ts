/**
 * Seller rules (spec 1.6, contract 4): the seller is matched by INN among the team's active
 * organizations, must be within the tariff's organization limit, and gets the requisites the
 * payload omits from the organization and its default bank account.
 */
import type { LRUCache } from 'lru-cache';
import type { Executor } from '../../../db/database.js';
import { byteBoundedCache, jsonBytes, type ByteBudget } from '../../../shared/byte-cache.js';
import type { BankAccountRow, OrganizationRow } from '../../../db/types.js';
import { ApiError } from '../../../shared/errors.js';
import { listBankAccounts, listOrganizations, organizationsWithinLimit } from '../../teams/index.js';
import type { Party } from '../model/invoice.model.js';
import { extended } from '../../../shared/objects.js';

export interface ResolvedSeller {
  organization: OrganizationRow;
  seller: Party & { inn: string };
}

/** Picks the organization and fills the seller; pure given the team's reference data. */
export function resolveSellerFrom(
  seller: Party & { inn: string },
  organizations: OrganizationRow[],
  bankAccounts: BankAccountRow[],
  maxOrganizations: number,
): ResolvedSeller {
  const organization = organizations.find((o) => o.active === 1 && o.inn === seller.inn);
  if (!organization) {
    throw new ApiError('seller_org_not_allowed', {
      details: `seller.inn ${seller.inn} does not match an active organization of the team`,
    });
  }
  if (!organizationsWithinLimit(organizations, maxOrganizations).has(organization.id)) {
    throw new ApiError('seller_org_over_tariff_limit', {
      details: `organization ${organization.id} is beyond the tariff's limit of ${maxOrganizations} organization(s)`,
    });
  }
  const accounts = bankAccounts.filter((b) => b.organization_id === organization.id);
  const account = accounts.find((b) => b.is_default === 1) ?? accounts[0];
  // A copy the fills below add properties to, made by `extended` (Object.assign; a spread copy
  // takes a slow path on Node.js 20 for each property added afterwards: 12–15 µs for the eight
  // fills against 0.4 µs, docs/performance.md "Session 13"; a `__proto__` key stays a plain key).
  const filled: Party & { inn: string } = extended(seller, {});
  const fill = (key: keyof Party, value: string | null | undefined) => {
    const current = filled[key];
    if ((current === undefined || current === null || current === '') && value) filled[key] = value;
  };
  fill('name', organization.name);
  fill('kpp', organization.kpp);
  fill('address', organization.address);
  fill('email', organization.email);
  // Bank requisites come as a set: the default account fills them only when every bank identifier
  // the payload gives (account, BIK, corr. account) is that account's, so a payment never mixes
  // the default account with another bank. The bank's name is not an identifier (spellings vary).
  const sameBank = (key: 'account' | 'bik' | 'corr_account') => !filled[key] || filled[key] === account?.[key];
  if (account && sameBank('account') && sameBank('bik') && sameBank('corr_account')) {
    fill('bank_name', account.bank_name);
    fill('bik', account.bik);
    fill('account', account.account);
    fill('corr_account', account.corr_account);
  }
  return { organization, seller: filled };
}

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
