import { Argument, Option, type Command } from '@commander-js/extra-typings'
import type { AccountRecord, Credits } from '../repositories/accounts.js'
import {
  accountUsage,
  accountWindows,
  changeAccount,
  changeCredits,
  createAccount,
  describeAccount,
  describeCredits,
  listAccounts,
  removeCredits,
  resolveAccount
} from '../services/accounts.js'
import { closeAccount } from '../services/account-closure.js'
import { describeKey, listKeys } from '../services/api-keys.js'
import {
  cliActor,
  daysOption,
  jsonOption,
  metadataOption,
  parseLimit,
  perDayOption,
  perMinuteOption,
  planOption,
  printable,
  repeatedOption,
  shorthandOverrides,
  table,
  toJson,
  UsageError,
  type Cli,
  type Db
} from './common.js'

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

const MAX_UNITS = 1_000_000_000_000

function units(option: string, value: string, min: number): number {
  if (!/^[0-9]{1,13}$/.test(value) || Number(value) < min || Number(value) > MAX_UNITS) {
    throw new UsageError(`${option} must be a whole number from ${min} to ${MAX_UNITS}, not '${printable(value)}'`)
  }
  return Number(value)
}

function parseRefill(value: string): { amount: number; every: 'day' | 'month' } {
  const match = /^([0-9]{1,13})\/(day|month)$/.exec(value)
  if (!match) throw new UsageError(`--refill must read N/day or N/month, not '${printable(value)}'`)
  return { amount: units('--refill', match[1]!, 1), every: match[2] as 'day' | 'month' }
}

