/**
 * The tables of the notifications module: the daily e-mail quota. Conventions: src/db/types.ts.
 */
/** E-mails let through the gate per team and UTC day (`YYYY-MM-DD`). */
export interface EmailQuotaTable {
  team_id: string;
  day: string;
  reserved: number;
  updated_at: string;
}

/** PostgreSQL: shards 1–15 of a team's day; shard 0 is the `email_quota` row (quota.ts). */
export interface EmailQuotaShardsTable {
  team_id: string;
  day: string;
  shard: number;
  reserved: number;
  updated_at: string;
}

export interface NotificationsTables {
  email_quota: EmailQuotaTable;
  email_quota_shards: EmailQuotaShardsTable;
}
