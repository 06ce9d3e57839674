/**
 * SQL of the bootstrap import (bootstrap.ts holds the rules): lookups for the reference and key
 * checks, and the upserts, each keyed like its table. Runs inside the import's transaction.
 */
import type { Insertable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Database, TariffRow } from '../../db/types.js';

/** Of `ids`, the tariffs the database has. */
export async function storedTariffIds(db: Executor, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await db.selectFrom('tariffs').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
}

/** Of `ids`, the organizations the team has. */
export async function storedOrganizationIds(db: Executor, teamId: string, ids: string[]): Promise<Set<string>> {
  const rows = await db.selectFrom('organizations').select('id').where('team_id', '=', teamId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The keys with these ids (any owner), by id. */
export async function apiKeysById(db: Executor, ids: number[]) {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('api_keys').select(['id', 'team_id', 'kind', 'name', 'secret_hash', 'active']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [Number(r.id), r]));
}

/** The ids of the keys holding these secret hashes, by hash. */
export async function apiKeyIdsBySecretHash(db: Executor, hashes: string[]): Promise<Map<string, number>> {
  const rows = await db.selectFrom('api_keys').select(['id', 'secret_hash']).where('secret_hash', 'in', hashes).execute();
  return new Map(rows.map((r) => [r.secret_hash, Number(r.id)]));
}

export async function tariffsById(db: Executor, ids: string[]): Promise<Map<string, TariffRow>> {
  const rows = ids.length ? await db.selectFrom('tariffs').selectAll().where('id', 'in', ids).execute() : [];
  return new Map(rows.map((r) => [r.id, r]));
}

export async function findTeamSettings(db: Executor, teamId: string) {
  return db.selectFrom('teams').select(['name', 'tariff_id', 'locale']).where('id', '=', teamId).executeTakeFirst();
}

export async function upsertTariff(db: Executor, row: Omit<Insertable<Database['tariffs']>, 'updated_at'>, now: string): Promise<void> {
  await db
    .insertInto('tariffs')
    .values({ ...row, updated_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, updated_at: now }))
    .execute();
}

export async function upsertTeam(
  db: Executor,
  teamId: string,
  row: { name: string; tariff_id: string | null; locale: string },
  now: string,
): Promise<void> {
  await db
    .insertInto('teams')
    .values({ id: teamId, ...row, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, updated_at: now }))
    .execute();
}

type TeamScopedTable = 'organizations' | 'bank_accounts' | 'managers' | 'signers';

/** Inserts or updates one row of a team's reference data, keyed (team_id, id). */
export async function upsertTeamScoped<T extends TeamScopedTable>(
  db: Executor,
  table: T,
  row: Omit<Insertable<Database[T]>, 'updated_at'>,
  now: string,
): Promise<void> {
  // One statement shape for the four tables; Kysely cannot narrow a generic table name.
  const values = { ...row, updated_at: now } as Insertable<Database[TeamScopedTable]>;
  await db
    .insertInto(table as TeamScopedTable)
    .values(values)
    .onConflict((oc) => oc.columns(['team_id', 'id']).doUpdateSet(values as never))
    .execute();
}

/** Clears the default mark of the organization's other accounts; how many changed. */
export async function demoteOtherDefaults(db: Executor, teamId: string, organizationId: string, keep: string[], now: string): Promise<number> {
  const demoted = await db
    .updateTable('bank_accounts')
    .set({ is_default: 0, updated_at: now })
    .where('team_id', '=', teamId)
    .where('organization_id', '=', organizationId)
    .where('is_default', '=', 1)
    .where('id', 'not in', keep)
    .executeTakeFirst();
  return Number(demoted.numUpdatedRows);
}

export async function upsertApiKey(
  db: Executor,
  key: { id: number; team_id: string | null; kind: 'team' | 'service' },
  row: { name: string; secret_hash: string; active: number },
  now: string,
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ ...key, ...row, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, updated_at: now }))
    .execute();
}

/**
 * Claims the first start (a settings row) only while `teams` is empty, yielding to a concurrent
 * claim (ON CONFLICT DO NOTHING): true for the one caller whose insert took.
 */
export async function claimFirstStart(db: Executor, key: string, teamId: string): Promise<boolean> {
  // The team id is random, so the claim on the first start is a fixed settings key: one
  // statement inserts it only while `teams` is empty and yields to a concurrent insert.
  const inserted = await db
    .insertInto('settings')
    .columns(['key', 'value'])
    .expression(
      db
        .selectNoFrom((eb) => [eb.val(key).as('key'), eb.val(teamId).as('value')])
        .where((eb) => eb.not(eb.exists(eb.selectFrom('teams').select('id')))),
    )
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}
