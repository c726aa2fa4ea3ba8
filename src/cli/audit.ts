import { Option, type Command } from '@commander-js/extra-typings'
import { describeEvent, listEvents } from '../services/accounts.js'
import { resolveAccount } from '../services/accounts.js'
import { jsonOption, numberOption, parseId, table, toJson, type Cli } from './common.js'

/** `audit`: the trail of changes, newest first, with who made each. */
export function auditCommand(program: Command, cli: Cli) {
  program
    .command('audit')
    .description('List the audit trail of changes to accounts, keys, plans, operators and webhooks')
    .command('list')
    .description('The audit trail, newest first: every change, with who made it')
    .option('--account <account>', 'only events of this account (its id or externalId)')
    .addOption(new Option('--key <id>', 'only events of this key').argParser((value: string) => parseId('key', value)))
    .addOption(numberOption('--limit <n>', 'at most N events', 1, 1000).default(50))
    .addOption(jsonOption('print one JSON array'))
    .action(async (options) => {
      const { events } = await cli.withDatabase(async (db) => {
        const accountId =
          options.account === undefined ? undefined : (await resolveAccount(db, { account: options.account })).id
        return listEvents(db, { accountId, keyId: options.key, limit: options.limit })
      })
      if (options.json) return cli.print(toJson(events.map(describeEvent)))
      cli.print(
        table([
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
      )
    })
}
