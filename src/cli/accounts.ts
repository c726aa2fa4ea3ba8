import type { AccountRecord, Credits } from '../repositories/accounts.js'
import {
  accountUsage,
  accountWindows,
  changeAccount,
  changeCredits,
  describeCredits,
  removeCredits,
  closeAccount,
  createAccount,
  describeAccount,
  describeEvent,
  listAccounts,
  listEvents
} from '../services/accounts.js'
import { describeKey, listKeys, resolveAccount } from '../services/api-keys.js'
import {
  cliActor,
  daysOption,
  dispatch,
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
import { limitArgument } from './plans.js'

const USAGE = {
  accounts: `Usage: npm run --silent cli -- accounts <create|list|show|set-plan|set-metadata|overrides|credits|close> [options]

  create --plan PLAN [--external-id ID] [--name N] [--per-minute N] [--per-day N] [--metadata JSON] [--json]
  list [--external-id ID] [--json]
  show ACCOUNT [--days N] [--json]
  set-plan ACCOUNT --plan PLAN [--per-minute N] [--per-day N] [--json]
  set-metadata ACCOUNT --metadata JSON [--json]
  overrides ACCOUNT (--limit WINDOW=N[:bucket[:BURST]][@UNTIL] ... | --clear) [--json]
  credits ACCOUNT (--add N | --set N | --remove) [--refill N/day|N/month | --no-refill] [--json]
  close ACCOUNT

An account is a customer: all of its keys share its plan, its overrides and its credits. ACCOUNT is
an account's id or its externalId.`,
  create: `Usage: npm run --silent cli -- accounts create --plan PLAN [options]

  --plan PLAN         the name of a plan (see plans list; required)
  --external-id ID    your own id of the customer, unique: A-Z a-z 0-9 . _ : -
  --name NAME         a label for the account
  --per-minute N      the account's own minute limit, in place of its plan's (an override)
  --per-day N         the account's own day limit, in place of its plan's (an override)
  --metadata JSON     a JSON object of at most 2 KB kept with the account, for your own systems
  --json              print one JSON object`,
  list: `Usage: npm run --silent cli -- accounts list [--external-id ID] [--json]

Lists every account (or the one with that externalId) with its plan, limits and state.`,
  show: `Usage: npm run --silent cli -- accounts show ACCOUNT [--days N] [--json]

The account; its minute and day windows as they stand (counts include requests an instance has leased
ahead and not yet served); its keys, each with its ban if one is running; and its usage (all keys
together) on each of the last N UTC days (default 7).`,
  'set-plan': `Usage: npm run --silent cli -- accounts set-plan ACCOUNT --plan PLAN [--per-minute N] [--per-day N] [--json]

Moves the account to a plan with, as its only overrides, the minute and day limits given (none
without them); every key of it follows, on every instance within a second.`,
  'set-metadata': `Usage: npm run --silent cli -- accounts set-metadata ACCOUNT --metadata JSON [--json]

Replaces the account's metadata with a JSON object of at most 2 KB; '{}' removes it.`,
  overrides: `Usage: npm run --silent cli -- accounts overrides ACCOUNT (--limit WINDOW=N[:bucket[:BURST]][@UNTIL] ... | --clear) [--json]

Replaces the account's overrides: limits in place of its plan's for their windows.
  --limit WINDOW=N[:bucket[:BURST]][@UNTIL]  N units a second, minute, hour, day or month, until
                                             the ISO 8601 instant UNTIL or for good; once per window
  --clear                                    remove them all: the plan's limits apply
  --json                                     print the account as one JSON object`,
  credits: `Usage: npm run --silent cli -- accounts credits ACCOUNT (--add N | --set N | --remove) [--refill N/day|N/month | --no-refill] [--json]

Changes the account's prepaid credits: each admitted request spends its cost; at 0, 429 credits_exhausted.
  --add N              add N units (an account without credits starts at 0); adds at once all count
  --set N              set the balance to N
  --remove             remove the credits: the account has no balance to spend down
  --refill N/day       at the start of each UTC day (or month) the balance rises to N
  --no-refill          no refill
  --json               print the credits as one JSON object`,
  close: `Usage: npm run --silent cli -- accounts close ACCOUNT

Closes the account and revokes all of its keys at once; every instance refuses them within a second.`,
  audit: `Usage: npm run --silent cli -- audit list [--account ID] [--key ID] [--limit N] [--json]

The audit trail, newest first: every change to an account or a key, with who made it.
  --account ID    only events of this account (its id or externalId)
  --key ID        only events of this key
  --limit N       at most N events (default 50, at most 1000)
  --json          print one JSON array`
}

function accountArgument(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected one account; ${usage.split('\n')[0]}`)
  return positionals[0]!
}

const planText = (account: AccountRecord) =>
  `${account.plan} plan: ${account.perMinute ?? 'no limit'}/minute, ${account.perDay ?? 'no limit'}/day, for all of its keys`

const overridesText = (account: AccountRecord) =>
  account.overrides.length === 0
    ? "no overrides: its plan's limits apply"
    : 'the overrides ' +
      account.overrides
        .map(
          (o) =>
            `${o.limit}/${o.window}${o.algorithm === 'bucket' ? ` bucket${o.burst === null ? '' : ` burst ${o.burst}`}` : ''}` +
            (o.until === null ? '' : ` until ${o.until.toISOString()}`)
        )
        .join(', ')

const creditsText = (credits: Credits) =>
  `${credits.remaining} credits` +
  (credits.refill ? `, refilled to ${credits.refill.amount} each ${credits.refill.every}` : '')

/** `--per-minute` and `--per-day` as the account's only overrides. */
const shorthandOverrides = (limits: { perMinute?: number; perDay?: number }) => [
  ...(limits.perMinute === undefined ? [] : [{ window: 'minute', limit: limits.perMinute }]),
  ...(limits.perDay === undefined ? [] : [{ window: 'day', limit: limits.perDay }])
]

function units(name: string, value: string, min: number): number {
  if (!/^[0-9]{1,13}$/.test(value) || Number(value) < min || Number(value) > 1_000_000_000_000) {
    throw new UsageError(`--${name} must be a whole number from ${min} to 1000000000000, not '${printable(value)}'`)
  }
  return Number(value)
}

function refillOption(value: string): { amount: number; every: 'day' | 'month' } {
  const match = /^([0-9]{1,13})\/(day|month)$/.exec(value)
  if (!match) throw new UsageError(`--refill must read N/day or N/month, not '${printable(value)}'`)
  return { amount: units('refill', match[1]!, 1), every: match[2] as 'day' | 'month' }
}

function accountRows(accounts: AccountRecord[]) {
  return [
    ['ID', 'EXTERNAL_ID', 'PLAN', 'PER_MINUTE', 'PER_DAY', 'STATE', 'NAME'],
    ...accounts.map((account) => [
      String(account.id),
      account.externalId ?? '-',
      account.plan,
      String(account.perMinute),
      String(account.perDay),
      account.closedAt ? 'closed' : 'open',
      account.name ?? ''
    ])
  ]
}

const accountSubcommands: Record<string, Subcommand> = {
  create: subcommand(
    USAGE.create,
    {
      plan: { type: 'string' },
      'external-id': { type: 'string' },
      name: { type: 'string' },
      metadata: { type: 'string' },
      json: { type: 'boolean' },
      ...LIMIT_OPTIONS
    },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      const fields = {
        plan: planOption(values.plan),
        externalId: values['external-id'],
        name: values.name,
        metadata: metadataOption(values.metadata),
        ...limitsOption(values)
      }
      const account = await withDatabase((db) => createAccount(db, cliActor(), fields))
      if (values.json) console.log(toJson(describeAccount(account)))
      else console.log(`Created account ${account.id} (${planText(account)})`)
    }
  ),

  list: subcommand(
    USAGE.list,
    { 'external-id': { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      const { accounts } = await withDatabase((db) => listAccounts(db, { externalId: values['external-id'] }))
      if (values.json) console.log(toJson(accounts.map(describeAccount)))
      else printTable(accountRows(accounts))
    }
  ),

  show: subcommand(
    USAGE.show,
    { days: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const named = accountArgument(positionals, USAGE.show)
      const days = values.days === undefined ? 7 : daysOption(values.days)
      const now = Date.now()
      const { account, keys, usage, windows, bans } = await withDatabase(async (db) => {
        const account = await resolveAccount(db, { account: named })
        const { keys } = await listKeys(db, { accountId: account.id })
        const usage = await accountUsage(db, account.id, days, now)
        return { account, keys, usage, ...(await accountWindows(db, account.id)) }
      })
      if (values.json) {
        console.log(toJson({ ...describeAccount(account), windows, bans, keys: keys.map(describeKey), usage }))
        return
      }
      printTable(accountRows([account]))
      console.log('')
      printTable([
        ['WINDOW', 'LIMIT', 'USED', 'REMAINING', 'RESET'],
        ...windows.map((window) => [
          window.name,
          String(window.limit),
          String(window.used),
          String(window.remaining),
          new Date(window.reset * 1000).toISOString()
        ])
      ])
      console.log('')
      const bannedUntil = new Map(bans.map((ban) => [ban.keyId, ban.bannedUntil]))
      printTable([
        ['KEY', 'PREFIX', 'SCOPES', 'STATE', 'BANNED_UNTIL', 'NAME'],
        ...keys.map((key) => [
          String(key.id),
          key.prefix,
          key.scopes.join(','),
          key.revokedAt ? 'revoked' : 'active',
          bannedUntil.get(key.id) ?? '-',
          key.name ?? ''
        ])
      ])
      console.log('')
      printTable([
        ['DATE', 'ADMITTED', 'REFUSED'],
        ...usage.map((day) => [day.date, String(day.admitted), String(day.refused)])
      ])
    }
  ),

  'set-plan': subcommand(
    USAGE['set-plan'],
    { plan: { type: 'string' }, json: { type: 'boolean' }, ...LIMIT_OPTIONS },
    async (values, positionals, withDatabase) => {
      const named = accountArgument(positionals, USAGE['set-plan'])
      const plan = planOption(values.plan)
      // set-plan sets the plan and the account's overrides whole.
      const overrides = shorthandOverrides(limitsOption(values))
      const account = await withDatabase(async (db) =>
        changeAccount(db, cliActor(), (await resolveAccount(db, { account: named })).id, { plan, overrides })
      )
      if (values.json) console.log(toJson(describeAccount(account)))
      else console.log(`Account ${account.id} is now on the ${planText(account)}`)
    }
  ),

  'set-metadata': subcommand(
    USAGE['set-metadata'],
    { metadata: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const named = accountArgument(positionals, USAGE['set-metadata'])
      const metadata = metadataOption(values.metadata)
      if (metadata === undefined) throw new UsageError('--metadata is required: a JSON object')
      const account = await withDatabase(async (db) =>
        changeAccount(db, cliActor(), (await resolveAccount(db, { account: named })).id, { metadata })
      )
      if (values.json) console.log(toJson(describeAccount(account)))
      else console.log(`Account ${account.id} has new metadata`)
    }
  ),

  overrides: subcommand(
    USAGE.overrides,
    { limit: { type: 'string', multiple: true }, clear: { type: 'boolean' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const named = accountArgument(positionals, USAGE.overrides)
      const given = values.limit ?? []
      if (given.length === 0 && !values.clear) throw new UsageError('give --limit, once per window, or --clear')
      if (given.length && values.clear) throw new UsageError('give --limit or --clear, not both')
      const overrides = given.map((text) => {
        const [limit, until] = text.split('@')
        return { ...limitArgument(limit!), ...(until === undefined ? {} : { until }) }
      })
      const account = await withDatabase(async (db) =>
        changeAccount(db, cliActor(), (await resolveAccount(db, { account: named })).id, { overrides })
      )
      if (values.json) console.log(toJson(describeAccount(account)))
      else console.log(`Account ${account.id} has ${overridesText(account)}`)
    }
  ),

  credits: subcommand(
    USAGE.credits,
    {
      add: { type: 'string' },
      set: { type: 'string' },
      remove: { type: 'boolean' },
      refill: { type: 'string' },
      'no-refill': { type: 'boolean' },
      json: { type: 'boolean' }
    },
    async (values, positionals, withDatabase) => {
      const named = accountArgument(positionals, USAGE.credits)
      if (values.refill !== undefined && values['no-refill']) {
        throw new UsageError('give --refill or --no-refill, not both')
      }
      if (values.remove) {
        if (
          values.add !== undefined ||
          values.set !== undefined ||
          values.refill !== undefined ||
          values['no-refill']
        ) {
          throw new UsageError('--remove takes no other option')
        }
        await withDatabase(async (db) =>
          removeCredits(db, cliActor(), (await resolveAccount(db, { account: named })).id)
        )
        console.log(`Account ${named} has no credits`)
        return
      }
      const change = {
        add: values.add === undefined ? undefined : units('add', values.add, 1),
        set: values.set === undefined ? undefined : units('set', values.set, 0),
        refill: values['no-refill'] ? null : values.refill === undefined ? undefined : refillOption(values.refill)
      }
      const credits = await withDatabase(async (db) =>
        changeCredits(db, cliActor(), (await resolveAccount(db, { account: named })).id, change)
      )
      if (values.json) console.log(toJson(describeCredits(credits)))
      else console.log(`Account ${named} has ${creditsText(credits)}`)
    }
  ),

  close: subcommand(USAGE.close, {}, async (_values, positionals, withDatabase) => {
    const named = accountArgument(positionals, USAGE.close)
    const account = await withDatabase(async (db) =>
      closeAccount(db, cliActor(), (await resolveAccount(db, { account: named })).id)
    )
    console.log(`Closed account ${account.id}; its keys are revoked`)
  })
}

export async function accounts(args: string[], withDatabase: WithDatabase) {
  await dispatch('accounts', USAGE.accounts, accountSubcommands, args, withDatabase)
}

function keyIdOption(value: string | undefined): bigint | undefined {
  if (value === undefined) return undefined
  if (!/^[1-9][0-9]{0,18}$/.test(value)) {
    throw new UsageError(`--key must be a positive whole number, not '${printable(value)}'`)
  }
  return BigInt(value)
}

function limitOption(value: string | undefined): number {
  if (value === undefined) return 50
  if (!/^[1-9][0-9]{0,3}$/.test(value) || Number(value) > 1000) {
    throw new UsageError(`--limit must be a whole number from 1 to 1000, not '${printable(value)}'`)
  }
  return Number(value)
}

const auditSubcommands: Record<string, Subcommand> = {
  list: subcommand(
    USAGE.audit,
    { account: { type: 'string' }, key: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      const keyId = keyIdOption(values.key)
      const limit = limitOption(values.limit)
      const { events } = await withDatabase(async (db) => {
        const accountId =
          values.account === undefined ? undefined : (await resolveAccount(db, { account: values.account })).id
        return listEvents(db, { accountId, keyId, limit })
      })
      if (values.json) {
        console.log(toJson(events.map(describeEvent)))
        return
      }
      printTable([
        ['ID', 'AT', 'ACTOR', 'ACTION', 'ACCOUNT', 'KEY', 'CHANGES'],
        ...events.map((event) => [
          String(event.id),
          event.at.toISOString(),
          event.actor,
          event.action,
          event.accountId === null ? '-' : String(event.accountId),
          event.keyId === null ? '-' : String(event.keyId),
          Object.entries(event.changes)
            .map(([field, { before, after }]) => `${field}: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`)
            .join('; ')
        ])
      ])
    }
  )
}

export async function audit(args: string[], withDatabase: WithDatabase) {
  await dispatch('audit', USAGE.audit, auditSubcommands, args, withDatabase)
}
