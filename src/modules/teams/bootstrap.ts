/**
 * Applying the bootstrap file (operating contract, section 3) in one transaction, and seeding
 * the demo team on the first start of an empty database. Reading and checking the file is in
 * `bootstrap.parse.ts`; its API is re-exported here so callers import one module.
 *
 * Applying is declarative per row: each tariff, team, key, organization, bank account,
 * manager and signer the file names ends up exactly as the file says, with absent optional
 * fields at their defaults (active true, locale ru, is_default false, text null). Rows the file
 * does not name are left alone: nothing is ever deleted; retire a key or an organization
 * with `"active": false`. Rows whose values already match are not written at all, so
 * re-applying a file changes nothing, not even `updated_at`. Writes are upserts, so two
 * instances applying the same file at start-up do not collide.
 */
import type { Db, Executor } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { isoNow } from '../../shared/clock.js';
import { hashSecret, newApiKeySecret, randomToken } from '../../shared/tokens.js';
import { jsonPath, throwIssues, validateBootstrap, type BootstrapIssue, type Segment } from './bootstrap.parse.js';
import type { BootstrapApiKey, BootstrapFile, BootstrapTeam } from './bootstrap.schemas.js';
import * as repo from './bootstrap.repository.js';
import { DEFAULT_TARIFF, tariffToRow } from './tariffs.js';
import { listBankAccounts, listManagers, listOrganizations, listSigners, nextApiKeyId } from './teams.repository.js';
import { DEMO_CATALOG_DATA } from './demo-organization.js';

export { BootstrapError, parseBootstrap, validateBootstrap, type BootstrapIssue } from './bootstrap.parse.js';
export type { BootstrapFile } from './bootstrap.schemas.js';

export interface BootstrapCounts {
  created: number;
  updated: number;
  unchanged: number;
}

export interface BootstrapSummary {
  tariffs: BootstrapCounts;
  teams: BootstrapCounts;
  api_keys: BootstrapCounts;
  organizations: BootstrapCounts;
  bank_accounts: BootstrapCounts;
  managers: BootstrapCounts;
  signers: BootstrapCounts;
}

function emptySummary(): BootstrapSummary {
  const counts = (): BootstrapCounts => ({ created: 0, updated: 0, unchanged: 0 });
  return {
    tariffs: counts(),
    teams: counts(),
    api_keys: counts(),
    organizations: counts(),
    bank_accounts: counts(),
    managers: counts(),
    signers: counts(),
  };
}

/** Writes `wanted` (through `write`, an upsert) unless the stored row already holds those values. */
async function upsertIfChanged(
  counts: BootstrapCounts,
  existing: object | undefined,
  wanted: object,
  write: () => Promise<unknown>,
): Promise<void> {
  const stored = existing as Record<string, unknown> | undefined;
  const outcome = !stored
    ? 'created'
    : Object.entries(wanted).every(([column, value]) => stored[column] === value)
      ? 'unchanged'
      : 'updated';
  counts[outcome] += 1;
  if (outcome !== 'unchanged') await write();
}

interface PlannedKey {
  key: BootstrapApiKey;
  teamId: string | null;
  at: Segment[];
}

function plannedKeys(file: BootstrapFile): PlannedKey[] {
  const keys: PlannedKey[] = [];
  file.teams?.forEach((team, t) =>
    team.api_keys?.forEach((key, k) => keys.push({ key, teamId: team.id, at: ['teams', t, 'api_keys', k] })),
  );
  file.service_keys?.forEach((key, k) => keys.push({ key, teamId: null, at: ['service_keys', k] }));
  return keys;
}

