import { Option, type Command } from '@commander-js/extra-typings'
import { SCOPES, type ApiKeyDetails, type IssuedApiKey } from '../repositories/api-keys.js'
import { changeKey, createKey, describeKey, keyUsage, listKeys, revokeKey, rotateKey } from '../services/api-keys.js'
import {
  cliActor,
  daysOption,
  graceOption,
  idArgument,
  jsonOption,
  listOption,
  metadataOption,
  parseId,
  perDayOption,
  perMinuteOption,
  planOption,
  printable,
  shorthandOverrides,
  table,
  toJson,
  UsageError,
  type Cli
} from './common.js'

const SCOPES_TEXT = `of ${SCOPES.join(', ')}`

/** What became of the secret a rotation replaced. */
const previousSecretText = (record: ApiKeyDetails) =>
  record.previousSecretExpiresAt
    ? `The previous secret (${record.previousPrefix}) keeps working until ${record.previousSecretExpiresAt.toISOString()}.`
    : 'The previous secret has stopped working.'

const toFields = (record: ApiKeyDetails | IssuedApiKey) => ({
  ...describeKey(record),
  ...('key' in record ? { key: record.key } : {})
})

const describePlan = (record: ApiKeyDetails) =>
  `account ${record.accountId}, ${record.plan} plan: ${record.perMinute ?? 'no limit'}/minute, ${record.perDay ?? 'no limit'}/day`

function state(record: ApiKeyDetails, now: Date): string {
  if (record.revokedAt) return 'revoked'
  if (record.expiresAt && record.expiresAt <= now) return 'expired'
  return 'active'
}

