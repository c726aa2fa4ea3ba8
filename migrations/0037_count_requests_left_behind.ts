import { sql, type Kysely } from 'kysely'
import { remakeFunctionFromBaseline } from './0028_baseline.js'

/**
 * count_requests with timestamptz arguments, the first counting function, was left behind when the
 * counting moved to count_units: only its later overload was dropped. No release has called it since
 * the one that replaced it, and it writes rate_limit_counters, which is gone, so any call fails.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    DROP FUNCTION count_requests(text[], bigint[], timestamptz[], timestamptz[], timestamptz[], integer[], integer[],
      integer[], integer[], integer[], integer[], bigint[], timestamptz[], integer[], integer[])
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await remakeFunctionFromBaseline(db, 'count_requests')
}
