import { sql, type Kysely } from 'kysely'

/**
 * Postgres checks every second that the client of a running statement is still there, and rolls the
 * statement back if not: the create of an instance that died while it waited on a lock frees its
 * Idempotency-Key within a second, and the retry creates the pet rather than getting 409
 * (docs/reliability.md, "When an instance dies").
 */
const SETTING = "client_connection_check_interval = '1s'"

// On the database, not animal_store_app: members never get a role's settings, and whoever migrates
// (a superuser, or the owner of deploy/postgres/roles.sql) owns the database. Where the server cannot
// check (before PostgreSQL 14, or on Windows) or the migrating role does not own the database, a warning.
async function alterDatabase(db: Kysely<any>, statement: string): Promise<void> {
  await sql`
    DO $$ BEGIN
      EXECUTE format(${sql.lit(statement)}, current_database());
    EXCEPTION WHEN undefined_object OR invalid_parameter_value OR insufficient_privilege THEN
      RAISE WARNING 'client_connection_check_interval left unset: %', SQLERRM;
    END $$
  `.execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  await alterDatabase(db, `ALTER DATABASE %I SET ${SETTING}`)
}

export async function down(db: Kysely<any>): Promise<void> {
  await alterDatabase(db, 'ALTER DATABASE %I RESET client_connection_check_interval')
}
