/** Reads of teams, keys and reference data. Every tenant query takes the team. */
import DataLoader from 'dataloader';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { teamListStateColumns, type TeamListState } from '../../db/document-counts.js';
import { preparedQuery } from '../../db/prepared-query.js';
import { dialectOf, type Executor } from '../../db/database.js';
import type {
  ApiKeyRow,
  BankAccountRow,
  ManagerRow,
  OrganizationRow,
  SignerRow,
  TariffRow,
  TeamRow,
  Database,
} from '../../db/types.js';

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
  'max_storage_mb',
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
 * Splits a row read with the tariff's columns under `tariff__` into the team and its tariff;
 * other prefixed columns (`key__`, `list__`: no team column has a double underscore) are left out.
 */
function splitTeamRow(row: Record<string, unknown>): { team: TeamRow; tariff: TariffRow | undefined } {
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
export async function findTeamAndTariff(db: Executor, teamId: string): Promise<{ team: TeamRow | undefined; tariff: TariffRow | undefined }> {
  const row = (await teamWithTariff(db, { id: teamId }))[0];
  if (row === undefined) return { team: undefined, tariff: undefined };
  return splitTeamRow(row as unknown as Record<string, unknown>);
}

/** The key's columns, read with its team under a `key__` prefix (the names overlap: id, name, …). */
const KEY_COLUMNS = ['id', 'team_id', 'kind', 'name', 'secret_hash', 'active'] as const satisfies ReadonlyArray<keyof ApiKeyRow>;

type CallerRowRaw = TeamWithTariff & { [C in (typeof KEY_COLUMNS)[number] as `key__${C}`]: ApiKeyRow[C] } & {
  key__rank: number | string;
  list__documents?: number | string | null;
  list__version?: number | string | null;
  list__stored?: number | string | null;
};

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
function callerQuery(withListState: boolean, teamByFingerprint: boolean) {
  return preparedQuery<'hash' | 'tenantId', CallerRowRaw>((db, p) =>
    callerSelect(db.selectFrom('api_keys as k'), sql`${p('tenantId')}`, withListState, teamByFingerprint).where('k.secret_hash', '=', p('hash')),
  );
}

/** The caller's columns selected from `from` (which has the key as `k`), the tenant header being `tenant`. */
function callerSelect(from: any, tenant: RawBuilder<unknown>, withListState: boolean, teamByFingerprint: boolean): any {
  const joined = (from as SelectQueryBuilder<Database & { k: Database['api_keys'] }, 'k', object>)
    .leftJoin('teams as t', (join) => join.on(sql`t.id`, '=', sql`case when k.kind = 'service' then ${tenant} else k.team_id end`))
    .leftJoin('tariffs', 'tariffs.id', 't.tariff_id');
  let query = (
    teamByFingerprint
      ? joined.select(sql<string | null>`${TEAM_FINGERPRINT}`.as('team__fp'))
      : joined.selectAll('t').select(TARIFF_COLUMNS.map((c) => `tariffs.${c} as tariff__${c}` as const))
  ) as unknown as ReturnType<typeof joined.selectAll<'t'>>;
  query = query
    .select(KEY_COLUMNS.map((c) => `k.${c} as key__${c}` as const))
    .select(sql<number>`(select count(*) from api_keys a where a.team_id = k.team_id and a.active = 1 and a.id < k.id)`.as('key__rank'));
  if (withListState) {
    const list = teamListStateColumns(sql.ref('t.id'));
    query = query.select([list.documents.as('list__documents'), list.version.as('list__version'), list.storedBytes.as('list__stored')]) as unknown as typeof query;
  }
  return query;
}

/**
 * PostgreSQL: the callers of several requests in ONE statement, the keys' hashes and tenants as
 * two arrays (`unnest … with ordinality`: `batch__i` is a lookup's 1-based position). The same
 * columns as `callerQuery`'s fingerprint variant, per lookup.
 */
function callerBatchQuery(withListState: boolean) {
  return preparedQuery<'hashes' | 'tenants', CallerRowRaw & { batch__i: number | string }>((db, p) =>
    callerSelect(
      db
        .selectFrom(sql`(select * from unnest(${p('hashes')}::text[], ${p('tenants')}::text[]) with ordinality as u(hash, tenant, i))`.as('q'))
        .innerJoin('api_keys as k', (join: any) => join.onRef('k.secret_hash', '=', 'q.hash')),
      sql.ref('q.tenant'),
      withListState,
      true,
    ).select(sql.ref('q.i').as('batch__i')),
  );
}
const callerFpBatch = callerBatchQuery(false);
const callerFpWithListStateBatch = callerBatchQuery(true);

/** One key lookup of a request: the SHA-256 (hex) of the presented secret and its `x-tenant-id`. */
interface CallerLookup {
  hash: string;
  tenantId: string | null;
}

/** Statements `findCaller` ran, one per batch on PostgreSQL (tests, diagnostics). */
export const callerStatementStats = { statements: 0 };

/** The most lookups one statement carries (two arrays of this many values, as many rows at most). */
const CALLER_BATCH_MAX = 64;

type CallerLoader = DataLoader<CallerLookup, Record<string, unknown> | undefined>;

/**
 * PostgreSQL: the key lookups of the requests that reach authentication in one turn of the
 * event loop, run as one statement (issue 12). Per request a statement cost a write system call
 * to the server (pg's `submit` was a quarter of a cached GET's profile samples), its Bind/Execute and row
 * description, and the server's own per-statement work, all on the same two cores; a batch pays
 * them once. Nothing is cached: each lookup is answered by a statement that started after the
 * request asked (DataLoader with `cache: false`), so a key or team changed before the request
 * came shows in it, as with a statement of its own. Dispatched with `setImmediate`: the requests
 * read from the sockets in one poll phase share a batch, each waiting only for that phase to end.
 */
const callerLoaders = new WeakMap<object, [CallerLoader, CallerLoader]>();

function callerLoader(db: Executor, withListState: boolean): CallerLoader {
  let loaders = callerLoaders.get(db);
  if (loaders === undefined) {
    const make = (query: typeof callerFpBatch, single: typeof callerFpByKeyHash): CallerLoader =>
      new DataLoader<CallerLookup, Record<string, unknown> | undefined>(
        async (lookups) => {
          callerStatementStats.statements++;
          // One lookup: the statement of one key. PostgreSQL plans the batch statement anew on
          // every run (its arrays' contents make a custom plan look cheaper than the generic one:
          // 0.14 ms of planning for 0.06 of execution), the one-key statement once per
          // connection (a generic plan after five runs: 5 µs); docs/performance.md, "Session 13".
          if (lookups.length === 1) {
            const [only] = lookups as [CallerLookup];
            return [(await single(db, { hash: only.hash, tenantId: only.tenantId }))[0] as Record<string, unknown> | undefined];
          }
          const rows = await query(db, { hashes: lookups.map((l) => l.hash), tenants: lookups.map((l) => l.tenantId) });
          const answers = new Array<Record<string, unknown> | undefined>(lookups.length).fill(undefined);
          for (const row of rows as unknown as Array<Record<string, unknown>>) {
            const i = Number(row.batch__i) - 1;
            if (answers[i] === undefined) answers[i] = row;
          }
          return answers;
        },
        { cache: false, maxBatchSize: CALLER_BATCH_MAX, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
      );
    loaders = [make(callerFpBatch, callerFpByKeyHash), make(callerFpWithListStateBatch, callerFpWithListStateByKeyHash)];
    callerLoaders.set(db, loaders);
  }
  return loaders[withListState ? 1 : 0];
}

const callerByKeyHash = callerQuery(false, false);
const callerWithListStateByKeyHash = callerQuery(true, false);
const callerFpByKeyHash = callerQuery(false, true);
const callerFpWithListStateByKeyHash = callerQuery(true, true);

/**
 * PostgreSQL: the team's row and its tariff's as one fingerprint, computed by the server from
 * their whole text (every column, whatever columns a later migration adds): NULL when no team
 * matched. Equal fingerprints mean equal rows (to MD5's collision resistance, over rows only
 * the operator writes), so the team and tariff parsed from a row with this fingerprint are
 * those rows' current content, whichever node or connection read them.
 */
const TEAM_FINGERPRINT = sql`md5(t::text || '/' || coalesce(tariffs::text, ''))`;

const teamWithTariffAndFingerprint = preparedQuery<'id', TeamWithTariff & { team__fp: string }>((db, p) =>
  db
    .selectFrom('teams as t')
    .leftJoin('tariffs', 'tariffs.id', 't.tariff_id')
    .selectAll('t')
    .select(TARIFF_COLUMNS.map((c) => `tariffs.${c} as tariff__${c}` as const))
    .select(sql<string>`${TEAM_FINGERPRINT}`.as('team__fp'))
    .where('t.id', '=', p('id')) as any,
);

interface TeamAndTariff {
  team: TeamRow;
  tariff: TariffRow | undefined;
}

/**
 * PostgreSQL: teams and tariffs parsed before, by their fingerprint (content-addressed: an
 * entry is only ever stored under the fingerprint the server computed from the very row it
 * was parsed from, so it can never be stale; a changed team or tariff has another fingerprint
 * and misses). Per process; bounded (one entry per team and tariff content in use), cleared
 * when full. The objects are frozen: shared by every request of the team.
 */
const TEAMS_BY_FINGERPRINT_MAX = 10_000;
const teamsByFingerprint = new Map<string, TeamAndTariff>();

/** Counters of the fingerprint cache (tests, diagnostics). */
export const teamFingerprintStats = { hits: 0, misses: 0 };

async function teamByFingerprint(db: Executor, teamId: string, fingerprint: string): Promise<TeamAndTariff | undefined> {
  const cached = teamsByFingerprint.get(fingerprint);
  if (cached !== undefined) {
    teamFingerprintStats.hits++;
    return cached;
  }
  teamFingerprintStats.misses++;
  const row = (await teamWithTariffAndFingerprint(db, { id: teamId }))[0] as unknown as (Record<string, unknown> & { team__fp: string }) | undefined;
  // Deleted since the first statement (no path deletes teams today): as the first statement
  // would have answered a moment later.
  if (row === undefined) return undefined;
  const split = splitTeamRow(row);
  const entry: TeamAndTariff = { team: Object.freeze(split.team), tariff: split.tariff && Object.freeze(split.tariff) };
  if (teamsByFingerprint.size >= TEAMS_BY_FINGERPRINT_MAX) teamsByFingerprint.clear();
  // Under the fingerprint of the row it came from; if the team changed between the two
  // statements, this request uses the newer row (never an older one).
  teamsByFingerprint.set(row.team__fp, entry);
  return entry;
}

export interface CallerRow {
  key: ApiKeyRow;
  /** Active keys of the key's team with a lower id (0 for a service key). */
  rank: number;
  team: TeamRow | undefined;
  tariff: TariffRow | undefined;
  /** The team's document count and list version, when asked for and the team exists. */
  listState: TeamListState | undefined;
}

/**
 * The key by the hex SHA-256 of its secret with its rank, the team it acts for (`tenantId` for a
 * service key), the team's tariff and, with `withListState`, the team's list state: one
 * statement (on PostgreSQL outside a transaction, shared with the other lookups of this turn of
 * the event loop: `callerLoader`). Undefined when no key has that hash.
 */
export async function findCaller(db: Executor, hash: string, tenantId: string | null, withListState: boolean): Promise<CallerRow | undefined> {
  const byFingerprint = dialectOf(db) === 'postgres';
  let row: Record<string, unknown> | undefined;
  if (byFingerprint && !db.isTransaction) {
    row = await callerLoader(db, withListState).load({ hash, tenantId });
  } else {
    const query = byFingerprint
      ? withListState
        ? callerFpWithListStateByKeyHash
        : callerFpByKeyHash
      : withListState
        ? callerWithListStateByKeyHash
        : callerByKeyHash;
    callerStatementStats.statements++;
    row = (await query(db, { hash, tenantId }))[0] as Record<string, unknown> | undefined;
  }
  if (row === undefined) return undefined;
  const key = {
    id: row.key__id,
    team_id: row.key__team_id,
    kind: row.key__kind,
    name: row.key__name,
    secret_hash: row.key__secret_hash,
    active: row.key__active,
  } as ApiKeyRow satisfies Record<(typeof KEY_COLUMNS)[number], unknown>;
  let team: TeamRow | undefined;
  let tariff: TariffRow | undefined;
  if (byFingerprint) {
    // The team and tariff rows travel as their fingerprint (PostgreSQL: 10 columns to describe
    // and parse per request instead of 29); parsed once per content and process.
    const fingerprint = row.team__fp as string | null;
    const teamId = key.kind === 'service' ? tenantId : key.team_id;
    const entry = fingerprint === null || teamId === null ? undefined : await teamByFingerprint(db, teamId, fingerprint);
    team = entry?.team;
    tariff = entry?.tariff;
  } else if (row.id != null) {
    ({ team, tariff } = splitTeamRow(row));
  }
  const found = team !== undefined;
  // PostgreSQL answers sum() as numeric text and count(*) as bigint.
  const listState =
    found && withListState
      ? { documents: Number(row.list__documents ?? 0), version: Number(row.list__version ?? 0), storedBytes: Number(row.list__stored ?? 0) }
      : undefined;
  return { key, rank: Number(row.key__rank), team, tariff, listState };
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
