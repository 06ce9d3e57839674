/** Reads of teams, keys and reference data. Every tenant query takes the team. */
import { preparedQuery } from '../../db/prepared-query.js';
import type { Executor } from '../../db/database.js';
import type {
  ApiKeyRow,
  BankAccountRow,
  ManagerRow,
  OrganizationRow,
  SignerRow,
  TariffRow,
  TeamRow,
} from '../../db/types.js';

export async function findApiKeyByHash(db: Executor, secretHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
}

/** Number of active keys of the team with an id below `keyId` (the key's rank for max_api_keys). */
export async function countActiveKeysBefore(db: Executor, teamId: string, keyId: number): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('team_id', '=', teamId)
    .where('active', '=', 1)
    .where('id', '<', keyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// Read on every authenticated request, compiled once (src/db/prepared-query.ts).
const teamById = preparedQuery<'id', TeamRow>((db, p) => db.selectFrom('teams').selectAll().where('id', '=', p('id')));
const tariffById = preparedQuery<'id', TariffRow>((db, p) => db.selectFrom('tariffs').selectAll().where('id', '=', p('id')));

/** The tariff's columns, read with the team under a `tariff__` prefix (the names overlap: id, updated_at). */
const TARIFF_COLUMNS = [
  'id',
  'max_organizations',
  'max_api_keys',
  'key_per_sec',
  'key_per_min',
  'key_per_day',
  'team_per_sec',
  'team_per_min',
  'team_per_day',
  'emails_per_day',
  'external_share',
  'max_webhook_endpoints',
  'updated_at',
] as const satisfies ReadonlyArray<keyof TariffRow>;

type TeamWithTariff = TeamRow & { [C in (typeof TARIFF_COLUMNS)[number] as `tariff__${C}`]: TariffRow[C] | null };

const teamWithTariff = preparedQuery<'id', TeamWithTariff>((db, p) =>
  db
    .selectFrom('teams')
    .leftJoin('tariffs', 'tariffs.id', 'teams.tariff_id')
    .selectAll('teams')
    .select(TARIFF_COLUMNS.map((c) => `tariffs.${c} as tariff__${c}` as const))
    .where('teams.id', '=', p('id')) as any,
);

/**
 * The team and its tariff in one query (a primary-key read joined to the tariff's primary key):
 * read on every authenticated request, so a tariff change and the team's catalog version show
 * at once on every node.
 */
export async function findTeamAndTariff(db: Executor, teamId: string): Promise<{ team: TeamRow | undefined; tariff: TariffRow | undefined }> {
  const row = (await teamWithTariff(db, { id: teamId }))[0];
  if (row === undefined) return { team: undefined, tariff: undefined };
  const team: Record<string, unknown> = {};
  const tariff: Record<string, unknown> = {};
  // for…in rather than Object.entries: read on every request, so no array per column.
  for (const name in row) {
    const value = (row as Record<string, unknown>)[name];
    if (name.startsWith('tariff__')) tariff[name.slice(8)] = value;
    else team[name] = value;
  }
  return { team: team as TeamRow, tariff: tariff.id == null ? undefined : (tariff as TariffRow) };
}

export async function findTeam(db: Executor, teamId: string): Promise<TeamRow | undefined> {
  return (await teamById(db, { id: teamId }))[0];
}

/**
 * Serializes a team's counted creations (e.g. webhook endpoints within the tariff's limit) for the
 * rest of the transaction: a no-op update takes the team row's lock on PostgreSQL and the write
 * lock on SQLite, so two concurrent creates cannot both pass the count.
 */
export async function lockTeam(db: Executor, teamId: string): Promise<void> {
  await db.updateTable('teams').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', teamId).execute();
}

export async function findTariff(db: Executor, tariffId: string): Promise<TariffRow | undefined> {
  return (await tariffById(db, { id: tariffId }))[0];
}

const listOrganizationsQuery = preparedQuery<'teamId', OrganizationRow>((db, p) =>
  db.selectFrom('organizations').selectAll().where('team_id', '=', p('teamId')).orderBy('sort_order').orderBy('id'),
);

export async function listOrganizations(db: Executor, teamId: string): Promise<OrganizationRow[]> {
  return listOrganizationsQuery(db, { teamId });
}

const listBankAccountsQuery = preparedQuery<'teamId', BankAccountRow>((db, p) =>
  db.selectFrom('bank_accounts').selectAll().where('team_id', '=', p('teamId')).orderBy('sort_order').orderBy('id'),
);

export async function listBankAccounts(db: Executor, teamId: string): Promise<BankAccountRow[]> {
  return listBankAccountsQuery(db, { teamId });
}

const listManagersQuery = preparedQuery<'teamId', ManagerRow>((db, p) =>
  db.selectFrom('managers').selectAll().where('team_id', '=', p('teamId')).orderBy('sort_order').orderBy('id'),
);

export async function listManagers(db: Executor, teamId: string): Promise<ManagerRow[]> {
  return listManagersQuery(db, { teamId });
}

const listSignersQuery = preparedQuery<'teamId', SignerRow>((db, p) =>
  db.selectFrom('signers').selectAll().where('team_id', '=', p('teamId')).orderBy('sort_order').orderBy('id'),
);

export async function listSigners(db: Executor, teamId: string): Promise<SignerRow[]> {
  return listSignersQuery(db, { teamId });
}

export async function nextApiKeyId(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.max<number | string | null>('id').as('max'))
    .executeTakeFirstOrThrow();
  return Number(row.max ?? 0) + 1;
}

export async function insertApiKey(
  db: Executor,
  key: { id: number; teamId: string; name: string; secretHash: string; now: string },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      team_id: key.teamId,
      kind: 'team',
      name: key.name,
      secret_hash: key.secretHash,
      active: 1,
      created_at: key.now,
      updated_at: key.now,
    })
    .execute();
}

export async function setApiKeyActive(db: Executor, keyId: number, active: boolean, now: string): Promise<number> {
  const result = await db
    .updateTable('api_keys')
    .set({ active: active ? 1 : 0, updated_at: now })
    .where('id', '=', keyId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function getSetting(db: Executor, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

/** Inserts the setting unless present and returns the stored value (first writer wins). */
export async function ensureSetting(db: Executor, key: string, value: string): Promise<string> {
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const stored = await getSetting(db, key);
  if (stored === undefined) throw new Error(`setting ${key} vanished`);
  return stored;
}