/** References the database may satisfy: tariffs named by teams, organizations named by accounts and signers. */
async function referenceIssues(trx: Executor, file: BootstrapFile): Promise<BootstrapIssue[]> {
  const issues: BootstrapIssue[] = [];
  const teams = file.teams ?? [];
  const fileTariffs = new Set(Object.keys(file.tariffs ?? {}));
  const wanted = [...new Set(teams.flatMap((team) => (team.tariff && !fileTariffs.has(team.tariff) ? [team.tariff] : [])))];
  const stored = await repo.storedTariffIds(trx, wanted);
  teams.forEach((team, t) => {
    if (team.tariff && !fileTariffs.has(team.tariff) && !stored.has(team.tariff)) {
      issues.push({
        path: jsonPath(['teams', t, 'tariff']),
        message: `names tariff "${team.tariff}", which is neither in $.tariffs nor in the database`,
      });
    }
  });

  for (const [t, team] of teams.entries()) {
    const fileOrgs = new Set((team.organizations ?? []).map((o) => o.id));
    const refs = [
      ...(team.bank_accounts ?? []).map((a, i) => ({ org: a.organization_id, at: ['teams', t, 'bank_accounts', i] })),
      ...(team.signers ?? []).map((s, i) => ({ org: s.organization_id, at: ['teams', t, 'signers', i] })),
    ].filter((r): r is { org: string; at: Segment[] } => r.org !== undefined && !fileOrgs.has(r.org));
    if (refs.length === 0) continue;
    const known = await repo.storedOrganizationIds(trx, team.id, [...new Set(refs.map((r) => r.org))]);
    for (const ref of refs.filter((r) => !known.has(r.org))) {
      issues.push({
        path: jsonPath([...ref.at, 'organization_id']),
        message: `names organization "${ref.org}", which team "${team.id}" has neither in this file nor in the database`,
      });
    }
  }
  return issues;
}

/** A key id keeps its owner for life; a secret belongs to one key. */
async function keyIssues(trx: Executor, keys: PlannedKey[]): Promise<BootstrapIssue[]> {
  if (keys.length === 0) return [];
  const issues: BootstrapIssue[] = [];
  const byId = await repo.apiKeysById(trx, keys.map((k) => k.key.id));
  const hashes = keys.map((k) => hashSecret(k.key.secret));
  const byHash = await repo.apiKeyIdsBySecretHash(trx, hashes);
  keys.forEach(({ key, teamId, at }, i) => {
    const owner = byId.get(key.id);
    if (owner && (owner.team_id !== teamId || owner.kind !== (teamId === null ? 'service' : 'team'))) {
      const current = owner.kind === 'service' ? 'a service key' : `a key of team "${owner.team_id}"`;
      issues.push({ path: jsonPath([...at, 'id']), message: `key ${key.id} already exists as ${current}; a key cannot change owner` });
    }
    const holder = byHash.get(hashes[i] as string);
    if (holder !== undefined && holder !== key.id) {
      issues.push({ path: jsonPath([...at, 'secret']), message: `is already the secret of key ${holder}` });
    }
  });
  return issues;
}

