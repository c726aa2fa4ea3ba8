import type { Kysely, MigrationResult } from 'kysely'
import { keys } from './cli/keys.js'
import { parse, UsageError, type WithDatabase } from './cli/common.js'
import { ConfigError, loadConfig } from './config.js'
import { connectDatabase } from './db/connect.js'
import { migrateToLatestOrThrow } from './db/migrate.js'
import { openDatabaseLocation } from './db/open.js'
import type { Database } from './db/schema.js'

const USAGE = `Usage: npm run --silent cli -- <command> [options]

Commands:
  migrate                 Bring the database schema up to date
  keys                    Issue, list, revoke and rotate API keys, and change their plans

Every command takes --help. The database is DATABASE_URL, or the embedded one when it is unset
(also while npm start is running).`

const MIGRATE_USAGE = `Usage: npm run --silent cli -- migrate

Runs every pending migration. Safe while other instances start or run.`

// Opens the database (migrated) only once the arguments are known to be good.
async function openMigrated<T>(run: (db: Kysely<Database>, migrations: MigrationResult[]) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const location = await openDatabaseLocation(config)
  const database = connectDatabase({ url: location.url, poolMax: 2, timeoutMs: config.DATABASE_TIMEOUT_MS })
  try {
    return await run(database.db, await migrateToLatestOrThrow(database.db))
  } finally {
    await database.close()
    await location.stop()
  }
}

const withDatabase: WithDatabase = (run) => openMigrated((db) => run(db))

async function migrate(args: string[]) {
  const { values, positionals } = parse(args, {})
  if (values.help) return void console.log(MIGRATE_USAGE)
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`)
  const applied = await openMigrated(async (_db, results) =>
    results.filter((result) => result.status === 'Success').map((result) => result.migrationName)
  )
  console.log(applied.length ? `Applied ${applied.join(', ')}` : 'The schema is up to date')
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  migrate,
  keys: (args) => keys(args, withDatabase)
}

async function main(argv: string[]) {
  const [command, ...rest] = argv
  if (!command || command === '--help' || command === 'help') return void console.log(USAGE)
  const run = COMMANDS[command]
  if (!run) throw new UsageError(`Unknown command '${command}'; see --help`)
  await run(rest)
}

main(process.argv.slice(2)).catch((error) => {
  const usage = error instanceof UsageError || error instanceof ConfigError
  process.stderr.write(`${usage ? '' : 'Error: '}${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = usage ? 2 : 1
})
