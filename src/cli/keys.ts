import { SCOPES, type ApiKeyDetails, type IssuedApiKey } from '../repositories/api-keys.js'
import { changeKey, createKey, describeKey, keyUsage, listKeys, revokeKey, rotateKey } from '../services/api-keys.js'
import {
  cliActor,
  daysOption,
  dispatch,
  idArgument,
  LIMIT_OPTIONS,
  limitsOption,
  metadataOption,
  noPositionals,
  planOption,
  printable,
  printTable,
  subcommand,
  toJson,
  UsageError,
  type Subcommand,
  type WithDatabase
} from './common.js'

const USAGE = {
  keys: `Usage: npm run --silent cli -- keys <create|list|revoke|rotate|set-plan|set-scopes|set-addresses|set-metadata|usage> [options]

  create (--plan PLAN [--per-minute N --per-day N] | --account-id ID | --external-id EXT)
         [--name N] [--scopes S,...] [--allowed-addresses CIDR,...] [--metadata JSON]
         [--expires-at ISO] [--json]
  list [--json]
  revoke ID
  rotate ID [--grace-seconds N] [--json]
  set-plan ID --plan PLAN [--per-minute N] [--per-day N] [--json]
  set-scopes ID --scopes S,... [--json]
  set-addresses ID (--allowed-addresses CIDR,... | --any) [--json]
  set-metadata ID --metadata JSON [--json]
  usage ID [--days N] [--json]

Plans: free (60/minute, 1,000/day), pro (300, 10,000), business (1,000, 100,000),
enterprise (its own --per-minute and --per-day). A plan belongs to the key's account: every key
of an account shares its windows. Scopes: pets:read, pets:write (both by default) and
keys:manage (the key manages its own account's keys through /v1/keys).`,
  create: `Usage: npm run --silent cli -- keys create (--plan PLAN | --account-id ID | --external-id EXT) [options]

Issues a key and prints its secret once; only its SHA-256 hash is stored.
  --account-id ID    the account, by its id: the key shares its plan and windows
  --external-id EXT  the account, by its externalId
  --account ACCOUNT  either, refused when it is one account's id and another's externalId
  --plan PLAN        without --account: free, pro, business or enterprise, for a new account
                     of the key's own
  --name NAME        a label for the key
  --per-minute N     without --account: the account's own minute limit, in place of its plan's
  --per-day N        without --account: the account's own day limit, in place of its plan's
  --scopes S,...     of pets:read, pets:write, keys:manage; default pets:read,pets:write
  --allowed-addresses CIDR,...
                     up to 20 IPv4 or IPv6 ranges (a bare address is one address) the key
                     may be used from; from anywhere else it gets 403 and spends nothing
  --metadata JSON    a JSON object of at most 2 KB kept with the key, for your own systems
  --expires-at ISO   the key stops working at this instant, which must be to come
  --json             print one JSON object: id, key, accountId, prefix, name, scopes, plan, ...`,
  list: `Usage: npm run --silent cli -- keys list [--json]

Lists every key with its account, plan, limits, scopes and state. Secrets are never shown.`,
  revoke: `Usage: npm run --silent cli -- keys revoke ID

Revokes the key; every instance refuses it within a second.`,
  rotate: `Usage: npm run --silent cli -- keys rotate ID [--grace-seconds N] [--json]

Gives the key a new secret, printed once. The key keeps its id, plan and counted usage; a revoked
key cannot be rotated.
  --grace-seconds N  the old secret keeps working N seconds more (0 to 604800, a week), on the
                     same account and windows, so clients can move over; 0 (the default): it
                     stops at once. A secret still in an earlier rotation's grace stops at once.`,
  'set-plan': `Usage: npm run --silent cli -- keys set-plan ID --plan PLAN [--per-minute N] [--per-day N] [--json]

Moves the key's account to a plan with, as its only overrides, the minute and day limits given
(none without them): every key of the account follows.`,
  'set-scopes': `Usage: npm run --silent cli -- keys set-scopes ID --scopes S,... [--json]

Sets what the key may do, one or more of: pets:read (GET /v1/pets...), pets:write (POST /v1/pets),
keys:manage (GET, POST /v1/keys and rotate and revoke its own account's keys).`,
  'set-addresses': `Usage: npm run --silent cli -- keys set-addresses ID (--allowed-addresses CIDR,... | --any) [--json]

Sets the client addresses the key may be used from: up to 20 IPv4 or IPv6 ranges (a bare address
is one address); from anywhere else it gets 403 address_not_allowed and spends nothing. --any
removes the list: any address.`,
  'set-metadata': `Usage: npm run --silent cli -- keys set-metadata ID --metadata JSON [--json]

Replaces the key's metadata with a JSON object of at most 2 KB; '{}' removes it.`,
  usage: `Usage: npm run --silent cli -- keys usage ID [--days N] [--json]

Requests admitted and refused on each of the last N UTC days (default 30, at most 400), today first.
Today's figures may lag by what an instance admitted from its current lease and has not yet
reported: at most a lease per instance, reported within about 5 seconds.
  --json             print one JSON object: {"days":[{"date","admitted","refused"},...]}`
}

