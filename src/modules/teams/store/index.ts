/**
 * The storage of authentication: the caller of a request (key, rank, team, tariff and, when asked,
 * the team's list state) in one statement, and the team with its tariff for a signed link. How
 * the caller is read is each database's (store/sqlite.ts: one statement per lookup, kept by the
 * service while the data version holds; store/postgres.ts: the lookups of one turn of the event
 * loop batched, the team and tariff as a fingerprint); what it answers is the same.
 */
import type { TeamListState } from '../../../db/document-counts.js';
import type { Executor } from '../../../db/database.js';
import type { ApiKeyRow, TariffRow, TeamRow } from '../../../db/types.js';

export interface CallerRow {
  key: ApiKeyRow;
  /** Active keys of the key's team with a lower id (0 for a service key). */
  rank: number;
  team: TeamRow | undefined;
  tariff: TariffRow | undefined;
  /** The team's document count and list version, when asked for and the team exists. */
  listState: TeamListState | undefined;
}

export interface TeamAndTariff {
  team: TeamRow | undefined;
  tariff: TariffRow | undefined;
}

export interface TeamStore {
  /**
   * The key by the hex SHA-256 of its secret with its rank, the team it acts for (`tenantId` for a
   * service key), the team's tariff and, with `withListState`, the team's list state: what one
   * statement read after the call began. Undefined when no key has that hash.
   */
  findCaller(db: Executor, hash: string, tenantId: string | null, withListState: boolean): Promise<CallerRow | undefined>;
  /** The team and its tariff in one query (the portal's signed links, which carry no key). */
  findTeamAndTariff(db: Executor, teamId: string): Promise<TeamAndTariff>;
}
