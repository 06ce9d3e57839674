import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * The team's catalog version (issue 12, docs/performance.md "Per-request costs and the
 * catalog"): `teams.catalog_version` moves on with every insert, update or delete of a row of
 * the team's reference data (organizations, bank accounts, managers, signers), in the writing
 * transaction, by triggers. The team row is read on every authenticated request anyway, so a
 * node can serve its serialized catalog for (team, catalog_version, tariff's organization
 * limit) without reading the four lists, and a change made through any path (the bootstrap
 * import, the demo seed, SQL by hand) shows on the very next request on every node.
 */
const TABLES = ['organizations', 'bank_accounts', 'managers', 'signers'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('teams')
    .addColumn('catalog_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (dialectOf(db) === 'postgres') {
    await sql`
      CREATE FUNCTION bump_team_catalog_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          UPDATE teams SET catalog_version = catalog_version + 1 WHERE id = OLD.team_id;
        END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.team_id IS DISTINCT FROM OLD.team_id) THEN
          UPDATE teams SET catalog_version = catalog_version + 1 WHERE id = NEW.team_id;
        END IF;
        RETURN NULL;
      END
      $$`.execute(db);
    for (const table of TABLES) {
      await sql`CREATE TRIGGER ${sql.raw(`${table}_catalog_version`)} AFTER INSERT OR UPDATE OR DELETE ON ${sql.table(table)}
                FOR EACH ROW EXECUTE FUNCTION bump_team_catalog_version()`.execute(db);
    }
    return;
  }
  for (const table of TABLES) {
    const t = sql.table(table);
    await sql`CREATE TRIGGER ${sql.raw(`${table}_catalog_version_insert`)} AFTER INSERT ON ${t}
              BEGIN UPDATE teams SET catalog_version = catalog_version + 1 WHERE id = NEW.team_id; END`.execute(db);
    await sql`CREATE TRIGGER ${sql.raw(`${table}_catalog_version_update`)} AFTER UPDATE ON ${t}
              BEGIN UPDATE teams SET catalog_version = catalog_version + 1 WHERE id IN (OLD.team_id, NEW.team_id); END`.execute(db);
    await sql`CREATE TRIGGER ${sql.raw(`${table}_catalog_version_delete`)} AFTER DELETE ON ${t}
              BEGIN UPDATE teams SET catalog_version = catalog_version + 1 WHERE id = OLD.team_id; END`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
