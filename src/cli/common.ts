import { userInfo } from 'node:os'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Kysely } from 'kysely'
import { stringify } from 'lossless-json'
import type { Config } from '../config.js'
import type { Database, PlanName } from '../db/schema.js'
import { parseJsonBody } from '../json.js'
import { ApiKeyError } from '../repositories/api-keys.js'
import type { Actor } from '../services/rules.js'

/** A problem with how the CLI was called: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** Runs `run` on the database; the configuration is there for what depends on it (where webhooks may go). */
export type WithDatabase = <T>(run: (db: Kysely<Database>, config: Config) => Promise<T>) => Promise<T>

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean' } }, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(printable((error as Error).message.split('\n')[0]!))
  }
}

/** Who runs the CLI, for the audit trail: `cli:<OS user>`. */
export function cliActor(): Actor {
  let user: string
  try {
    user = userInfo().username
  } catch {
    // A container user with no passwd entry has a uid only.
    user = `uid ${process.getuid?.() ?? 'unknown'}`
  }
  return { actor: `cli:${user}`.slice(0, 255), requestId: null }
}

// C0 and C1 controls, bidirectional overrides and isolates, and lone surrogates.
const UNPRINTABLE =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Text as the terminal should show it: whatever could move the cursor or reorder the line is escaped. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => `\\u{${character.charCodeAt(0).toString(16).padStart(4, '0')}}`)
}

/** Prints rows as columns, every cell escaped. */
export function printTable(rows: string[][]) {
  const cells = rows.map((row) => row.map(printable))
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  for (const row of cells) {
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()
    )
  }
}

function positiveInteger(name: string, value: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw new UsageError(`--${name} must be a whole number from 1 to 2147483647, not '${value}'`)
  }
  return Number(value)
}

/** A plan's name; whether a plan has it is the service's check (`plans list` names them). */
export function planOption(value: string | undefined): PlanName {
  if (value === undefined) throw new UsageError('--plan is required: the name of a plan (see `plans list`)')
  return value
}

export const LIMIT_OPTIONS = { 'per-minute': { type: 'string' }, 'per-day': { type: 'string' } } as const

/** --per-minute and --per-day as numbers; which plans may have them is the service's rule. */
export function limitsOption(values: { 'per-minute'?: string; 'per-day'?: string }) {
  const parsed = (name: 'per-minute' | 'per-day') => {
    const value = values[name]
    return value === undefined ? undefined : positiveInteger(name, value)
  }
  return { perMinute: parsed('per-minute'), perDay: parsed('per-day') }
}

/** --metadata as parsed JSON, read as a request body is (integers exact); what it may hold is the service's rule. */
export function metadataOption(value: string | undefined): unknown {
  if (value === undefined) return undefined
  try {
    return parseJsonBody(value)
  } catch {
    throw new UsageError(`--metadata must be a JSON object, not '${printable(value)}'`)
  }
}

/** The one positional ID a command takes. */
export function idArgument(positionals: string[], usage: string, what = 'key'): bigint {
  if (positionals.length !== 1) throw new UsageError(`expected one ${what} ID; ${usage.split('\n')[0]}`)
  const id = positionals[0]!
  if (!/^[1-9][0-9]{0,18}$/.test(id)) {
    throw new UsageError(`${what} ID must be a positive whole number, not '${printable(id)}'`)
  }
  return BigInt(id)
}

export function noPositionals(positionals: string[]) {
  if (positionals.length) throw new UsageError(`unexpected argument '${printable(positionals[0]!)}'`)
}

export function daysOption(value: string | undefined): number {
  if (value === undefined) return 30
  const days = Number(value)
  if (!/^[1-9][0-9]{0,2}$/.test(value) || days > 400) {
    throw new UsageError(`--days must be a whole number from 1 to 400, not '${printable(value)}'`)
  }
  return days
}

/** JSON with BigInts (ids) written as exact integers, every digit kept. */
export function toJson(value: unknown): string {
  return stringify(value) ?? 'null'
}

type Options = NonNullable<Parameters<typeof parse>[1]>

export interface Subcommand {
  /** Parses its arguments, then runs. */
  run(args: string[], withDatabase: WithDatabase): Promise<void>
  usage: string
}

/** A subcommand with its options; --help prints its usage. */
export function subcommand<O extends Options>(
  usage: string,
  options: O,
  run: (
    values: ReturnType<typeof parse<O>>['values'],
    positionals: string[],
    withDatabase: WithDatabase
  ) => Promise<void>
): Subcommand {
  return {
    usage,
    async run(args, withDatabase) {
      const { values, positionals } = parse(args, options)
      if ((values as { help?: boolean }).help) console.log(usage)
      else await run(values, positionals, withDatabase)
    }
  }
}

/** Runs `args` as one of `subcommands`; the service's refusals of a value are usage errors. */
export async function dispatch(
  group: string,
  usage: string,
  subcommands: Record<string, Subcommand>,
  args: string[],
  withDatabase: WithDatabase
) {
  const [name, ...rest] = args
  if (!name || name === '--help' || name === 'help') {
    console.log(usage)
    return
  }
  const found = subcommands[name]
  if (!found) throw new UsageError(`Unknown ${group} command '${printable(name)}'; see ${group} --help`)
  try {
    await found.run(rest, withDatabase)
  } catch (error) {
    if (error instanceof ApiKeyError) throw new UsageError(error.message)
    throw error
  }
}
