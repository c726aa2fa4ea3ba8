import { userInfo } from 'node:os'
import { Argument, Option } from '@commander-js/extra-typings'
import type { Kysely } from 'kysely'
import { stringify } from 'lossless-json'
import type { Config } from '../config.js'
import type { Database } from '../db/schema.js'
import { parseJsonBody } from '../json.js'
import { MAX_LIMIT, type LimitInput } from '../services/plans.js'
import type { Actor } from '../services/rules.js'

/** A problem with how the CLI was called: printed as one line, exit code 2. */
export class UsageError extends Error {}

export type Db = Kysely<Database>

/** Runs `run` on the database; the configuration is there for what depends on it (where webhooks may go). */
export type WithDatabase = <T>(run: (db: Db, config: Config) => Promise<T>) => Promise<T>

/** What a command needs of the world: where it prints, and the database. */
export interface Cli {
  /** Standard output as a stream, for what is written as it is read (usage export). */
  stdout: NodeJS.WritableStream
  /** Writes `text` and a newline to standard output. */
  print(text: string): void
  withDatabase: WithDatabase
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

/** Rows as columns, every cell escaped. */
export function table(rows: string[][]): string {
  const cells = rows.map((row) => row.map(printable))
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  return cells
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()
    )
    .join('\n')
}

/** JSON with BigInts (ids) written as exact integers, every digit kept. */
export function toJson(value: unknown): string {
  return stringify(value) ?? 'null'
}

/** `--json`, which every command that prints a record takes. */
export const jsonOption = (what = 'print one JSON object') => new Option('--json', what)

/** An option whose value is a whole number from `min` to `max`. */
export function numberOption<const F extends string>(flags: F, description: string, min: number, max: number) {
  const option = new Option(flags, description)
  return option.argParser((value: string) => {
    if (!/^[0-9]{1,16}$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new UsageError(`${option.long} must be a whole number from ${min} to ${max}, not '${printable(value)}'`)
    }
    return Number(value)
  })
}

/** `--grace-seconds N`; how long a grace may be is the service's rule. */
export const graceOption = (description: string) => {
  const option = new Option('--grace-seconds <seconds>', description)
  return option.argParser((value: string) => {
    if (!/^[0-9]{1,7}$/.test(value)) {
      throw new UsageError(`--grace-seconds must be a whole number of seconds, not '${printable(value)}'`)
    }
    return Number(value)
  })
}

/** An option whose value is one of `allowed`, listed in the help. */
export function choiceOption<const F extends string, const T extends string>(
  flags: F,
  description: string,
  allowed: readonly T[]
) {
  const option = new Option(flags, description).choices(allowed)
  return option.argParser((value: string) => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new UsageError(`${option.long} must be one of ${allowed.join(', ')}, not '${printable(value)}'`)
    }
    return value as T
  })
}

/** An option given once per item: its values in the order given. */
export function repeatedOption<const F extends string, T>(flags: F, description: string, parse: (text: string) => T) {
  return new Option(flags, description).argParser((value: string, previous: T[] | undefined) => [
    ...(previous ?? []),
    parse(value)
  ])
}

/** A comma-separated list, each item trimmed. */
export const listOption = <const F extends string>(flags: F, description: string) =>
  new Option(flags, description).argParser((value: string) => value.split(',').map((item) => item.trim()))

/** --metadata as parsed JSON, read as a request body is (integers exact); what it may hold is the service's rule. */
export const metadataOption = (description: string) =>
  new Option('--metadata <json>', description).argParser((value: string): unknown => {
    try {
      return parseJsonBody(value)
    } catch {
      throw new UsageError(`--metadata must be a JSON object, not '${printable(value)}'`)
    }
  })

/** A plan's name; whether a plan has it is the service's check, against the plans table. */
export const planOption = (description = "a plan's name (`plans list` shows them)") =>
  new Option('--plan <name>', description)

/** --per-minute and --per-day: an account's own limits in place of its plan's. */
export const perMinuteOption = () =>
  numberOption('--per-minute <n>', "the account's own minute limit, in place of its plan's", 1, MAX_LIMIT)
export const perDayOption = () =>
  numberOption('--per-day <n>', "the account's own day limit, in place of its plan's", 1, MAX_LIMIT)

/** --per-minute and --per-day as the account's only overrides. */
export const shorthandOverrides = (limits: { perMinute?: number; perDay?: number }) => [
  ...(limits.perMinute === undefined ? [] : [{ window: 'minute', limit: limits.perMinute }]),
  ...(limits.perDay === undefined ? [] : [{ window: 'day', limit: limits.perDay }])
]

export const daysOption = (description: string) => numberOption('--days <n>', description, 1, 400)

/** A record's id: a positive whole number. */
export function parseId(what: string, value: string): bigint {
  if (!/^[1-9][0-9]{0,18}$/.test(value)) {
    throw new UsageError(`${what} ID must be a positive whole number, not '${printable(value)}'`)
  }
  return BigInt(value)
}

/** A positional id of a key, an endpoint, an operator or an event. */
export const idArgument = <const U extends string>(usage: U, what: string) =>
  new Argument(usage, `the ${what}'s id`).argParser((value: string) => parseId(what, value))

const LIMIT = /^([a-z]+)=([0-9]{1,10})(?::(fixed|bucket)(?::([0-9]{1,10}))?|:(account))?(:shadow)?$/

/**
 * `minute=60`, `minute=60:bucket`, `minute=60:bucket:120`, `month=1000:account` (a month from the
 * account's cycleAnchor), each with `:shadow` after it for a limit that counts and never refuses, as
 * a limit; the service checks the rest.
 */
export function parseLimit(text: string): LimitInput {
  const match = LIMIT.exec(text)
  if (!match) {
    throw new UsageError(
      `--limit must read WINDOW=N[:bucket[:BURST]][:shadow] or month=N:account[:shadow], as minute=60:bucket:120, not '${printable(text)}'`
    )
  }
  const [, window, limit, algorithm, burst, anchor, shadow] = match
  return {
    window: window!,
    limit: Number(limit),
    ...(algorithm === undefined ? {} : { algorithm }),
    ...(burst === undefined ? {} : { burst: Number(burst) }),
    ...(anchor === undefined ? {} : { anchor }),
    ...(shadow === undefined ? {} : { shadow: true })
  }
}