/** A comma-separated list, each item trimmed. */
function listOption(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((item) => item.trim())
}

function graceOption(value: string | undefined): number {
  if (value === undefined) return 0
  if (!/^[0-9]+$/.test(value)) {
    throw new UsageError(`--grace-seconds must be a whole number of seconds, not '${printable(value)}'`)
  }
  return Number(value)
}

/** What became of the secret a rotation replaced. */
const previousSecretText = (record: ApiKeyDetails) =>
  record.previousSecretExpiresAt
    ? `The previous secret (${record.previousPrefix}) keeps working until ${record.previousSecretExpiresAt.toISOString()}.`
    : 'The previous secret has stopped working.'

function toFields(record: ApiKeyDetails | IssuedApiKey) {
  return { ...describeKey(record), ...('key' in record ? { key: record.key } : {}) }
}

const describePlan = (record: ApiKeyDetails) =>
  `account ${record.accountId}, ${record.plan} plan: ${record.perMinute}/minute, ${record.perDay}/day`

function printIssued(record: IssuedApiKey, json: boolean, verb: string, note?: string) {
  if (json) {
    console.log(toJson(toFields(record)))
    return
  }
  const named = record.name ? `, named "${printable(record.name)}"` : ''
  console.log(`${verb} key ${record.id} (${describePlan(record)}; ${record.scopes.join(' ')})${named}`)
  if (note) console.log(note)
  console.log('Secret, shown only this once; store it now:')
  console.log(record.key)
}

function state(record: ApiKeyDetails, now: Date): string {
  if (record.revokedAt) return 'revoked'
  if (record.expiresAt && record.expiresAt <= now) return 'expired'
  return 'active'
}

function printKey(record: ApiKeyDetails, json: boolean, text: string) {
  console.log(json ? toJson(toFields(record)) : text)
}

