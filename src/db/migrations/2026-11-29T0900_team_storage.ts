import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../database.js';

/**
 * Storage per team: tariff `max_storage_mb` (default 1024) bounds the stored size of a team's
 * documents and their kept revisions (docs/security.md, "Storage per team").
 *
 * `team_document_counts.stored_bytes` is the bytes of the `document` column of the team's
 * `invoices` and `invoice_revisions` rows, kept in step by database triggers in the writing
 * transaction (as `changes` is, migration 2026-11-26T1400), so no write path, worker or CLI
 * command can forget it. The lengths are read with `octet_length`, which neither database has to
 * load the value for (PostgreSQL reads a TOASTed value's header, SQLite the record header).
 * PostgreSQL counts on the transaction's shard row `txid % 16`, SQLite on shard 0.
 *
 * What is stored before this migration is counted here once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tariffs').addColumn('max_storage_mb', 'integer', (col) => col.notNull().defaultTo(1024)).execute();
  await db.schema.alterTable('team_document_counts').addColumn('stored_bytes', 'bigint', (col) => col.notNull().defaultTo(0)).execute();
  const postgres = dialectOf(db) === 'postgres';
  await sql
    .raw(
      `INSERT INTO team_document_counts (team_id, shard, documents, changes, stored_bytes)
       SELECT team_id, 0, 0, 0, sum(n) FROM (
         SELECT team_id, octet_length(document) AS n FROM invoices
         UNION ALL SELECT team_id, octet_length(document) AS n FROM invoice_revisions) s
       GROUP BY team_id
       ON CONFLICT (team_id, shard) DO UPDATE SET stored_bytes = excluded.stored_bytes`,
    )
    .execute(db);

  if (postgres) {
    await sql`
      CREATE FUNCTION invoicing_storage_add(team varchar, n bigint) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        IF n <> 0 THEN
          INSERT INTO team_document_counts AS c (team_id, shard, documents, changes, stored_bytes)
          VALUES (team, mod(txid_current(), 16)::int, 0, 0, n)
          ON CONFLICT (team_id, shard) DO UPDATE SET stored_bytes = c.stored_bytes + n;
        END IF;
      END $$`.execute(db);
    // Inserts (a create's statement, a revision per update) are counted per statement from the
    // transition table, grouped and ordered by team as the list counters are.
    await sql`
      CREATE FUNCTION invoicing_storage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO team_document_counts AS c (team_id, shard, documents, changes, stored_bytes)
        SELECT team_id, mod(txid_current(), 16)::int, 0, 0, sum(octet_length(document)) FROM new_rows GROUP BY team_id ORDER BY team_id
        ON CONFLICT (team_id, shard) DO UPDATE SET stored_bytes = c.stored_bytes + excluded.stored_bytes;
        RETURN NULL;
      END $$`.execute(db);
    await sql`
      CREATE FUNCTION invoicing_storage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO team_document_counts AS c (team_id, shard, documents, changes, stored_bytes)
        SELECT team_id, mod(txid_current(), 16)::int, 0, 0, -sum(octet_length(document)) FROM old_rows GROUP BY team_id ORDER BY team_id
        ON CONFLICT (team_id, shard) DO UPDATE SET stored_bytes = c.stored_bytes + excluded.stored_bytes;
        RETURN NULL;
      END $$`.execute(db);
    await sql`
      CREATE FUNCTION invoicing_storage_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM invoicing_storage_add(NEW.team_id, octet_length(NEW.document)::bigint - octet_length(OLD.document)::bigint);
        RETURN NULL;
      END $$`.execute(db);
    for (const table of ['invoices', 'invoice_revisions']) {
      await sql
        .raw(
          `CREATE TRIGGER ${table}_storage_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows
           FOR EACH STATEMENT EXECUTE FUNCTION invoicing_storage_insert()`,
        )
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER ${table}_storage_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows
           FOR EACH STATEMENT EXECUTE FUNCTION invoicing_storage_delete()`,
        )
        .execute(db);
    }
    // Only an update of the document itself (a PUT), not the status moves.
    await sql`
      CREATE TRIGGER invoices_storage_update AFTER UPDATE OF document ON invoices
      FOR EACH ROW EXECUTE FUNCTION invoicing_storage_update()`.execute(db);
    return;
  }

  const add = (team: string, n: string) => `
      INSERT INTO team_document_counts (team_id, shard, documents, changes, stored_bytes) VALUES (${team}, 0, 0, 0, ${n})
        ON CONFLICT (team_id, shard) DO UPDATE SET stored_bytes = stored_bytes + (${n});`;
  for (const table of ['invoices', 'invoice_revisions']) {
    await sql.raw(`CREATE TRIGGER ${table}_storage_after_insert AFTER INSERT ON ${table} BEGIN${add('new.team_id', 'octet_length(new.document)')}
      END`).execute(db);
    await sql.raw(`CREATE TRIGGER ${table}_storage_after_delete AFTER DELETE ON ${table} BEGIN${add('old.team_id', '-octet_length(old.document)')}
      END`).execute(db);
  }
  await sql.raw(`CREATE TRIGGER invoices_storage_after_update AFTER UPDATE OF document ON invoices
    WHEN octet_length(new.document) <> octet_length(old.document) BEGIN${add('new.team_id', 'octet_length(new.document) - octet_length(old.document)')}
    END`).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
