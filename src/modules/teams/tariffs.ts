/**
 * Tariffs: the limits a team works under. A team without a tariff (tariff_id null) gets
 * DEFAULT_TARIFF, which is deliberately generous so a fresh install or a team bootstrapped
 * without one is never throttled by accident. These are plain domain types, not a wire shape:
 * the bootstrap file's (partial) tariff has its own schema in `bootstrap.schemas.ts`.
 */
import type { Insertable } from 'kysely';
import type { TariffRow, TariffsTable } from '../../db/types.js';

/** Requests allowed per window; every value is a non-negative integer. */
export interface RateLimits {
  per_sec: number;
  per_min: number;
  per_day: number;
}

export interface Tariff {
  id: string;
  /** Active organizations beyond this many (in bootstrap order) are refused as sellers. */
  max_organizations: number;
  /** Active keys beyond this many (ordered by id) are refused with `api_key_over_tariff_limit`. */
  max_api_keys: number;
  key_rate: RateLimits;
  team_rate: RateLimits;
  emails_per_day: number;
  /** Whether share links may be opened by people outside the team. */
  external_share: boolean;
  /** Webhook endpoints the team may have; creating one more is refused (403 webhook_endpoints_over_tariff_limit). */
  max_webhook_endpoints: number;
  /** The stored size of the team's documents and kept revisions; a write past it is refused (403 storage_over_tariff_limit). */
  max_storage_mb: number;
}

export const DEFAULT_TARIFF_ID = 'default';

export const DEFAULT_TARIFF: Readonly<Tariff> = Object.freeze({
  id: DEFAULT_TARIFF_ID,
  max_organizations: 1000,
  max_api_keys: 100,
  key_rate: Object.freeze({ per_sec: 50, per_min: 3000, per_day: 1_000_000 }),
  team_rate: Object.freeze({ per_sec: 100, per_min: 6000, per_day: 2_000_000 }),
  emails_per_day: 1000,
  external_share: true,
  max_webhook_endpoints: 5,
  max_storage_mb: 1024,
});

/** The tariff a team works under: its row, or the built-in default when it has none. */
export function tariffFromRow(row: TariffRow | undefined): Tariff {
  if (!row) return { ...DEFAULT_TARIFF, key_rate: { ...DEFAULT_TARIFF.key_rate }, team_rate: { ...DEFAULT_TARIFF.team_rate } };
  return {
    id: row.id,
    max_organizations: row.max_organizations,
    max_api_keys: row.max_api_keys,
    key_rate: { per_sec: row.key_per_sec, per_min: row.key_per_min, per_day: row.key_per_day },
    team_rate: { per_sec: row.team_per_sec, per_min: row.team_per_min, per_day: row.team_per_day },
    emails_per_day: row.emails_per_day,
    external_share: row.external_share === 1,
    max_webhook_endpoints: row.max_webhook_endpoints,
    max_storage_mb: row.max_storage_mb,
  };
}

/** The row that stores `tariff`, flattened the way the `tariffs` table keeps it. */
export function tariffToRow(tariff: Tariff, updatedAt: string): Insertable<TariffsTable> {
  return {
    id: tariff.id,
    max_organizations: tariff.max_organizations,
    max_api_keys: tariff.max_api_keys,
    key_per_sec: tariff.key_rate.per_sec,
    key_per_min: tariff.key_rate.per_min,
    key_per_day: tariff.key_rate.per_day,
    team_per_sec: tariff.team_rate.per_sec,
    team_per_min: tariff.team_rate.per_min,
    team_per_day: tariff.team_rate.per_day,
    emails_per_day: tariff.emails_per_day,
    external_share: tariff.external_share ? 1 : 0,
    max_webhook_endpoints: tariff.max_webhook_endpoints,
    max_storage_mb: tariff.max_storage_mb,
    updated_at: updatedAt,
  };
}
