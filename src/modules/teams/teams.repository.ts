/**
 * Reads and writes of teams, keys, reference data and settings, the same on both databases. Every
 * tenant query takes the team. The caller of a request is read through the TeamStore (store/).
 */
import { preparedQuery } from '../../db/prepared-query.js';
import type { Executor } from '../../db/database.js';
import type { BankAccountRow, ManagerRow, OrganizationRow, SignerRow, TariffRow, TeamRow } from '../../db/types.js';

/** Statements the caller lookups ran (the caller's statement is the store's: store/portable.ts). */
export { callerStatementStats } from './store/portable.js';

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

// Compiled once (src/db/prepared-query.ts).
const teamById = preparedQuery<'id', TeamRow>((db, p) => db.selectFrom('teams').selectAll().where('id', '=', p('id')));
const tariffById = preparedQuery<'id', TariffRow>((db, p) => db.selectFrom('tariffs').selectAll().where('id', '=', p('id')));

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
