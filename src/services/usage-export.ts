import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { InvalidInputError } from '../errors.js'
import { INSTANT_RULE, parseInstant } from '../schemas/instant.js'
import {
  readUsageExport,
  readUsagePage,
  type UsageExportRow,
  type UsagePosition
} from '../repositories/usage-export.js'

export type UsageExportFormat = 'csv' | 'json' | 'ndjson'

/** The CSV's columns, in its header row. */
const USAGE_EXPORT_COLUMNS = ['start', 'accountId', 'keyId', 'admitted', 'refused', 'units'] as const

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** The range as the export takes it: two instants on the granularity's UTC boundaries, `from` before `to`. */
export function checkExportRange(from: string, to: string, granularity: 'hour' | 'day') {
  const [start, end] = [parseInstant(from), parseInstant(to)]
  if (start === undefined || end === undefined) throw new InvalidInputError(`from and to ${INSTANT_RULE}`)
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS
  if (start.getTime() % step !== 0 || end.getTime() % step !== 0) {
    throw new InvalidInputError(`from and to must start a UTC ${granularity} (granularity=${granularity})`)
  }
  if (end <= start) throw new InvalidInputError('to must be after from')
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

/** The rows of one page as the export writes them: the CSV with its header row, or a JSON array. */
export function formatUsageRows(rows: UsageExportRow[], format: 'csv' | 'json'): string {
  if (format === 'csv') {
    return [USAGE_EXPORT_COLUMNS.join(','), ...rows.map((row) => fields(row).join(','))].join('\n') + '\n'
  }
  return rows.length === 0 ? '[]\n' : `[${rows.map((row) => `\n${asJson(row)}`).join(',')}\n]\n`
}

/**
 * One page of an account's usage, the export's figures for its keys alone, and the position of the
 * next page while more follow (undefined on the last).
 */
export async function accountUsagePage(
  db: Kysely<Database>,
  accountId: bigint,
  query: { from: Date; to: Date; granularity: 'hour' | 'day'; after?: UsagePosition; limit: number }
): Promise<{ rows: UsageExportRow[]; next: UsagePosition | undefined }> {
  const rows = await readUsagePage(db, { ...query, accountId, limit: query.limit + 1 })
  if (rows.length <= query.limit) return { rows, next: undefined }
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)!
  return { rows: page, next: { start: last.start, keyId: last.keyId } }
}
