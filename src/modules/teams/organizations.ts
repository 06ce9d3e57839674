/** A team's reference data (organizations, bank accounts, managers, signers) and the tariff's organization limit. */
import type { Executor } from '../../db/database.js';
import type { BankAccountRow, ManagerRow, OrganizationRow, SignerRow } from '../../db/types.js';
import { listBankAccounts, listManagers, listOrganizations, listSigners } from './teams.repository.js';

export interface CatalogData {
  organizations: OrganizationRow[];
  bankAccounts: BankAccountRow[];
  managers: ManagerRow[];
  signers: SignerRow[];
}

/** Ids of the active organizations within the tariff's `max_organizations`, in bootstrap order. */
export function organizationsWithinLimit(organizations: OrganizationRow[], maxOrganizations: number): Set<string> {
  return new Set(
    organizations
      .filter((o) => o.active === 1)
      .slice(0, maxOrganizations)
      .map((o) => o.id),
  );
}

/** The team's reference data, each list in bootstrap order. */
export async function loadCatalogData(db: Executor, teamId: string): Promise<CatalogData> {
  const [organizations, bankAccounts, managers, signers] = await Promise.all([
    listOrganizations(db, teamId),
    listBankAccounts(db, teamId),
    listManagers(db, teamId),
    listSigners(db, teamId),
  ]);
  return { organizations, bankAccounts, managers, signers };
}
