import { readFile } from 'node:fs/promises'
import { sql, type Kysely } from 'kysely'

// The group role of the service and of the CLI's key commands (docs/security.md): rights on the rows
// they use and no DDL. Login roles become its members; the schema owner keeps every other right.
const SERVICE_ROLE = 'animal_store_app'

/** pg_dump of a database migrated at release 2d40fdd, without the migration tables (scripts/fold-release.ts). */
const SCHEMA_FILE = new URL('./0028_baseline.sql', import.meta.url)

/**
 * The schema as release 2d40fdd left it, in one step, for an empty database: migrations 0001..0028
 * folded. 0028_baseline.sql holds every table, view, function and grant they made; what a dump of
 * the schema leaves out is made here: the service's role, the database's own setting, the migration
 * table's grant and the rows those migrations seeded. A database that ran 0001..0028 has them
 * recorded and is never offered this one (index.ts).
 */
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

  // Postgres checks every second that the client of a running statement is still there, and rolls the
  // statement back if not (docs/reliability.md, "When an instance dies"). On the database, since members
  // never get a role's settings; a warning where the server cannot check or the migrating role does not
  // own the database.
  await sql`
    DO $$ BEGIN
      EXECUTE format('ALTER DATABASE %I SET client_connection_check_interval = ''1s''', current_database());
    EXCEPTION WHEN undefined_object OR invalid_parameter_value OR insufficient_privilege THEN
      RAISE WARNING 'client_connection_check_interval left unset: %', SQLERRM;
    END $$
  `.execute(db)

  // The dump creates functions before the tables their SQL bodies read, as pg_dump's own restore does;
  // the check is off for this transaction only.
  await sql`SELECT set_config('check_function_bodies', 'off', true)`.execute(db)
  await sql.raw(await readFile(SCHEMA_FILE, 'utf8')).execute(db)
  await sql`SELECT set_config('check_function_bodies', 'on', true)`.execute(db)

  // Start-up checks that the schema is current.
  await sql`GRANT SELECT ON kysely_migration TO ${sql.id(SERVICE_ROLE)}`.execute(db)

  // The plans the migrations seeded, with their limits; the retention floor of the audit trail.
  await sql`INSERT INTO plans (name) VALUES ('free'), ('pro'), ('business'), ('enterprise')`.execute(db)
  await sql`
    INSERT INTO plan_limits (plan, "window", "limit") VALUES
      ('free', 'minute', 60), ('free', 'day', 1000),
      ('pro', 'minute', 300), ('pro', 'day', 10000),
      ('business', 'minute', 1000), ('business', 'day', 100000),
      ('enterprise', 'minute', 1000), ('enterprise', 'day', 100000)
  `.execute(db)
  await sql`INSERT INTO audit_retention (days) VALUES (400)`.execute(db)
  // Secrets the instances of one deployment share, generated once by the database itself.
  await sql`
    INSERT INTO service_secrets (name, value)
    VALUES ('cursor', decode(md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text), 'hex'))
  `.execute(db)
}

/** Makes the function `name` again as the baseline made it, for a later migration's down(). */
export async function remakeFunctionFromBaseline(db: Kysely<any>, name: string): Promise<void> {
  const text = await readFile(SCHEMA_FILE, 'utf8')
  // Each object of the dump follows a `-- Name: count_units(bigint[], ...); Type: FUNCTION; ...` line.
  const block = text
    .split(/^-- Name: /m)
    .find((part) => part.startsWith(`${name}(`) && part.includes('; Type: FUNCTION;'))
  if (!block) throw new Error(`0028_baseline.sql makes no ${name}`)
  const statement = block.slice(block.indexOf('\n--\n') + 4)
  await sql.raw(statement.replace(/^CREATE FUNCTION /m, 'CREATE OR REPLACE FUNCTION ')).execute(db)
}
