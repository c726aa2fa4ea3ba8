import { sql } from 'kysely'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import type { TestDatabase } from './database.js'

/**
 * 30 keys by 200 hours from `start`, each hour 1 admitted for 2 units: 6,000 rows, past the 5,000 the
 * export reads at a time.
 */
export async function usageGrid(database: TestDatabase, start: number) {
  const keys = await Promise.all(Array.from({ length: 30 }, () => issueApiKey(database.db, { plan: 'free' })))
  await sql`
    INSERT INTO api_key_usage (api_key_id, hour, admitted, refused, units)
    SELECT k, ${new Date(start)}::timestamptz + h * interval '1 hour', 1, 0, 2
    FROM unnest(${keys.map((key) => key.id.toString())}::bigint[]) AS k, generate_series(0, 199) AS h
  `.execute(database.db)
  return { from: new Date(start).toISOString(), to: new Date(start + 200 * 3_600_000).toISOString() }
}