async function applyTeam(trx: Executor, team: BootstrapTeam, now: string, summary: BootstrapSummary): Promise<void> {
  const teamId = team.id;
  const storedTeam = await repo.findTeamSettings(trx, teamId);
  const teamRow = { name: team.name, tariff_id: team.tariff ?? null, locale: team.locale ?? 'ru' };
  await upsertIfChanged(summary.teams, storedTeam, teamRow, () => repo.upsertTeam(trx, teamId, teamRow, now));

  const orgs = new Map((await listOrganizations(trx, teamId)).map((r) => [r.id, r]));
  for (const [i, org] of (team.organizations ?? []).entries()) {
    const row = {
      team_id: teamId,
      id: org.id,
      sort_order: i,
      name: org.name,
      // The column is NOT NULL and the contract makes inn optional: '' never matches a seller's INN.
      inn: org.inn ?? '',
      kpp: org.kpp ?? null,
      email: org.email ?? null,
      address: org.address ?? null,
      edo_id: org.edo_id ?? null,
      active: org.active === false ? 0 : 1,
    };
    await upsertIfChanged(summary.organizations, orgs.get(org.id), row, () => repo.upsertTeamScoped(trx, 'organizations', row, now));
  }

  // The default account of an organization: the one marked, else the first listed for it.
  const accountsFile = team.bank_accounts ?? [];
  const defaultOf = new Map<string, string>();
  for (const a of accountsFile) if (a.is_default === true) defaultOf.set(a.organization_id, a.id);
  for (const a of accountsFile) if (!defaultOf.has(a.organization_id)) defaultOf.set(a.organization_id, a.id);
  const accounts = new Map((await listBankAccounts(trx, teamId)).map((r) => [r.id, r]));
  for (const [i, account] of accountsFile.entries()) {
    const row = {
      team_id: teamId,
      id: account.id,
      organization_id: account.organization_id,
      sort_order: i,
      bank_name: account.bank_name ?? null,
      bik: account.bik ?? null,
      account: account.account ?? null,
      corr_account: account.corr_account ?? null,
      is_default: defaultOf.get(account.organization_id) === account.id ? 1 : 0,
    };
    await upsertIfChanged(summary.bank_accounts, accounts.get(account.id), row, () => repo.upsertTeamScoped(trx, 'bank_accounts', row, now));
  }
  // At most one default per organization, also among accounts an earlier file stored.
  for (const organizationId of defaultOf.keys()) {
    summary.bank_accounts.updated += await repo.demoteOtherDefaults(trx, teamId, organizationId, accountsFile.map((a) => a.id), now);
  }

  const managers = new Map((await listManagers(trx, teamId)).map((r) => [r.id, r]));
  for (const [i, manager] of (team.managers ?? []).entries()) {
    const row = { team_id: teamId, id: manager.id, sort_order: i, name: manager.name, email: manager.email ?? null, phone: manager.phone ?? null };
    await upsertIfChanged(summary.managers, managers.get(manager.id), row, () => repo.upsertTeamScoped(trx, 'managers', row, now));
  }

  const signers = new Map((await listSigners(trx, teamId)).map((r) => [r.id, r]));
  for (const [i, signer] of (team.signers ?? []).entries()) {
    const row = {
      team_id: teamId,
      id: signer.id,
      organization_id: signer.organization_id ?? null,
      sort_order: i,
      name: signer.name,
      position: signer.position ?? null,
      role: signer.role ?? null,
    };
    await upsertIfChanged(summary.signers, signers.get(signer.id), row, () => repo.upsertTeamScoped(trx, 'signers', row, now));
  }
}

async function applyInTransaction(trx: Executor, input: BootstrapFile, now: string): Promise<BootstrapSummary> {
  const file = validateBootstrap(input);
  const keys = plannedKeys(file);
  throwIssues([...(await referenceIssues(trx, file)), ...(await keyIssues(trx, keys))]);
  const summary = emptySummary();

  const tariffIds = Object.keys(file.tariffs ?? {});
  const tariffs = await repo.tariffsById(trx, tariffIds);
  for (const [id, t] of Object.entries(file.tariffs ?? {})) {
    const { updated_at: _updatedAt, ...row } = tariffToRow(
      {
        id,
        max_organizations: t.max_organizations ?? DEFAULT_TARIFF.max_organizations,
        max_api_keys: t.max_api_keys ?? DEFAULT_TARIFF.max_api_keys,
        key_rate: { ...DEFAULT_TARIFF.key_rate, ...t.key_rate },
        team_rate: { ...DEFAULT_TARIFF.team_rate, ...t.team_rate },
        emails_per_day: t.emails_per_day ?? DEFAULT_TARIFF.emails_per_day,
        external_share: t.external_share ?? DEFAULT_TARIFF.external_share,
        max_webhook_endpoints: t.max_webhook_endpoints ?? DEFAULT_TARIFF.max_webhook_endpoints,
        max_storage_mb: t.max_storage_mb ?? DEFAULT_TARIFF.max_storage_mb,
      },
      now,
    );
    await upsertIfChanged(summary.tariffs, tariffs.get(id), row, () => repo.upsertTariff(trx, row, now));
  }

  for (const team of file.teams ?? []) await applyTeam(trx, team, now, summary);

  const keyIds = keys.map((k) => k.key.id);
  const storedKeys = await repo.apiKeysById(trx, keyIds);
  for (const { key, teamId } of keys) {
    const row = { name: key.name, secret_hash: hashSecret(key.secret), active: key.active === false ? 0 : 1 };
    await upsertIfChanged(summary.api_keys, storedKeys.get(key.id), row, () =>
      repo.upsertApiKey(trx, { id: key.id, team_id: teamId, kind: teamId === null ? 'service' : 'team' }, row, now),
    );
  }
  return summary;
}