/** `keys`: issue, list, revoke and rotate API keys, and change their plans, scopes, addresses and metadata. */
export function keysCommand(program: Command, cli: Cli) {
  const keys = program
    .command('keys')
    .description('Issue, list, revoke and rotate API keys, and change their plans and scopes')
    .addHelpText(
      'after',
      "\nA key belongs to an account, and has the account's plan: every key of an account shares its windows."
    )

  function printIssued(record: IssuedApiKey, json: boolean | undefined, verb: string, note?: string) {
    if (json) return cli.print(toJson(toFields(record)))
    const named = record.name ? `, named "${printable(record.name)}"` : ''
    cli.print(`${verb} key ${record.id} (${describePlan(record)}; ${record.scopes.join(' ')})${named}`)
    if (note) cli.print(note)
    cli.print('Secret, shown only this once; store it now:')
    cli.print(record.key)
  }

  const printKey = (record: ApiKeyDetails, json: boolean | undefined, text: string) =>
    cli.print(json ? toJson(toFields(record)) : text)

  keys
    .command('create')
    .description('Issue a key and print its secret once; only its SHA-256 hash is stored')
    .addOption(new Option('--account-id <id>', 'the account, by its id: the key shares its plan and windows'))
    .addOption(new Option('--external-id <ext>', 'the account, by its externalId'))
    .addOption(
      new Option('--account <account>', "either; refused when it is one account's id and another's externalId")
    )
    .addOption(planOption("without an account: a plan's name (`plans list` shows them), for a new account of its own"))
    .addOption(perMinuteOption())
    .addOption(perDayOption())
    .option('--name <name>', 'a label for the key')
    .addOption(listOption('--scopes <scopes>', `comma-separated, ${SCOPES_TEXT}; default pets:read,pets:write`))
    .addOption(
      listOption(
        '--allowed-addresses <cidrs>',
        'up to 20 comma-separated IPv4 or IPv6 ranges (a bare address is one address) the key may be used from; ' +
          'from anywhere else it gets 403 and spends nothing'
      )
    )
    .addOption(metadataOption('a JSON object of at most 2 KB kept with the key, for your own systems'))
    .option('--expires-at <iso>', 'the key stops working at this instant, which must be to come')
    .addOption(jsonOption('print one JSON object: id, key, accountId, prefix, name, scopes, plan, ...'))
    .action(async (options) => {
      const { account, accountId: accountIdText, externalId } = options
      const named = [account, accountIdText, externalId].filter((value) => value !== undefined).length
      if (named > 1) throw new UsageError('name the account once: --account-id or --external-id')
      if (named && options.plan !== undefined) {
        throw new UsageError("--account-id, --external-id and --plan exclude each other: a key has its account's plan")
      }
      if (!named && options.plan === undefined) {
        throw new UsageError('--plan is required without an account: the name of a plan (see `plans list`)')
      }
      const fields = {
        plan: options.plan,
        account,
        accountId: accountIdText === undefined ? undefined : parseId('account', accountIdText),
        externalId,
        name: options.name,
        scopes: options.scopes,
        allowedAddresses: options.allowedAddresses,
        metadata: options.metadata,
        expiresAt: options.expiresAt,
        perMinute: options.perMinute,
        perDay: options.perDay
      }
      const issued = await cli.withDatabase((db) => createKey(db, cliActor(), fields, Date.now()))
      printIssued(issued, options.json, 'Created')
    })

  keys
    .command('list')
    .description('List every key with its account, plan, limits, scopes and state; secrets are never shown')
    .addOption(jsonOption('print one JSON array'))
    .action(async (options) => {
      const { keys } = await cli.withDatabase((db) => listKeys(db))
      if (options.json) return cli.print(toJson(keys.map(toFields)))
      const now = new Date()
      cli.print(
        table([
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
      )
    })

  keys
    .command('revoke')
    .description('Revoke the key; every instance refuses it within a second')
    .addArgument(idArgument('<id>', 'key'))
    .action(async (id) => {
      const record = await cli.withDatabase((db) => revokeKey(db, cliActor(), id))
      cli.print(`Revoked key ${record.id} (${record.prefix})`)
    })

  keys
    .command('rotate')
    .description(
      'Give the key a new secret, printed once; it keeps its id, plan and counted usage (a revoked key cannot be rotated)'
    )
    .addArgument(idArgument('<id>', 'key'))
    .addOption(
      graceOption(
        'the old secret keeps working this much longer (0 to 604800, a week), on the same account and windows; ' +
          '0, the default: it stops at once. A secret still in an earlier rotation’s grace stops at once'
      )
    )
    .addOption(jsonOption())
    .action(async (id, options) => {
      const rotated = await cli.withDatabase((db) => rotateKey(db, cliActor(), id, options.graceSeconds ?? 0))
      printIssued(rotated, options.json, 'Rotated', previousSecretText(rotated))
    })

  keys
    .command('set-plan')
    .description(
      "Move the key's account to a plan with, as its only overrides, the minute and day limits given (none " +
        'without them): every key of the account follows'
    )
    .addArgument(idArgument('<id>', 'key'))
    .addOption(planOption().makeOptionMandatory())
    .addOption(perMinuteOption())
    .addOption(perDayOption())
    .addOption(jsonOption())
    .action(async (id, options) => {
      const changes = { plan: options.plan, overrides: shorthandOverrides(options) }
      const record = await cli.withDatabase((db) => changeKey(db, cliActor(), id, changes, Date.now()))
      printKey(record, options.json, `Key ${record.id} is now on the ${describePlan(record)}`)
    })

  keys
    .command('set-scopes')
    .description(
      'Set what the key may do: pets:read (GET /v1/pets...), pets:write (POST /v1/pets), keys:manage (list, ' +
        "issue, rotate and revoke its own account's keys through /v1/keys), usage:read (its own account's usage " +
        'through GET /v1/usage)'
    )
    .addArgument(idArgument('<id>', 'key'))
    .addOption(listOption('--scopes <scopes>', `comma-separated, ${SCOPES_TEXT}`).makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (id, options) => {
      const record = await cli.withDatabase((db) =>
        changeKey(db, cliActor(), id, { scopes: options.scopes }, Date.now())
      )
      printKey(record, options.json, `Key ${record.id} now has the scopes ${record.scopes.join(', ')}`)
    })

  keys
    .command('set-addresses')
    .description(
      'Set the client addresses the key may be used from; from anywhere else it gets 403 address_not_allowed ' +
        'and spends nothing'
    )
    .addArgument(idArgument('<id>', 'key'))
    .addOption(
      listOption('--allowed-addresses <cidrs>', 'up to 20 comma-separated IPv4 or IPv6 ranges (a bare address is one)')
    )
    .option('--any', 'remove the list: any address')
    .addOption(jsonOption())
    .action(async (id, options) => {
      if ((options.allowedAddresses === undefined) === (options.any !== true)) {
        throw new UsageError('give --allowed-addresses CIDR,... or --any, one of them')
      }
      const allowedAddresses = options.any ? null : options.allowedAddresses
      const record = await cli.withDatabase((db) => changeKey(db, cliActor(), id, { allowedAddresses }, Date.now()))
      const text = record.allowedAddresses
        ? `Key ${record.id} may be used from ${record.allowedAddresses.join(', ')} only`
        : `Key ${record.id} may be used from any address`
      printKey(record, options.json, text)
    })

  keys
    .command('set-metadata')
    .description("Replace the key's metadata")
    .addArgument(idArgument('<id>', 'key'))
    .addOption(metadataOption("a JSON object of at most 2 KB; '{}' removes it").makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (id, options) => {
      const changes = { metadata: options.metadata }
      const record = await cli.withDatabase((db) => changeKey(db, cliActor(), id, changes, Date.now()))
      printKey(record, options.json, `Key ${record.id} has new metadata`)
    })

  keys
    .command('usage')
    .description(
      'Requests admitted and refused on each of the last N UTC days, today first. Today may lag by what an ' +
        'instance admitted from its current lease and has not yet reported: at most a lease per instance, ' +
        'reported within about 5 seconds'
    )
    .addArgument(idArgument('<id>', 'key'))
    .addOption(daysOption('how many days, at most 400').default(30))
    .addOption(jsonOption('print one JSON object: {"days":[{"date","admitted","refused"},...]}'))
    .action(async (id, options) => {
      const usage = await cli.withDatabase((db) => keyUsage(db, id, options.days, Date.now()))
      if (options.json) return cli.print(JSON.stringify({ days: usage }))
      cli.print(
        table([
          ['DATE', 'ADMITTED', 'REFUSED'],
          ...usage.map((day) => [day.date, String(day.admitted), String(day.refused)])
        ])
      )
    })
}
