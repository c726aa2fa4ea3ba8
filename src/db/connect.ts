import pg from 'pg'
import { Kysely, PostgresDialect } from 'kysely'
import type { Database } from './schema.js'

const INT8_OID = 20

// int8 columns arrive as BigInt: ids and category ids use the whole int64 range and never pass
// through a lossy JS number.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => BigInt(value)
    return pg.types.getTypeParser(oid, format)
  }
}

export interface DatabaseOptions {
  url: string
  poolMax?: number
  /** How long a request waits for a connection or a connect before failing fast with 503. */
  timeoutMs?: number
  applicationName?: string
}

export interface DatabaseHandle {
  /** Where it connects: for dedicated connections such as a LISTEN. */
  url: string
  db: Kysely<Database>
  pool: pg.Pool
  close(): Promise<void>
}

export function connectDatabase(options: DatabaseOptions): DatabaseHandle {
  const timeoutMs = options.timeoutMs ?? 2000
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: timeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: options.applicationName ?? 'animal-store',
    types
  })
  // An idle client whose server went away emits 'error'; the pool discards it and the next query reconnects.
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return {
    url: options.url,
    db,
    pool,
    close: () => db.destroy()
  }
}
