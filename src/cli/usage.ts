import { once } from 'node:events'
import { Option, type Command } from '@commander-js/extra-typings'
import { checkExportRange, usageExport, type UsageExportFormat } from '../services/usage-export.js'
import { choiceOption, parseId, type Cli } from './common.js'

const FORMATS: readonly UsageExportFormat[] = ['csv', 'json', 'ndjson']

/** `usage`: every key's usage per UTC hour or day, for billing. */
export function usageCommand(program: Command, cli: Cli) {
  program
    .command('usage')
    .description("Export every key's usage per UTC hour or day, as CSV or JSON, to stdout")
    .command('export')
    .description(
      "Write every key's usage (admitted, refused, units) per UTC hour or day in [from, to) to stdout as it is " +
        'read, whatever the range: nothing is held whole. Rows are ordered by period, then key ' +
        '(docs/webhooks.md#usage-export)'
    )
    .requiredOption('--from <iso>', 'the first hour (or day), its start: 2026-11-01T00:00:00Z')
    .requiredOption('--to <iso>', 'the end of the range, exclusive, on an hour (or day) too')
    .addOption(
      choiceOption('--granularity <period>', 'a row per key and hour, or per key and day (its hours summed)', [
        'hour',
        'day'
      ] as const).default('hour' as const)
    )
    .addOption(
      new Option('--account-id <id>', "only this account's keys").argParser((value: string) =>
        parseId('account', value)
      )
    )
    .addOption(
      choiceOption(
        '--format <format>',
        'csv with a header row, a JSON array, or a JSON object a line',
        FORMATS
      ).default('csv')
    )
    .action(async (options) => {
      const { granularity, format, accountId } = options
      const range = checkExportRange(options.from, options.to, granularity)
      await cli.withDatabase(async (db) => {
        for await (const chunk of usageExport(db, { ...range, granularity, accountId, format })) {
          // Waits while stdout is full, so a slow reader holds the export back instead of memory filling.
          if (!cli.stdout.write(chunk)) await once(cli.stdout, 'drain')
        }
      })
    })
}