/** An override: a limit as --limit reads it, for good or until the instant after `@`. */
function parseOverride(text: string) {
  const [limit, until] = text.split('@')
  return { ...parseLimit(limit!), ...(until === undefined ? {} : { until }) }
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

const accountArgument = () => new Argument('<account>', "the account's id or its externalId")

/** `accounts`: make, list, show, re-plan and close accounts; set their overrides and credits. */
export function accountsCommand(program: Command, cli: Cli) {
  const accounts = program
    .command('accounts')
    .description('Make, list, show, re-plan and close accounts; set their overrides and credits')
    .addHelpText('after', '\nAn account is a customer: all of its keys share its plan, its overrides and its credits.')

  /** Runs `change` on the account named by its id or externalId. */
  const onAccount = <T>(named: string, change: (db: Db, id: bigint) => Promise<T>) =>
    cli.withDatabase(async (db) => change(db, (await resolveAccount(db, { account: named })).id))

  const printAccount = (account: AccountRecord, json: boolean | undefined, text: string) =>
    cli.print(json ? toJson(describeAccount(account)) : text)

  accounts
    .command('create')
    .description('Make an account')
    .addOption(planOption().makeOptionMandatory())
    .option('--external-id <id>', 'your own id of the customer, unique: A-Z a-z 0-9 . _ : -')
    .option('--name <name>', 'a label for the account')
    .addOption(perMinuteOption())
    .addOption(perDayOption())
    .addOption(metadataOption('a JSON object of at most 2 KB kept with the account, for your own systems'))
    .option(
      '--cycle-anchor <instant>',
      "where the account's months start, for a plan whose month follows it (RFC 3339); its creation without it"
    )
    .addOption(jsonOption())
    .action(async (options) => {
      const fields = {
        plan: options.plan,
        externalId: options.externalId,
        name: options.name,
        metadata: options.metadata,
        perMinute: options.perMinute,
        perDay: options.perDay,
        cycleAnchor: options.cycleAnchor
      }
      const account = await cli.withDatabase((db) => createAccount(db, cliActor(), fields))
      printAccount(account, options.json, `Created account ${account.id} (${planText(account)})`)
    })

  accounts
    .command('list')
    .description('List every account (or the one with an externalId) with its plan, limits and state')
    .option('--external-id <id>', 'only the account with this externalId')
    .addOption(jsonOption('print one JSON array'))
    .action(async (options) => {
      const { accounts } = await cli.withDatabase((db) => listAccounts(db, { externalId: options.externalId }))
      cli.print(options.json ? toJson(accounts.map(describeAccount)) : table(accountRows(accounts)))
    })

  accounts
    .command('show')
    .description(
      'The account; its windows as they stand (counts include requests an instance has leased ahead and not yet ' +
        'served); its keys, each with its ban if one is running; and its usage, all keys together, per UTC day'
    )
    .addArgument(accountArgument())
    .addOption(daysOption('usage on each of the last N days, at most 400').default(7))
    .addOption(jsonOption())
    .action(async (named, options) => {
      const now = Date.now()
      const { account, keys, usage, windows, bans } = await cli.withDatabase(async (db) => {
        const account = await resolveAccount(db, { account: named })
        const { keys } = await listKeys(db, { accountId: account.id })
        const usage = await accountUsage(db, account.id, options.days, now)
        return { account, keys, usage, ...(await accountWindows(db, account.id)) }
      })
      if (options.json) {
        return cli.print(toJson({ ...describeAccount(account), windows, bans, keys: keys.map(describeKey), usage }))
      }
      const bannedUntil = new Map(bans.map((ban) => [ban.keyId, ban.bannedUntil]))
      cli.print(
        [
          table(accountRows([account])),
          table([
            ['WINDOW', 'LIMIT', 'USED', 'REMAINING', 'RESET'],
            ...windows.map((window) => [
              window.name,
              String(window.limit),
              String(window.used),
              String(window.remaining),
              new Date(window.reset * 1000).toISOString()
            ])
          ]),
          table([
            ['KEY', 'PREFIX', 'SCOPES', 'STATE', 'BANNED_UNTIL', 'NAME'],
            ...keys.map((key) => [
              String(key.id),
              key.prefix,
              key.scopes.join(','),
              key.revokedAt ? 'revoked' : 'active',
              bannedUntil.get(key.id) ?? '-',
              key.name ?? ''
            ])
          ]),
          table([
            ['DATE', 'ADMITTED', 'REFUSED'],
            ...usage.map((day) => [day.date, String(day.admitted), String(day.refused)])
          ])
        ].join('\n\n')
      )
    })

  accounts
    .command('set-plan')
    .description(
      'Move the account to a plan with, as its only overrides, the minute and day limits given (none without ' +
        'them); every key of it follows, on every instance within a second'
    )
    .addArgument(accountArgument())
    .addOption(planOption().makeOptionMandatory())
    .addOption(perMinuteOption())
    .addOption(perDayOption())
    .addOption(jsonOption())
    .action(async (named, options) => {
      const changes = { plan: options.plan, overrides: shorthandOverrides(options) }
      const account = await onAccount(named, (db, id) => changeAccount(db, cliActor(), id, changes))
      printAccount(account, options.json, `Account ${account.id} is now on the ${planText(account)}`)
    })

  accounts
    .command('set-metadata')
    .description("Replace the account's metadata")
    .addArgument(accountArgument())
    .addOption(metadataOption("a JSON object of at most 2 KB; '{}' removes it").makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (named, options) => {
      const changes = { metadata: options.metadata }
      const account = await onAccount(named, (db, id) => changeAccount(db, cliActor(), id, changes))
      printAccount(account, options.json, `Account ${account.id} has new metadata`)
    })

  accounts
    .command('set-cycle-anchor')
    .description(
      "Set where the account's months start, for a plan whose month follows it: periods are the anchor plus k " +
        'months, k any integer; the month under way is counted afresh'
    )
    .addArgument(accountArgument())
    .addArgument(new Argument('<instant>', 'an RFC 3339 instant, past or ahead: 2027-01-31T10:00:00Z'))
    .addOption(jsonOption())
    .action(async (named, instant, options) => {
      const account = await onAccount(named, (db, id) => changeAccount(db, cliActor(), id, { cycleAnchor: instant }))
      printAccount(
        account,
        options.json,
        `Account ${account.id} starts its months at ${account.cycleAnchor.toISOString()}`
      )
    })

  accounts
    .command('overrides')
    .description("Replace the account's overrides: limits in place of its plan's for their windows")
    .addArgument(accountArgument())
    .addOption(
      repeatedOption(
        '--limit <WINDOW=N[:bucket[:BURST]][@UNTIL]>',
        'N units a second, minute, hour, day or month, until the ISO 8601 instant UNTIL or for good; once per window',
        parseOverride
      )
    )
    .option('--clear', "remove them all: the plan's limits apply")
    .addOption(jsonOption('print the account as one JSON object'))
    .action(async (named, options) => {
      const overrides = options.limit ?? []
      if (overrides.length === 0 && !options.clear) throw new UsageError('give --limit, once per window, or --clear')
      if (overrides.length && options.clear) throw new UsageError('give --limit or --clear, not both')
      const account = await onAccount(named, (db, id) => changeAccount(db, cliActor(), id, { overrides }))
      printAccount(account, options.json, `Account ${account.id} has ${overridesText(account)}`)
    })

  accounts
    .command('credits')
    .description(
      "Change the account's prepaid credits: each admitted request spends its cost; at 0, 429 credits_exhausted"
    )
    .addArgument(accountArgument())
    .addOption(
      new Option('--add <n>', 'add N units (an account without credits starts at 0); adds at once all count').argParser(
        (value: string) => units('--add', value, 1)
      )
    )
    .addOption(new Option('--set <n>', 'set the balance to N').argParser((value: string) => units('--set', value, 0)))
    .addOption(
      new Option('--remove', 'remove the credits: the account has no balance to spend down').conflicts([
        'add',
        'set',
        'refill'
      ])
    )
    .addOption(
      new Option(
        '--refill <N/day|N/month>',
        'at the start of each UTC day (or month) the balance rises to N'
      ).argParser(parseRefill)
    )
    .option('--no-refill', 'no refill')
    .addOption(jsonOption('print the credits as one JSON object'))
    .action(async (named, options) => {
      if (options.remove) {
        await onAccount(named, (db, id) => removeCredits(db, cliActor(), id))
        return cli.print(`Account ${named} has no credits`)
      }
      const change = { add: options.add, set: options.set, refill: options.refill === false ? null : options.refill }
      const credits = await onAccount(named, (db, id) => changeCredits(db, cliActor(), id, change))
      cli.print(options.json ? toJson(describeCredits(credits)) : `Account ${named} has ${creditsText(credits)}`)
    })

  accounts
    .command('close')
    .description('Close the account and revoke all of its keys at once; every instance refuses them within a second')
    .addArgument(accountArgument())
    .action(async (named) => {
      const account = await onAccount(named, (db, id) => closeAccount(db, cliActor(), id))
      cli.print(`Closed account ${account.id}; its keys are revoked`)
    })
}
