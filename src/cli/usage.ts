import { once } from 'node:events'
import { checkExportRange, usageExport, type UsageExportFormat } from '../services/usage-export.js'
import { dispatch, idArgument, noPositionals, printable, subcommand, UsageError, type WithDatabase } from './common.js'

const USAGE = {
  usage: `Usage: npm run --silent cli -- usage export --from ISO --to ISO [options]

  export --from ISO --to ISO [--granularity hour|day] [--account-id ID] [--format csv|json|ndjson]

Usage per key and UTC hour or day, for billing (docs/webhooks.md#usage-export).`,
  export: `Usage: npm run --silent cli -- usage export --from ISO --to ISO [--granularity hour|day] [--account-id ID] [--format csv|json|ndjson]

Writes every key's usage (admitted, refused, units) per UTC hour or day in [from, to) to stdout as
it is read, whatever the range: nothing is held whole. Rows are ordered by period, then key.
  --from ISO              the first hour (or day), its start: 2026-11-01T00:00:00Z
  --to ISO                the end of the range, exclusive, on an hour (or day) too
  --granularity hour|day  a row per key and hour (the default), or per key and day (its hours summed)
  --account-id ID         only this account's keys
  --format csv|json|ndjson  csv with a header row (the default), a JSON array, or a JSON object a line`
}

const FORMATS: readonly UsageExportFormat[] = ['csv', 'json', 'ndjson']

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, not '${printable(value)}'`)
  }
  return value as T
}

const subcommands = {
  export: subcommand(
    USAGE.export,
    {
      from: { type: 'string' },
      to: { type: 'string' },
      granularity: { type: 'string' },
      'account-id': { type: 'string' },
      format: { type: 'string' }
    },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      if (values.from === undefined || values.to === undefined) {
        throw new UsageError('--from and --to are required: instants that start a UTC hour (or day)')
      }
      const granularity = oneOf('granularity', values.granularity, ['hour', 'day'] as const, 'hour')
      const format = oneOf('format', values.format, FORMATS, 'csv')
      const accountIdText = values['account-id']
      const accountId = accountIdText === undefined ? undefined : idArgument([accountIdText], USAGE.export, 'account')
      const range = checkExportRange(values.from, values.to, granularity)
      await withDatabase(async (db) => {
        for await (const chunk of usageExport(db, { ...range, granularity, accountId, format })) {
          // Waits while stdout is full, so a slow reader holds the export back instead of memory filling.
          if (!process.stdout.write(chunk)) await once(process.stdout, 'drain')
        }
      })
    }
  )
}

export const usage = (args: string[], withDatabase: WithDatabase) =>
  dispatch('usage', USAGE.usage, subcommands, args, withDatabase)
