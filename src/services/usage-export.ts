import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { ApiKeyError } from '../repositories/api-keys.js'
import { readUsageExport, type UsageExportRow } from '../repositories/usage-export.js'

export type UsageExportFormat = 'csv' | 'json' | 'ndjson'

/** The CSV's columns, in its header row. */
const USAGE_EXPORT_COLUMNS = ['start', 'accountId', 'keyId', 'admitted', 'refused', 'units'] as const

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** The range as the export takes it: two instants on the granularity's UTC boundaries, `from` before `to`. */
export function checkExportRange(from: string, to: string, granularity: 'hour' | 'day') {
  const [start, end] = [new Date(from), new Date(to)]
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) {
    throw new ApiKeyError('from and to must be instants in ISO 8601')
  }
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS
  if (start.getTime() % step !== 0 || end.getTime() % step !== 0) {
    throw new ApiKeyError(`from and to must start a UTC ${granularity} (granularity=${granularity})`)
  }
  if (end <= start) throw new ApiKeyError('to must be after from')
  return { from: start, to: end }
}

const fields = (row: UsageExportRow) => [
  row.start.toISOString(),
  String(row.accountId),
  String(row.keyId),
  String(row.admitted),
  String(row.refused),
  String(row.units)
]
const asJson = (row: UsageExportRow) =>
  `{"start":"${row.start.toISOString()}","accountId":${row.accountId},"keyId":${row.keyId},"admitted":${row.admitted},"refused":${row.refused},"units":${row.units}}`

/**
 * The export as text chunks, one per row (and the CSV's header, the JSON array's brackets): written
 * as the rows are read, never the whole result at once. Figures are exact integers.
 */
export async function* usageExport(
  db: Kysely<Database>,
  query: { from: Date; to: Date; granularity: 'hour' | 'day'; accountId?: bigint; format: UsageExportFormat }
): AsyncGenerator<string> {
  const rows = readUsageExport(db, query)
  if (query.format === 'csv') {
    yield `${USAGE_EXPORT_COLUMNS.join(',')}\n`
    for await (const row of rows) yield `${fields(row).join(',')}\n`
  } else if (query.format === 'ndjson') {
    for await (const row of rows) yield `${asJson(row)}\n`
  } else {
    let first = true
    yield '['
    for await (const row of rows) {
      yield `${first ? '' : ','}\n${asJson(row)}`
      first = false
    }
    yield '\n]\n'
  }
}
