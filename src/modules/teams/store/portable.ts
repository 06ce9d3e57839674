/**
 * The caller's statement, the same on both databases but for how the team and tariff columns
 * travel (`TeamColumns`: the rows themselves here, their fingerprint in store/postgres.ts), and
 * the reading of its answer.
 */
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { teamListStateColumns } from '../../../db/document-counts.js';
import type { Executor } from '../../../db/database.js';
import { preparedQuery } from '../../../db/prepared-query.js';
import type { ApiKeyRow, Database, TariffRow, TeamRow } from '../../../db/types.js';
import type { CallerRow, TeamAndTariff } from './index.js';

/** The tariff's columns, read with the team under a `tariff__` prefix (the names overlap: id, updated_at). */
export const TARIFF_COLUMNS = [
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
  'max_storage_mb',
  'updated_at',
] as const satisfies ReadonlyArray<keyof TariffRow>;

export type TeamWithTariff = TeamRow & { [C in (typeof TARIFF_COLUMNS)[number] as `tariff__${C}`]: TariffRow[C] | null };

const teamWithTariff = preparedQuery<'id', TeamWithTariff>((db, p) =>
  db
    .selectFrom('teams')
    .leftJoin('tariffs', 'tariffs.id', 'teams.tariff_id')
    .selectAll('teams')
    .select(TARIFF_COLUMNS.map((c) => `tariffs.${c} as tariff__${c}` as const))
    .where('teams.id', '=', p('id')) as any,
);

/**
 * Splits a row read with the tariff's columns under `tariff__` into the team and its tariff;
 * other prefixed columns (`key__`, `list__`: no team column has a double underscore) are left out.
 */
export function splitTeamRow(row: Record<string, unknown>): TeamAndTariff & { team: TeamRow } {
  const team: Record<string, unknown> = {};
  const tariff: Record<string, unknown> = {};
  // for…in rather than Object.entries: read on every request, so no array per column.
  for (const name in row) {
    const value = row[name];
    if (name.startsWith('tariff__')) tariff[name.slice(8)] = value;
    else if (!name.includes('__')) team[name] = value;
  }
  return { team: team as TeamRow, tariff: tariff.id == null ? undefined : (tariff as TariffRow) };
}

/**
 * The team and its tariff in one query (a primary-key read joined to the tariff's primary key):
 * the portal's signed links, which carry no key, read it on every request.
 */
export async function findTeamAndTariff(db: Executor, teamId: string): Promise<TeamAndTariff> {
  const row = (await teamWithTariff(db, { id: teamId }))[0];
  if (row === undefined) return { team: undefined, tariff: undefined };
  return splitTeamRow(row as unknown as Record<string, unknown>);
}

/** The key's columns, read with its team under a `key__` prefix (the names overlap: id, name, …). */
const KEY_COLUMNS = ['id', 'team_id', 'kind', 'name', 'secret_hash', 'active'] as const satisfies ReadonlyArray<keyof ApiKeyRow>;

export type CallerRowRaw = TeamWithTariff & { [C in (typeof KEY_COLUMNS)[number] as `key__${C}`]: ApiKeyRow[C] } & {
  key__rank: number | string;
  list__documents?: number | string | null;
  list__version?: number | string | null;
  list__stored?: number | string | null;
};

/** The key joined to its team (`t`) and the team's tariff (`tariffs`), before any column is chosen. */
type JoinedCaller = SelectQueryBuilder<Database & { k: Database['api_keys']; t: Database['teams'] }, 'k' | 't' | 'tariffs', object>;

/** How the team's and tariff's columns travel in the caller's statement (selected from `joined`). */
export type TeamColumns = (joined: JoinedCaller) => JoinedCaller;

/** The team and tariff rows themselves, the tariff's columns under `tariff__`. */
export const teamRowColumns: TeamColumns = (joined) => joined.selectAll('t').select(TARIFF_COLUMNS.map((c) => `tariffs.${c} as tariff__${c}` as const)) as unknown as JoinedCaller;

/** The caller's columns selected from `from` (which has the key as `k`), the tenant header being `tenant`. */
export function callerSelect(from: any, tenant: RawBuilder<unknown>, withListState: boolean, teamColumns: TeamColumns): any {
  const joined = (from as SelectQueryBuilder<Database & { k: Database['api_keys'] }, 'k', object>)
    .leftJoin('teams as t', (join) => join.on(sql`t.id`, '=', sql`case when k.kind = 'service' then ${tenant} else k.team_id end`))
    .leftJoin('tariffs', 'tariffs.id', 't.tariff_id') as unknown as JoinedCaller;
  let query = teamColumns(joined) as unknown as ReturnType<JoinedCaller['selectAll']>;
  query = query
    .select(KEY_COLUMNS.map((c) => `k.${c} as key__${c}` as const) as any)
    .select(sql<number>`(select count(*) from api_keys a where a.team_id = k.team_id and a.active = 1 and a.id < k.id)`.as('key__rank'));
  if (withListState) {
    const list = teamListStateColumns(sql.ref('t.id'));
    query = query.select([list.documents.as('list__documents'), list.version.as('list__version'), list.storedBytes.as('list__stored')]) as unknown as typeof query;
  }
  return query;
}

/**
 * Everything authentication reads, in ONE statement (one round trip on PostgreSQL, one
 * statement on SQLite): the key by the SHA-256 of its secret, its rank among the team's active
 * keys (max_api_keys), the team it acts for (the key's own, or `x-tenant-id` for a service key)
 * joined to its tariff and, in the `withListState` variant, the team's document count and list
 * version (src/db/document-counts.ts). No key row: an unknown key. Read on every authenticated
 * request, so a deactivated key, a tariff change and the team's catalog and list versions show
 * on the very next request on every node.
 *
 * Two texts rather than one with a switch parameter: PostgreSQL keeps one generic plan per named
 * statement only when custom plans are not cheaper, and a `case when $3 = 1` folded away in
 * custom plans made it plan the statement anew on every request (pg_prepared_statements:
 * 0 generic, 120 custom plans in 120 executions).
 */
export function callerQuery(withListState: boolean, teamColumns: TeamColumns) {
  return preparedQuery<'hash' | 'tenantId', CallerRowRaw>((db, p) =>
    callerSelect(db.selectFrom('api_keys as k'), sql`${p('tenantId')}`, withListState, teamColumns).where('k.secret_hash', '=', p('hash')),
  );
}

/** Statements the caller lookups ran, one per batch on PostgreSQL (tests, diagnostics). */
export const callerStatementStats = { statements: 0 };

/** The caller from the statement's row, with the team and tariff the store read for it. */
export function callerFromRow(row: Record<string, unknown>, found: TeamAndTariff, withListState: boolean): CallerRow {
  const key = {
    id: row.key__id,
    team_id: row.key__team_id,
    kind: row.key__kind,
    name: row.key__name,
    secret_hash: row.key__secret_hash,
    active: row.key__active,
  } as ApiKeyRow satisfies Record<(typeof KEY_COLUMNS)[number], unknown>;
  // PostgreSQL answers sum() as numeric text and count(*) as bigint.
  const listState =
    found.team !== undefined && withListState
      ? { documents: Number(row.list__documents ?? 0), version: Number(row.list__version ?? 0), storedBytes: Number(row.list__stored ?? 0) }
      : undefined;
  return { key, rank: Number(row.key__rank), team: found.team, tariff: found.tariff, listState };
}
