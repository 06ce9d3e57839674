/**
 * The tables of the teams module: settings, tariffs, teams, API keys and the team's reference data
 * (organizations, bank accounts, managers, signers). Conventions: src/db/types.ts.
 */
import type { Generated, Selectable } from 'kysely';

export interface SettingsTable {
  key: string;
  value: string;
}

export interface TariffsTable {
  id: string;
  max_organizations: number;
  max_api_keys: number;
  key_per_sec: number;
  key_per_min: number;
  key_per_day: number;
  team_per_sec: number;
  team_per_min: number;
  team_per_day: number;
  emails_per_day: number;
  external_share: number;
  max_webhook_endpoints: Generated<number>;
  /** The stored size of the team's documents and kept revisions may not pass this (migration 2026-11-29T0900). */
  max_storage_mb: Generated<number>;
  updated_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  tariff_id: string | null;
  locale: string;
  created_at: string;
  updated_at: string;
  /** Moved on by triggers with every write to the team's organizations, bank accounts, managers or signers (migration 2026-11-26T1410). */
  catalog_version: Generated<number>;
}

export interface ApiKeysTable {
  id: number;
  /** null for a service key, which needs `x-tenant-id` to name the team. */
  team_id: string | null;
  kind: 'team' | 'service';
  name: string;
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  secret_hash: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface OrganizationsTable {
  team_id: string;
  id: string;
  sort_order: number;
  name: string;
  inn: string;
  kpp: string | null;
  email: string | null;
  address: string | null;
  edo_id: string | null;
  active: number;
  updated_at: string;
}

export interface BankAccountsTable {
  team_id: string;
  id: string;
  organization_id: string;
  sort_order: number;
  bank_name: string | null;
  bik: string | null;
  account: string | null;
  corr_account: string | null;
  is_default: number;
  updated_at: string;
}

export interface ManagersTable {
  team_id: string;
  id: string;
  sort_order: number;
  name: string;
  email: string | null;
  phone: string | null;
  updated_at: string;
}

export interface SignersTable {
  team_id: string;
  id: string;
  organization_id: string | null;
  sort_order: number;
  name: string;
  position: string | null;
  role: string | null;
  updated_at: string;
}

export interface TeamsTables {
  settings: SettingsTable;
  tariffs: TariffsTable;
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  organizations: OrganizationsTable;
  bank_accounts: BankAccountsTable;
  managers: ManagersTable;
  signers: SignersTable;
}

export type TariffRow = Selectable<TariffsTable>;
export type TeamRow = Selectable<TeamsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type BankAccountRow = Selectable<BankAccountsTable>;
export type ManagerRow = Selectable<ManagersTable>;
export type SignerRow = Selectable<SignersTable>;