/** Applies a checked file in one transaction: all of it, or nothing when any reference fails. */
export async function applyBootstrap(db: Db, file: BootstrapFile, clock: Clock): Promise<BootstrapSummary> {
  const now = isoNow(clock);
  return db.transaction().execute((trx) => applyInTransaction(trx, file, now));
}

/**
 * The first-start team is a real team: its id is random (`team-` and 96 random bits), never the
 * demo world's id (which is outside the team id alphabet, see `DEMO_TEAM_ID` in auth.service).
 */
export function firstStartTeamId(): string {
  return `team-${randomToken(12)}`;
}
const DEMO_TEAM_NAME = 'Demo team';
const FIRST_START_KEY = 'first_start_team';

export interface DemoTeam {
  teamId: string;
  keyId: number;
  /** Shown once by the caller; only its hash is stored. */
  secret: string;
}

/** A stored column's value as a bootstrap file gives it (absent instead of null). */
const given = (value: string | null): string | undefined => value ?? undefined;

function demoFile(teamId: string, keyId: number, secret: string): BootstrapFile {
  const { organizations: [org], bankAccounts: [bank], managers: [manager], signers: [signer] } = DEMO_CATALOG_DATA;
  if (!org || !bank || !manager || !signer) throw new Error('the demo organization data is incomplete');
  return {
    teams: [
      {
        id: teamId,
        name: DEMO_TEAM_NAME,
        locale: 'ru',
        api_keys: [{ id: keyId, name: 'demo', secret, active: true }],
        // The one «Ромашка» (demo-organization.ts), under the seeded team's own ids.
        organizations: [
          {
            id: 'org-1',
            name: org.name,
            inn: org.inn,
            kpp: given(org.kpp),
            email: given(org.email),
            address: given(org.address),
            edo_id: given(org.edo_id),
            active: org.active === 1,
          },
        ],
        bank_accounts: [
          {
            id: 'ba-1',
            organization_id: 'org-1',
            bank_name: given(bank.bank_name),
            bik: given(bank.bik),
            account: given(bank.account),
            corr_account: given(bank.corr_account),
            is_default: bank.is_default === 1,
          },
        ],
        managers: [{ id: 'm-1', name: manager.name, email: given(manager.email), phone: given(manager.phone) }],
        signers: [{ id: 's-1', organization_id: 'org-1', name: signer.name, position: given(signer.position), role: given(signer.role) }],
      },
    ],
  };
}

/**
 * On the first start of an empty database: creates a real team ("Demo team", random id
 * `team-…`) with one organization and a new key, and returns the key's secret for the caller to
 * print once. Returns null when any team exists or the first start already happened. Safe when
 * several processes start together: the first-start claim is inserted by one statement that only
 * inserts while `teams` is empty and yields to a concurrent insert (ON CONFLICT DO NOTHING), and
 * only the process whose insert took goes on.
 */
export async function seedDemoTeamIfEmpty(db: Db, clock: Clock): Promise<DemoTeam | null> {
  const now = isoNow(clock);
  const teamId = firstStartTeamId();
  return db.transaction().execute(async (trx) => {
    if (!(await repo.claimFirstStart(trx, FIRST_START_KEY, teamId))) return null;

    // Key 1 unless service keys were bootstrapped before any team.
    const keyId = await nextApiKeyId(trx);
    const secret = newApiKeySecret();
    await applyInTransaction(trx, demoFile(teamId, keyId, secret), now);
    return { teamId, keyId, secret };
  });
}
