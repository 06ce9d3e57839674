/**
 * Seller rules (spec 1.6, contract 4): the seller is matched by INN among the team's active
 * organizations, must be within the tariff's organization limit, and gets the requisites the
 * payload omits from the organization and its default bank account.
 */
import type { Executor } from '../../db/database.js';
import type { BankAccountRow, OrganizationRow } from '../../db/types.js';
import { ApiError } from '../../shared/errors.js';
import { listBankAccounts, listOrganizations, organizationsWithinLimit } from '../teams/index.js';
import type { Party } from './invoice.model.js';

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
  const filled: Party & { inn: string } = { ...seller };
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

/** Teams whose reference rows a node keeps for `SellerReferences` (the oldest dropped beyond it). */
const SELLER_REFERENCES_MAX = 1000;

/**
 * The team's organizations and bank accounts for resolving sellers, kept per team under the
 * version they were read at (issue 13, PostgreSQL: two round trips per create and PUT less).
 * The version is the team's `catalog_version` and `created_at` from the team row authentication
 * read in this very request: triggers move `catalog_version` on in every transaction that
 * writes a team's organizations or bank accounts (migration 2026-11-26T1410_catalog_version),
 * so a change shows on the very next request, on every node. The rows are read after the
 * version, so they are never older than the version they are kept under (at worst newer, and
 * then the next request's version differs and they are read again). The rows are not changed by
 * anyone once read (`resolveSellerFrom` only reads them).
 */
export class SellerReferences {
  private readonly teams = new Map<string, { version: string; organizations: OrganizationRow[]; bankAccounts: BankAccountRow[] }>();
  private hits = 0;
  private misses = 0;

  /** Served from this node's cache and read afresh (tests, diagnostics). */
  stats(): { hits: number; misses: number; size: number } {
    return { hits: this.hits, misses: this.misses, size: this.teams.size };
  }

  async resolve(
    db: Executor,
    team: { id: string; catalog_version: number; created_at: string },
    seller: Party & { inn: string },
    maxOrganizations: number,
  ): Promise<ResolvedSeller> {
    const version = `${team.catalog_version}\u0000${team.created_at}`;
    let entry = this.teams.get(team.id);
    if (entry !== undefined && entry.version === version) {
      this.hits += 1;
    } else {
      this.misses += 1;
      const [organizations, bankAccounts] = await Promise.all([listOrganizations(db, team.id), listBankAccounts(db, team.id)]);
      entry = { version, organizations, bankAccounts };
      this.teams.delete(team.id);
      this.teams.set(team.id, entry);
      if (this.teams.size > SELLER_REFERENCES_MAX) this.teams.delete(this.teams.keys().next().value as string);
    }
    return resolveSellerFrom(seller, entry.organizations, entry.bankAccounts, maxOrganizations);
  }
}

export async function resolveSeller(
  db: Executor,
  teamId: string,
  seller: Party & { inn: string },
  maxOrganizations: number,
): Promise<ResolvedSeller> {
  const [organizations, bankAccounts] = await Promise.all([listOrganizations(db, teamId), listBankAccounts(db, teamId)]);
  return resolveSellerFrom(seller, organizations, bankAccounts, maxOrganizations);
}
