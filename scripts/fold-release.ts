// Migrates a new database with the migrations of release 2d40fdd (0001..0028, read from git), then
// writes from it, with pg_dump:
//   migrations/0028_baseline.sql       its schema, which the baseline migration runs on an empty database
//   test/db/release-2d40fdd.sql        the whole database, migration rows included, for the upgrade test
// pg_dump must be of the server's major version: run it against the PostgreSQL that pg_dump belongs to.
// Usage: tsx scripts/fold-release.ts postgres://postgres@127.0.0.1:5432/postgres
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely'
import pg from 'pg'

const RELEASE = '2d40fdd'
const root = resolve(import.meta.dirname, '..')
const adminUrl = process.argv[2]
if (!adminUrl) throw new Error('Usage: tsx scripts/fold-release.ts <URL of a PostgreSQL server, as a superuser>')

const BASELINE_HEADER = `-- The schema as release ${RELEASE} left it: migrations 0001..0028, folded into one file. pg_dump of a
-- database migrated at that release, written by scripts/fold-release.ts; 0028_baseline.ts runs it on an
-- empty database. Frozen, as every migration is: today's schema is db/schema.sql.
`
const FIXTURE_HEADER = `-- A database as release ${RELEASE} left it, its migration rows included: pg_dump of a database
-- migrated at that release, written by scripts/fold-release.ts, for test/db/upgrade.test.ts.
`

/** pg_dump's text without what differs from run to run or changes the session that runs it. */
function normalise(dump: string): string {
  const kept = dump
    .split('\n')
    .filter(
      (line) =>
        !/^\\(un)?restrict /.test(line) &&
        !/^SET /.test(line) &&
        !/^SELECT pg_catalog\.set_config\('search_path'/.test(line) &&
        !/^-- (Dumped (from|by)|PostgreSQL database dump)/.test(line)
    )
    .join('\n')
  // What is left of the dump's opening and closing banners: lines of `--` alone.
  const trimmed = kept.replace(/^(?:--\n|\n)+/, '').replace(/(?:\n--|\n)+$/, '')
  return `${trimmed.replace(/\n{3,}/g, '\n\n')}\n`
}

const pgDump = (url: string, args: string[]) =>
  execFileSync('pg_dump', ['--no-owner', ...args, url], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })

const folder = await mkdtemp(join(tmpdir(), `animal-store-${RELEASE}-`))
const name = `fold_${RELEASE}_${process.pid}`
const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
try {
  execFileSync('sh', ['-c', `git archive ${RELEASE} migrations | tar -x -C ${folder}`], { cwd: root })
  await symlink(join(root, 'node_modules'), join(folder, 'node_modules'))
  const release = (await import(pathToFileURL(join(folder, 'migrations/index.ts')).href)) as {
    migrations: Record<string, Migration>
  }

  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 })
  // The drop below ends the pool's connection, perhaps before it closed.
  pool.on('error', () => {})
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
  try {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => release.migrations } })
    const { error } = await migrator.migrateToLatest()
    if (error) throw error
    // pg_dump leaves out the database's own settings (0012's): the fixture sets them again.
    const { rows } = await sql<{ setting: string }>`
      SELECT unnest(setconfig) AS setting FROM pg_db_role_setting
      WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) AND setrole = 0
      ORDER BY 1`.execute(db)
    const settings = rows.map(({ setting }) => {
      const at = setting.indexOf('=')
      return `  EXECUTE format('ALTER DATABASE %I SET ${setting.slice(0, at)} = %L', current_database(), '${setting.slice(at + 1)}');`
    })

    const schema = pgDump(url.toString(), [
      '--schema-only',
      '--exclude-table=kysely_migration',
      '--exclude-table=kysely_migration_lock'
    ])
    await writeFile(join(root, 'migrations/0028_baseline.sql'), BASELINE_HEADER + normalise(schema))

    const whole = pgDump(url.toString(), ['--inserts'])
    const role = `DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'animal_store_app') THEN
    CREATE ROLE animal_store_app NOLOGIN;
  END IF;
END $$;
`
    const databaseSettings = `DO $$ BEGIN\n${settings.join('\n')}\nEND $$;\n`
    // As pg_dump's own restore does: functions come before the tables their SQL bodies read.
    const session = 'SET check_function_bodies = false;\n'
    await writeFile(
      join(root, 'test/db/release-2d40fdd.sql'),
      `${FIXTURE_HEADER}\n${session}\n${role}\n${databaseSettings}\n${normalise(whole)}`
    )
    console.log('Wrote migrations/0028_baseline.sql and test/db/release-2d40fdd.sql')
  } finally {
    await db.destroy()
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.end()
  await rm(folder, { recursive: true, force: true })
}
