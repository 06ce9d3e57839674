/**
 * Seller rules (spec 1.6, contract 4): the seller is matched by INN among the team's active
 * organizations, must be within the tariff's organization limit, and gets the requisites the
 * payload omits from the organization and its default bank account. Pure given the team's
 * reference data (write/seller-references.ts keeps it per node; the demo's is fixed).
 */
import type { BankAccountRow, OrganizationRow } from '../../../db/types.js';
import { ApiError } from '../../../shared/errors.js';
import { extended } from '../../../shared/objects.js';
import { organizationsWithinLimit } from '../../teams/index.js';
import type { Party } from '../model/invoice.model.js';

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
  // fills against 0.4 µs; a `__proto__` key stays a plain key).
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
