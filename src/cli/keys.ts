import type { PlanName } from '../db/schema.js'
import { ApiKeyError, PLAN_NAMES, type ApiKeyRecord, type IssuedApiKey } from '../repositories/api-keys.js'
import { changeKey, createKey, describeKey, keyUsage, listKeys, revokeKey, rotateKey } from '../services/api-keys.js'
import { parse, UsageError, type WithDatabase } from './common.js'

const USAGE = {
  keys: `Usage: npm run --silent cli -- keys <create|list|revoke|rotate|set-plan|usage> [options]

  create --plan PLAN [--name N] [--per-minute N --per-day N] [--expires-at ISO] [--json]
  list [--json]
  revoke ID
  rotate ID [--json]
  set-plan ID --plan PLAN [--per-minute N --per-day N] [--json]
  usage ID [--days N] [--json]

Plans: free (60/minute, 1,000/day), pro (300, 10,000), business (1,000, 100,000),
enterprise (its own --per-minute and --per-day).`,
  create: `Usage: npm run --silent cli -- keys create --plan PLAN [options]

Issues a key and prints its secret once; only its SHA-256 hash is stored.
  --plan PLAN        free, pro, business or enterprise (required)
  --name NAME        a label for the key
  --per-minute N     enterprise only, with --per-day: the key's own limits
  --per-day N
  --expires-at ISO   the key stops working at this instant
  --json             print one JSON object: id, key, prefix, name, plan, perMinute, perDay, ...`,
  list: `Usage: npm run --silent cli -- keys list [--json]

Lists every key with its plan, limits and state. Secrets are never shown.`,
  revoke: `Usage: npm run --silent cli -- keys revoke ID

Revokes the key; every instance refuses it within a second.`,
  rotate: `Usage: npm run --silent cli -- keys rotate ID [--json]

Gives the key a new secret, printed once; the old secret stops working at once.
The key keeps its id, plan and counted usage.`,
  'set-plan': `Usage: npm run --silent cli -- keys set-plan ID --plan PLAN [--per-minute N --per-day N] [--json]

Moves the key to another plan; enterprise keys need --per-minute and --per-day.`,
  usage: `Usage: npm run --silent cli -- keys usage ID [--days N] [--json]

Requests admitted and refused on each of the last N UTC days (default 30, at most 400), today first.
Today's figures may lag by what an instance admitted from its current lease and has not yet
reported: at most a lease per instance, reported within about 5 seconds.
  --json             print one JSON object: {"days":[{"date","admitted","refused"},...]}`
}

const LIMIT_OPTIONS = { 'per-minute': { type: 'string' }, 'per-day': { type: 'string' } } as const

function positiveInteger(name: string, value: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw new UsageError(`--${name} must be a whole number from 1 to 2147483647, not '${value}'`)
  }
  return Number(value)
}

function planOption(value: string | undefined): PlanName {
  if (value === undefined) throw new UsageError('--plan is required: free, pro, business or enterprise')
  if (!PLAN_NAMES.includes(value as PlanName)) {
    throw new UsageError(`--plan must be free, pro, business or enterprise, not '${value}'`)
  }
  return value as PlanName
}

/** --per-minute and --per-day as numbers; which plans may have them is the service's rule. */
function limitsOption(values: { 'per-minute'?: string; 'per-day'?: string }) {
  const parsed = (name: 'per-minute' | 'per-day') => {
    const value = values[name]
    return value === undefined ? undefined : positiveInteger(name, value)
  }
  return { perMinute: parsed('per-minute'), perDay: parsed('per-day') }
}

function idArgument(positionals: string[], usage: string): bigint {
  if (positionals.length !== 1) throw new UsageError(`expected one key ID; ${usage.split('\n')[0]}`)
  const id = positionals[0]!
  if (!/^[1-9][0-9]{0,18}$/.test(id)) throw new UsageError(`key ID must be a positive whole number, not '${id}'`)
  return BigInt(id)
}

function toJson(record: ApiKeyRecord | IssuedApiKey) {
  // JSON.stringify writes no BigInt; key ids stay far below 2^53.
  const { id, ...fields } = describeKey(record)
  return { id: Number(id), ...('key' in record ? { key: record.key } : {}), ...fields }
}

const describePlan = (record: ApiKeyRecord) => `${record.plan} plan: ${record.perMinute}/minute, ${record.perDay}/day`

function printIssued(record: IssuedApiKey, json: boolean, verb: string) {
  if (json) {
    console.log(JSON.stringify(toJson(record)))
    return
  }
  console.log(`${verb} key ${record.id} (${describePlan(record)})${record.name ? `, named "${record.name}"` : ''}`)
  console.log('Secret, shown only this once; store it now:')
  console.log(record.key)
}