const subcommands: Record<string, Subcommand> = {
  create: subcommand(
    USAGE.create,
    {
      plan: { type: 'string' },
      account: { type: 'string' },
      'account-id': { type: 'string' },
      'external-id': { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'allowed-addresses': { type: 'string' },
      metadata: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean' },
      ...LIMIT_OPTIONS
    },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      const { account, 'account-id': accountIdText, 'external-id': externalId } = values
      const named = [account, accountIdText, externalId].filter((value) => value !== undefined).length
      if (named > 1) throw new UsageError('name the account once: --account-id or --external-id')
      if (named && values.plan !== undefined) {
        throw new UsageError("--account-id, --external-id and --plan exclude each other: a key has its account's plan")
      }
      const accountId = accountIdText === undefined ? undefined : idArgument([accountIdText], USAGE.create, 'account')
      const plan = named ? undefined : planOption(values.plan)
      const fields = {
        plan,
        account,
        accountId,
        externalId,
        name: values.name,
        scopes: listOption(values.scopes),
        allowedAddresses: listOption(values['allowed-addresses']),
        metadata: metadataOption(values.metadata),
        expiresAt: values['expires-at'],
        ...limitsOption(values)
      }
      const issued = await withDatabase((db) => createKey(db, cliActor(), fields, Date.now()))
      printIssued(issued, values.json === true, 'Created')
    }
  ),

  list: subcommand(USAGE.list, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    noPositionals(positionals)
    const { keys } = await withDatabase((db) => listKeys(db))
    if (values.json) {
      console.log(toJson(keys.map(toFields)))
      return
    }
    const now = new Date()
    printTable([
      ['ID', 'PREFIX', 'PLAN', 'PER_MINUTE', 'PER_DAY', 'STATE', 'EXPIRES', 'ACCOUNT', 'SCOPES', 'NAME'],
      ...keys.map((key) => [
        String(key.id),
        key.prefix,
        key.plan,
        String(key.perMinute),
        String(key.perDay),
        state(key, now),
        key.expiresAt?.toISOString() ?? '-',
        String(key.accountId),
        key.scopes.join(','),
        key.name ?? ''
      ])
    ])
  }),

  revoke: subcommand(USAGE.revoke, {}, async (_values, positionals, withDatabase) => {
    const id = idArgument(positionals, USAGE.revoke)
    const record = await withDatabase((db) => revokeKey(db, cliActor(), id))
    console.log(`Revoked key ${record.id} (${record.prefix})`)
  }),

  rotate: subcommand(
    USAGE.rotate,
    { 'grace-seconds': { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE.rotate)
      const grace = graceOption(values['grace-seconds'])
      const rotated = await withDatabase((db) => rotateKey(db, cliActor(), id, grace))
      printIssued(rotated, values.json === true, 'Rotated', previousSecretText(rotated))
    }
  ),

  'set-plan': subcommand(
    USAGE['set-plan'],
    { plan: { type: 'string' }, json: { type: 'boolean' }, ...LIMIT_OPTIONS },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE['set-plan'])
      const plan = planOption(values.plan)
      const limits = limitsOption(values)
      // set-plan sets the plan and the account's overrides whole: the minute and day limits given, or none.
      const overrides = [
        ...(limits.perMinute === undefined ? [] : [{ window: 'minute', limit: limits.perMinute }]),
        ...(limits.perDay === undefined ? [] : [{ window: 'day', limit: limits.perDay }])
      ]
      const record = await withDatabase((db) => changeKey(db, cliActor(), id, { plan, overrides }, Date.now()))
      printKey(record, values.json === true, `Key ${record.id} is now on the ${describePlan(record)}`)
    }
  ),

  'set-scopes': subcommand(
    USAGE['set-scopes'],
    { scopes: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE['set-scopes'])
      const scopes = listOption(values.scopes)
      if (scopes === undefined) throw new UsageError(`--scopes is required: one or more of ${SCOPES.join(', ')}`)
      const record = await withDatabase((db) => changeKey(db, cliActor(), id, { scopes }, Date.now()))
      printKey(record, values.json === true, `Key ${record.id} now has the scopes ${record.scopes.join(', ')}`)
    }
  ),

  'set-addresses': subcommand(
    USAGE['set-addresses'],
    { 'allowed-addresses': { type: 'string' }, any: { type: 'boolean' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE['set-addresses'])
      if ((values['allowed-addresses'] === undefined) === (values.any !== true)) {
        throw new UsageError('give --allowed-addresses CIDR,... or --any, one of them')
      }
      const allowedAddresses = values.any === true ? null : listOption(values['allowed-addresses'])
      const record = await withDatabase((db) => changeKey(db, cliActor(), id, { allowedAddresses }, Date.now()))
      const text = record.allowedAddresses
        ? `Key ${record.id} may be used from ${record.allowedAddresses.join(', ')} only`
        : `Key ${record.id} may be used from any address`
      printKey(record, values.json === true, text)
    }
  ),

  'set-metadata': subcommand(
    USAGE['set-metadata'],
    { metadata: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE['set-metadata'])
      const metadata = metadataOption(values.metadata)
      if (metadata === undefined) throw new UsageError('--metadata is required: a JSON object')
      const record = await withDatabase((db) => changeKey(db, cliActor(), id, { metadata }, Date.now()))
      printKey(record, values.json === true, `Key ${record.id} has new metadata`)
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

export async function keys(args: string[], withDatabase: WithDatabase) {
  await dispatch('keys', USAGE.keys, subcommands, args, withDatabase)
}
