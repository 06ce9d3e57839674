/**
 * SQLite: each lookup is its own statement (microseconds on the reading connection); the service
 * keeps its answer while the database's data version holds (auth.service.ts, CallerCache).
 */
import type { TeamStore } from './index.js';
import { callerFromRow, callerQuery, callerStatementStats, findTeamAndTariff, splitTeamRow, teamRowColumns } from './portable.js';

const callerByKeyHash = callerQuery(false, teamRowColumns);
const callerWithListStateByKeyHash = callerQuery(true, teamRowColumns);

export function createSqliteTeamStore(): TeamStore {
  return {
    findTeamAndTariff,
    async findCaller(db, hash, tenantId, withListState) {
      callerStatementStats.statements++;
      const query = withListState ? callerWithListStateByKeyHash : callerByKeyHash;
      const row = (await query(db, { hash, tenantId }))[0] as Record<string, unknown> | undefined;
      if (row === undefined) return undefined;
      const found = row.id != null ? splitTeamRow(row) : { team: undefined, tariff: undefined };
      return callerFromRow(row, found, withListState);
    },
  };
}
