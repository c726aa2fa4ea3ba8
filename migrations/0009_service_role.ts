import { sql, type Kysely } from 'kysely'

// The group role of the service and of the CLI's key commands (docs/security.md): rights on the rows
// they use and no DDL. Login roles become its members; the schema owner keeps every other right.
const SERVICE_ROLE = 'animal_store_app'

// What they do to each table, and no more. A later migration that adds a table grants its own.
const GRANTS: [table: string, privileges: string][] = [
  ['pets', 'SELECT, INSERT'],
  ['service_secrets', 'SELECT'],
  ['plans', 'SELECT'],
  ['api_keys', 'SELECT, INSERT, UPDATE'],
  ['rate_limit_counters', 'SELECT, INSERT, UPDATE, DELETE'],
  ['idempotency_keys', 'SELECT, INSERT, UPDATE, DELETE'],
  ['api_key_usage', 'SELECT, INSERT, UPDATE, DELETE'],
  // Start-up checks that the schema is current.
  ['kysely_migration', 'SELECT']
]

export async function up(db: Kysely<any>): Promise<void> {
  // Roles belong to the whole cluster. Made here only when missing, which needs CREATEROLE:
  // deploy/postgres/roles.sql makes it beforehand, so the owner needs no such right.
  await sql`
    DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ${sql.lit(SERVICE_ROLE)}) THEN
        BEGIN
          CREATE ROLE ${sql.id(SERVICE_ROLE)} NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
          NULL; -- made at the same moment by a migration of another database
        END;
      END IF;
    END $$
  `.execute(db)
  for (const [table, privileges] of GRANTS) {
    await sql`GRANT ${sql.raw(privileges)} ON ${sql.table(table)} TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table] of GRANTS) {
    await sql`REVOKE ALL ON ${sql.table(table)} FROM ${sql.id(SERVICE_ROLE)}`.execute(db)
  }
}