function state(record: ApiKeyRecord, now: Date): string {
  if (record.revokedAt) return 'revoked'
  if (record.expiresAt && record.expiresAt <= now) return 'expired'
  return 'active'
}

function expiresAtOption(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const expiresAt = new Date(value)
  if (Number.isNaN(expiresAt.getTime())) {
    throw new UsageError(`--expires-at must be an ISO 8601 date-time, not '${value}'`)
  }
  return expiresAt
}

function noPositionals(positionals: string[]) {
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`)
}

function daysOption(value: string | undefined): number {
  if (value === undefined) return 30
  const days = Number(value)
  if (!/^[1-9][0-9]{0,2}$/.test(value) || days > 400) {
    throw new UsageError(`--days must be a whole number from 1 to 400, not '${value}'`)
  }
  return days
}

type Options = NonNullable<Parameters<typeof parse>[1]>

interface Subcommand {
  /** Parses its arguments, then runs. */
  run(args: string[], withDatabase: WithDatabase): Promise<void>
  usage: string
}

/** A subcommand with its options; --help prints its usage. */
function subcommand<O extends Options>(
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

const subcommands: Record<string, Subcommand> = {
  create: subcommand(
    USAGE.create,
    {
      plan: { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean' },
      ...LIMIT_OPTIONS
    },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      const plan = planOption(values.plan)
      const limits = limitsOption(values)
      const expiresAt = expiresAtOption(values['expires-at'])
      const issued = await withDatabase((db) => createKey(db, { plan, name: values.name, expiresAt, ...limits }))
      printIssued(issued, values.json === true, 'Created')
    }
  ),

  list: subcommand(USAGE.list, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    noPositionals(positionals)
    const { keys } = await withDatabase((db) => listKeys(db))
    if (values.json) {
      console.log(JSON.stringify(keys.map(toJson)))
      return
    }
    const now = new Date()
    printTable([
      ['ID', 'PREFIX', 'PLAN', 'PER_MINUTE', 'PER_DAY', 'STATE', 'EXPIRES', 'NAME'],
      ...keys.map((key) => [
        String(key.id),
        key.prefix,
        key.plan,
        String(key.perMinute),
        String(key.perDay),
        state(key, now),
        key.expiresAt?.toISOString() ?? '-',
        key.name ?? ''
      ])
    ])
  }),

  revoke: subcommand(USAGE.revoke, {}, async (_values, positionals, withDatabase) => {
    const id = idArgument(positionals, USAGE.revoke)
    const record = await withDatabase((db) => revokeKey(db, id))
    console.log(`Revoked key ${record.id} (${record.prefix})`)
  }),

  rotate: subcommand(USAGE.rotate, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    const id = idArgument(positionals, USAGE.rotate)
    printIssued(await withDatabase((db) => rotateKey(db, id)), values.json === true, 'Rotated')
  }),

  'set-plan': subcommand(
    USAGE['set-plan'],
    { plan: { type: 'string' }, json: { type: 'boolean' }, ...LIMIT_OPTIONS },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE['set-plan'])
      const plan = planOption(values.plan)
      const limits = limitsOption(values)
      // set-plan sets the plan and its limits whole, even from one enterprise key's limits to others.
      if (plan === 'enterprise' && (limits.perMinute === undefined || limits.perDay === undefined)) {
        throw new UsageError('an enterprise key needs both --per-minute and --per-day')
      }
      const record = await withDatabase((db) => changeKey(db, id, { plan, ...limits }))
      if (values.json) console.log(JSON.stringify(toJson(record)))
      else console.log(`Key ${record.id} is now on the ${describePlan(record)}`)
    }
  ),

  usage: subcommand(
    USAGE.usage,
    { days: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE.usage)
      const days = daysOption(values.days)
      const usage = await withDatabase((db) => keyUsage(db, id, days, Date.now()))
      if (values.json) console.log(JSON.stringify({ days: usage }))
      else {
        printTable([
          ['DATE', 'ADMITTED', 'REFUSED'],
          ...usage.map((day) => [day.date, String(day.admitted), String(day.refused)])
        ])
      }
    }
  )
}

function printTable(rows: string[][]) {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  for (const row of rows) {
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()
    )
  }
}

export async function keys(args: string[], withDatabase: WithDatabase) {
  const [name, ...rest] = args
  if (!name || name === '--help' || name === 'help') {
    console.log(USAGE.keys)
    return
  }
  const subcommand = subcommands[name]
  if (!subcommand) throw new UsageError(`Unknown keys command '${name}'; see keys --help`)
  try {
    await subcommand.run(rest, withDatabase)
  } catch (error) {
    if (error instanceof ApiKeyError) throw new UsageError(error.message)
    throw error
  }
}
