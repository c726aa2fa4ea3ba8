import { Command, CommanderError, Help } from '@commander-js/extra-typings'
import { adminTokens, ConfigError, loadConfig, type Config } from '../config.js'
import { connectDatabase } from '../db/connect.js'
import { migrateToLatestOrThrow, prepareSchema, withSchemaConnection } from '../db/migrate.js'
import { openDatabaseLocation, type DatabaseLocation } from '../db/open.js'
import { InvalidInputError } from '../errors.js'
import { registerAdminCredentials } from '../repositories/operators.js'
import { UnknownPlanError } from '../services/plans.js'
import { accountsCommand } from './accounts.js'
import { auditCommand } from './audit.js'
import { printable, UsageError, type Cli, type WithDatabase } from './common.js'
import { keysCommand } from './keys.js'
import { operatorsCommand } from './operators.js'
import { plansCommand } from './plans.js'
import { usageCommand } from './usage.js'
import { webhooksCommand } from './webhooks.js'

/** Where the CLI runs: its two output streams, and the environment it is configured by (the process's unless given). */
export interface CliIo {
  env?: Record<string, string | undefined>
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

// Opens the database only once the arguments are known to be good: commands open it in their action.
async function openDatabase<T>(env: CliIo['env'], run: (location: DatabaseLocation, config: Config) => Promise<T>) {
  const config = loadConfig(env)
  const location = await openDatabaseLocation(config)
  try {
    return await run(location, config)
  } finally {
    await location.stop()
  }
}

// Every command but migrate changes rows only: with a current schema they need no DDL rights, like the server.
const databaseOf =
  (env: CliIo['env']): WithDatabase =>
  (run) =>
    openDatabase(env, async (location, config) => {
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

const columns = (stream: NodeJS.WritableStream) => (stream as { columns?: number }).columns ?? 100

/** Every command of the CLI, writing to `io`; parsing ends with a CommanderError rather than an exit. */
function buildProgram(io: CliIo): Command {
  const cli: Cli = {
    stdout: io.stdout,
    print: (text) => {
      io.stdout.write(`${text}\n`)
    },
    withDatabase: databaseOf(io.env)
  }
  // Subcommands made with .command() take these settings over.
  const program = new Command('npm run --silent cli --')
    .description(
      'Operate the Animal Store Service. The database is DATABASE_URL, or the embedded one when it is unset ' +
        '(also while npm start is running).'
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => {
        io.stdout.write(text)
      },
      writeErr: (text) => {
        io.stderr.write(text)
      },
      getOutHelpWidth: () => columns(io.stdout),
      getErrHelpWidth: () => columns(io.stderr),
      // One line, as every other refusal: commander's suggestion ("Did you mean …?") joins it.
      outputError: (text, write) =>
        write(
          `${printable(
            text
              .replace(/^error: /, '')
              .trim()
              .replace(/\n+/g, ' ')
          )}\n`
        )
    })
    .configureHelp({
      // A required option says so in the help, which is made from the definitions that parse.
      optionDescription(this: Help, option) {
        const text = Help.prototype.optionDescription.call(this, option)
        return option.mandatory ? `${text} (required)` : text
      }
    })
    .addHelpText('after', '\nEvery command takes --help.')

  program
    .command('migrate')
    .description(
      'Bring the database schema up to date: every pending migration. Safe while other instances start or run. ' +
        'Run it as the role that owns the schema; the service and the other commands need no such rights. With ' +
        'ADMIN_TOKEN set, also registers its SHA-256, without which the database refuses the bootstrap admin'
    )
    .action(async () => {
      const applied = await openDatabase(io.env, (location, config) =>
        withSchemaConnection(location.directUrl, config.DATABASE_TIMEOUT_MS, async (db) => {
          const migrated = await migrateToLatestOrThrow(db, {
            onRetry: (migration, attempt, reason) =>
              io.stderr.write(
                `Migration ${migration} could not take a lock (${reason}); trying again, try ${attempt + 1}\n`
              )
          })
          // The bootstrap admin's credential, which only the owner may register (migrations/0029).
          if (config.ADMIN_TOKEN) await registerAdminCredentials(db, adminTokens(config.ADMIN_TOKEN))
          return migrated.filter((result) => result.status === 'Success').map((result) => result.migrationName)
        })
      )
      cli.print(applied.length ? `Applied ${applied.join(', ')}` : 'The schema is up to date')
    })
  plansCommand(program, cli)
  accountsCommand(program, cli)
  keysCommand(program, cli)
  auditCommand(program, cli)
  operatorsCommand(program, cli)
  webhooksCommand(program, cli)
  usageCommand(program, cli)
  return program
}

/** A refusal's message; one naming a plan that is not there names those that are. */
function messageOf(error: unknown): string {
  if (error instanceof UnknownPlanError) {
    return `${error.message}; the plans are ${error.known.join(', ') || 'none'} (see plans list)`
  }
  return error instanceof Error ? error.message : String(error)
}

/**
 * Runs the CLI on `args` (what follows `cli --`) and gives its exit code: 0 done, 2 a usage error or a
 * value the service refuses, 1 any other failure. Errors are one line on stderr.
 */
export async function runCli(args: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(args, { from: 'user' })
    return 0
  } catch (error) {
    // Commander has printed its help or its one-line refusal.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2
    const usage = error instanceof UsageError || error instanceof ConfigError || error instanceof InvalidInputError
    // Escaped: a message may quote what was typed or stored, which must not drive the terminal.
    io.stderr.write(`${usage ? '' : 'Error: '}${printable(messageOf(error))}\n`)
    return usage ? 2 : 1
  }
}
