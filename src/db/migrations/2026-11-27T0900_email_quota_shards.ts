import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * PostgreSQL: the daily e-mail quota in 16 shard rows per team and day
 * (src/modules/notifications/quota.ts). Shard 0 is the existing `email_quota` row, shards 1–15
 * are rows of the new `email_quota_shards`; each shard may hold its share of the limit.
 *
 * Why: a team's day was one row, locked from a write's reservation to its commit, so every
 * e-mail-sending write of a team waited for the one before it, on every node (a bulk run of
 * one team: 340 creates a second against 1,000–1,100 without e-mail, every connection waiting
 * on that lock; docs/performance.md "Session 8").
 *
 * Additive, so nodes of the previous release keep working during a rolling restart (they count
 * in the `email_quota` row alone, see docs/deployment.md). Existing rows hold what was used;
 * what a row holds beyond shard 0's share of the team's current limit (`tariffs.emails_per_day`,
 * 1,000 without a tariff) moves to the other shards (below), so a day's total is unchanged and
 * no shard has room that was already used.
 *
 * SQLite (one writer at a time) keeps the one row and gets no table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`CREATE TABLE email_quota_shards (
    team_id varchar(100) NOT NULL, day varchar(10) NOT NULL, shard smallint NOT NULL,
    reserved integer NOT NULL, updated_at varchar(40) NOT NULL,
    CONSTRAINT email_quota_shards_pk PRIMARY KEY (team_id, day, shard),
    CONSTRAINT email_quota_shards_shard CHECK (shard BETWEEN 1 AND 15))`.execute(db);
  // What a row holds beyond shard 0's share moves to shards 1, 2, … up to their shares (as if
  // it had been taken there); anything beyond the whole limit (a limit lowered since) stays on
  // shard 0. A day's total is unchanged. Shard k's share of limit L is L / 16 + (k < L % 16);
  // the shares of shards 1..k-1 add up to (k - 1) * (L / 16) + least(k - 1, greatest(L % 16 - 1, 0)).
  await sql`
    WITH moved AS (
      INSERT INTO email_quota_shards (team_id, day, shard, reserved, updated_at)
      SELECT team_id, day, k, least(share_k, excess - before_k), updated_at FROM (
        SELECT q.team_id, q.day, q.updated_at, k,
               l / 16 + (CASE WHEN k < l % 16 THEN 1 ELSE 0 END) AS share_k,
               q.reserved - (l / 16 + (CASE WHEN l % 16 > 0 THEN 1 ELSE 0 END)) AS excess,
               (k - 1) * (l / 16) + least(k - 1, greatest(l % 16 - 1, 0)) AS before_k
        FROM (SELECT q.*, greatest(coalesce(t.emails_per_day, 1000), 0) AS l
              FROM email_quota q LEFT JOIN teams ON teams.id = q.team_id LEFT JOIN tariffs t ON t.id = teams.tariff_id) q
        CROSS JOIN generate_series(1, 15) AS k
      ) spread
      WHERE excess - before_k > 0 AND share_k > 0
      RETURNING team_id, day, reserved
    )
    UPDATE email_quota q SET reserved = q.reserved - m.n
    FROM (SELECT team_id, day, sum(reserved)::int AS n FROM moved GROUP BY team_id, day) m
    WHERE q.team_id = m.team_id AND q.day = m.day`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
