import type { Kysely } from 'kysely'
import type { Database, PlanName } from '../db/schema.js'
import {
  ApiKeyError,
  issueApiKey,
  listApiKeys,
  PLAN_NAMES,
  revokeApiKey,
  rotateApiKey,
  setApiKeyPlan,
  type ApiKeyRecord,
  type CustomLimits,
  type IssuedApiKey
} from '../repositories/api-keys.js'
import { parse, UsageError, type WithDatabase } from './common.js'

const USAGE = {
  keys: `Usage: npm run --silent cli -- keys <create|list|revoke|rotate|set-plan> [options]

  create --plan PLAN [--name N] [--per-minute N --per-day N] [--expires-at ISO] [--json]
  list [--json]
  revoke ID
  rotate ID [--json]
  set-plan ID --plan PLAN [--per-minute N --per-day N] [--json]

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

Moves the key to another plan; enterprise keys need --per-minute and --per-day.`
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

function limitsOption(plan: PlanName, values: { 'per-minute'?: string; 'per-day'?: string }): CustomLimits | undefined {
  const minute = values['per-minute']
  const day = values['per-day']
  if (plan !== 'enterprise') {
    if (minute !== undefined || day !== undefined) {
      throw new UsageError(`--per-minute and --per-day are for enterprise keys; the ${plan} plan has fixed limits`)
    }
    return undefined
  }
  if (minute === undefined || day === undefined) {
    throw new UsageError('an enterprise key needs both --per-minute and --per-day')
  }
  return { perMinute: positiveInteger('per-minute', minute), perDay: positiveInteger('per-day', day) }
}

function idArgument(positionals: string[], usage: string): bigint {
  if (positionals.length !== 1) throw new UsageError(`expected one key ID; ${usage.split('\n')[0]}`)
  const id = positionals[0]!
  if (!/^[1-9][0-9]{0,18}$/.test(id)) throw new UsageError(`key ID must be a positive whole number, not '${id}'`)
  return BigInt(id)
}

function toJson(record: ApiKeyRecord | IssuedApiKey) {
  return {
    id: Number(record.id),
    ...('key' in record ? { key: record.key } : {}),
    prefix: record.prefix,
    name: record.name,
    plan: record.plan,
    perMinute: record.perMinute,
    perDay: record.perDay,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null
  }
}

const describePlan = (record: ApiKeyRecord) =>
  `${record.plan} plan: ${record.perMinute}/minute, ${record.perDay}/day`

function printIssued(record: IssuedApiKey, json: boolean | undefined, verb: string) {
  if (json) return void console.log(JSON.stringify(toJson(record)))
  console.log(`${verb} key ${record.id} (${describePlan(record)})${record.name ? `, named "${record.name}"` : ''}`)
  console.log('Secret, shown only this once; store it now:')
  console.log(record.key)
}

function notFound(id: bigint): never {
  throw new Error(`No key with id ${id}`)
}

function state(record: ApiKeyRecord, now: Date): string {
  if (record.revokedAt) return 'revoked'
  if (record.expiresAt && record.expiresAt <= now) return 'expired'
  return 'active'
}

type Db = Kysely<Database>

const subcommands: Record<string, (args: string[], withDatabase: WithDatabase) => Promise<void>> = {
  async create(args, withDatabase) {
    const { values, positionals } = parse(args, {
      plan: { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean' },
      ...LIMIT_OPTIONS
    })
    if (values.help) return void console.log(USAGE.create)
    if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`)
    const plan = planOption(values.plan)
    const limits = limitsOption(plan, values)
    let expiresAt: Date | undefined
    if (values['expires-at'] !== undefined) {
      expiresAt = new Date(values['expires-at'])
      if (Number.isNaN(expiresAt.getTime())) {
        throw new UsageError(`--expires-at must be an ISO 8601 date-time, not '${values['expires-at']}'`)
      }
    }
    const issued = await withDatabase((db: Db) => issueApiKey(db, { plan, limits, name: values.name, expiresAt }))
    printIssued(issued, values.json, 'Created')
  },

  async list(args, withDatabase) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } })
    if (values.help) return void console.log(USAGE.list)
    if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`)
    const keys = await withDatabase(listApiKeys)
    if (values.json) return void console.log(JSON.stringify(keys.map(toJson)))
    const now = new Date()
    const rows = [
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
    ]
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
    for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd())
  },

  async revoke(args, withDatabase) {
    const { values, positionals } = parse(args, {})
    if (values.help) return void console.log(USAGE.revoke)
    const id = idArgument(positionals, USAGE.revoke)
    const record = (await withDatabase((db: Db) => revokeApiKey(db, id))) ?? notFound(id)
    console.log(`Revoked key ${record.id} (${record.prefix})`)
  },

  async rotate(args, withDatabase) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } })
    if (values.help) return void console.log(USAGE.rotate)
    const id = idArgument(positionals, USAGE.rotate)
    const issued = await withDatabase((db: Db) => rotateApiKey(db, id))
    if (!issued) throw new Error(`No active key with id ${id}`)
    printIssued(issued, values.json, 'Rotated')
  },

  async 'set-plan'(args, withDatabase) {
    const { values, positionals } = parse(args, { plan: { type: 'string' }, json: { type: 'boolean' }, ...LIMIT_OPTIONS })
    if (values.help) return void console.log(USAGE['set-plan'])
    const id = idArgument(positionals, USAGE['set-plan'])
    const plan = planOption(values.plan)
    const limits = limitsOption(plan, values)
    const record = (await withDatabase((db: Db) => setApiKeyPlan(db, id, plan, limits))) ?? notFound(id)
    if (values.json) return void console.log(JSON.stringify(toJson(record)))
    console.log(`Key ${record.id} is now on the ${describePlan(record)}`)
  }
}

export async function keys(args: string[], withDatabase: WithDatabase) {
  const [subcommand, ...rest] = args
  if (!subcommand || subcommand === '--help' || subcommand === 'help') return void console.log(USAGE.keys)
  const run = subcommands[subcommand]
  if (!run) throw new UsageError(`Unknown keys command '${subcommand}'; see keys --help`)
  try {
    await run(rest, withDatabase)
  } catch (error) {
    if (error instanceof ApiKeyError) throw new UsageError(error.message)
    throw error
  }
}
