import { accounts, audit } from './cli/accounts.js'
import { parse, printable, UsageError, type WithDatabase } from './cli/common.js'
import { keys } from './cli/keys.js'
import { operators } from './cli/operators.js'
import { plans } from './cli/plans.js'
import { usage } from './cli/usage.js'
import { webhooks } from './cli/webhooks.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { connectDatabase } from './db/connect.js'
import { migrateToLatestOrThrow, prepareSchema, withSchemaConnection } from './db/migrate.js'
import type { DatabaseLocation } from './db/open.js'
import { openDatabaseLocation } from './db/open.js'

const USAGE = `Usage: npm run --silent cli -- <command> [options]

Commands:
  migrate                 Bring the database schema up to date
  plans                   List, show, make and change plans: limits and costs per route
  accounts                Make, list, show, re-plan and close accounts; set their overrides and credits
  keys                    Issue, list, revoke and rotate API keys, and change their plans and scopes
  audit                   List the audit trail of changes to accounts and keys
  operators               Make, list and revoke the admin API's operators and their roles
  webhooks                Register, change, pause, rotate and delete webhook endpoints; list their deliveries
  usage                   Export every key's usage per UTC hour or day, as CSV or JSON, to stdout

Every command takes --help. The database is DATABASE_URL, or the embedded one when it is unset
(also while npm start is running).`

const MIGRATE_USAGE = `Usage: npm run --silent cli -- migrate

Runs every pending migration. Safe while other instances start or run. Run it as the role that
owns the schema; the service and the key commands need no such rights.`

// Opens the database only once the arguments are known to be good.
async function openDatabase<T>(run: (location: DatabaseLocation, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const location = await openDatabaseLocation(config)
  try {
    return await run(location, config)
  } finally {
    await location.stop()
  }
}

// Every command but migrate changes rows only: with a current schema they need no DDL rights, like the server.
const withDatabase: WithDatabase = (run) =>
  openDatabase(async (location, config) => {
    await withSchemaConnection(location.directUrl, config.DATABASE_TIMEOUT_MS, (db) =>
      prepareSchema(db, { migrate: config.MIGRATE_ON_START })
    )
    const database = connectDatabase({ url: location.url, poolMax: 2, timeoutMs: config.DATABASE_TIMEOUT_MS })
    try {
      return await run(database.db, config)
    } finally {
      await database.close()
    }
  })

async function migrate(args: string[]) {
  const { values, positionals } = parse(args, {})
  if (values.help) {
    console.log(MIGRATE_USAGE)
    return
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`)
  const applied = await openDatabase((location, config) =>
    withSchemaConnection(location.directUrl, config.DATABASE_TIMEOUT_MS, async (db) =>
      (await migrateToLatestOrThrow(db))
        .filter((result) => result.status === 'Success')
        .map((result) => result.migrationName)
    )
  )
  console.log(applied.length ? `Applied ${applied.join(', ')}` : 'The schema is up to date')
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  migrate,
  keys: (args) => keys(args, withDatabase),
  accounts: (args) => accounts(args, withDatabase),
  plans: (args) => plans(args, withDatabase),
  audit: (args) => audit(args, withDatabase),
  operators: (args) => operators(args, withDatabase),
  webhooks: (args) => webhooks(args, withDatabase),
  usage: (args) => usage(args, withDatabase)
}

async function main(argv: string[]) {
  const [command, ...rest] = argv
  if (!command || command === '--help' || command === 'help') {
    console.log(USAGE)
    return
  }
  const run = COMMANDS[command]
  if (!run) throw new UsageError(`Unknown command '${printable(command)}'; see --help`)
  await run(rest)
}

main(process.argv.slice(2)).catch((error) => {
  const usage = error instanceof UsageError || error instanceof ConfigError
  // Escaped: a message may quote what was typed or stored, which must not drive the terminal.
  process.stderr.write(
    `${usage ? '' : 'Error: '}${printable(error instanceof Error ? error.message : String(error))}\n`
  )
  process.exitCode = usage ? 2 : 1
})
