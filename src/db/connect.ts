import type { Socket } from 'node:net'
import pg from 'pg'
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import { isDatabaseUnavailable } from '../errors.js'
import type { Database } from './schema.js'
import { prepareStatementsOn } from './statements.js'

const INT8_OID = 20
const DATE_OID = 1082

// int8 columns arrive as BigInt: ids and category ids use the whole int64 range and never pass
// through a lossy JS number. date columns (UTC days) stay YYYY-MM-DD, never shifted by a time zone.
const parseInt8 = (value: string) => BigInt(value)
const keepText = (value: string) => value
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format === 'binary') return pg.types.getTypeParser(oid, format)
    if (oid === INT8_OID) return parseInt8
    if (oid === DATE_OID) return keepText
    return pg.types.getTypeParser(oid, format)
  }
}

export interface DatabaseOptions {
  url: string
  /**
   * A direct session connection for LISTEN; `url` when unset. When it differs from `url`, `url` may
   * be a transaction pooler, and no statement is prepared under a name there.
   */
  directUrl?: string
  poolMax?: number
  /** How long a request waits for a connection or a connect before failing fast with 503. */
  timeoutMs?: number
  /**
   * How long a query waits for its answer before failing with 503 (a frozen or unreachable server
   * answers nothing); the connection is then discarded. Unset: no limit (migrations, the CLI).
   */
  queryTimeoutMs?: number
  applicationName?: string
}

export interface DatabaseHandle {
  url: string
  /** Where dedicated session connections go (a LISTEN), never through a transaction pooler. */
  directUrl: string
  db: Kysely<Database>
  pool: pg.Pool
  /**
   * The rate limiter's own connections (COUNTING_CONNECTIONS), on `url` like the pool: a request that
   * must be counted waits for its count, which in the pool queued behind other requests' queries.
   */
  counting: pg.Pool
  close(): Promise<void>
}

/** Connections of the counting pool: one counting statement is under way at a time, and a usage report may overlap it. */
const COUNTING_CONNECTIONS = 2

export function connectDatabase(options: DatabaseOptions): DatabaseHandle {
  const timeoutMs = options.timeoutMs ?? 2000
  const applicationName = options.applicationName ?? 'animal-store'
  const newPool = (max: number, name: string, onConnect?: (client: pg.ClientBase) => Promise<void>) => {
    const pool = new pg.Pool({
      connectionString: options.url,
      max,
      connectionTimeoutMillis: timeoutMs,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: name,
      types,
      // Awaited by pg-pool before the connection is handed out, so that its first query does not queue
      // behind it; @types/pg has it return void.
      onConnect: onConnect as ((client: pg.ClientBase) => void) | undefined
    })
    // An idle client whose server went away emits 'error'; the pool discards it and the next query reconnects.
    pool.on('error', () => {})
    // A DATABASE_DIRECT_URL of its own says that `url` may be a transaction pooler, where a named
    // prepared statement would not survive the transaction; otherwise `url` holds sessions (it carries
    // LISTEN too) and the hot statements are prepared once per connection.
    if (options.directUrl === undefined || options.directUrl === options.url) prepareStatementsOn(pool)
    const stopWatching = options.queryTimeoutMs ? endOverdueConnections(pool, options.queryTimeoutMs) : () => {}
    return { pool, stopWatching }
  }
  const main = newPool(options.poolMax ?? 10, applicationName)
  // The limiter's statements take arrays, whose contents make PostgreSQL plan them afresh on every
  // run when it may choose: a key's lookup-and-count spent 0.4 ms of its 1.2 planning
  // (docs/benchmark.md). Only where sessions are held: a transaction pooler would pass it on.
  const genericPlans =
    options.directUrl === undefined || options.directUrl === options.url
      ? async (client: pg.ClientBase) => {
          await client.query('SET plan_cache_mode = force_generic_plan').catch(() => {})
        }
      : undefined
  const counting = newPool(COUNTING_CONNECTIONS, `${applicationName}-counting`, genericPlans)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: discardingFailedConnections(main.pool) }) })
  return {
    url: options.url,
    directUrl: options.directUrl ?? options.url,
    db,
    pool: main.pool,
    counting: counting.pool,
    close: async () => {
      main.stopWatching()
      counting.stopWatching()
      await Promise.all([db.destroy(), counting.pool.end()])
    }
  }
}

/**
 * A small pool of its own for work that holds a connection across a slow call (the webhook worker
 * holds an endpoint's lock while it sends): outside the request pool and its watchdog, with each
 * query bounded by `queryTimeoutMs` on its own timer instead.
 */
export function connectDedicated(options: {
  url: string
  max: number
  queryTimeoutMs: number
  applicationName: string
}) {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max,
    connectionTimeoutMillis: options.queryTimeoutMs,
    query_timeout: options.queryTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: options.applicationName,
    types
  })
  pool.on('error', () => {})
  // A connection out of the pool (held across a send) that its server ends emits 'error': the failure
  // reaches the query that uses it, and the process must not die of the event.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, close: () => db.destroy() }
}

/**
 * Ends every connection that has been out of the pool for `timeoutMs` (its server answers nothing:
 * frozen, or unreachable): its query fails at once as a lost connection, a 503, and the pool drops
 * it. Client-side, because a server-side statement_timeout cannot be sent at connect through
 * PgBouncer 1.18; one timer for the pool, because pg's per-query query_timeout timer kept every
 * request in flight alive through a garbage collection or two
 * (docs/history/benchmark.md#measurements-behind-the-code). Every query here is one statement, so time out is
 * time answering.
 */
function endOverdueConnections(pool: pg.Pool, timeoutMs: number): () => void {
  const outSince = new Map<pg.PoolClient, number>()
  // The failure reaches the query; the client's own 'error' event needs a listener while it is out.
  pool.on('connect', (client) => client.on('error', () => {}))
  pool.on('acquire', (client) => outSince.set(client, Date.now()))
  pool.on('release', (_error: Error | undefined, client: pg.PoolClient) => outSince.delete(client))
  const timer = setInterval(
    () => {
      const overdue = Date.now() - timeoutMs
      for (const [client, since] of outSince) {
        if (since > overdue) continue
        outSince.delete(client)
        // pg has no public way to abandon a connection that answers nothing: its socket is ended here.
        ;(client as unknown as { connection: { stream: Socket } }).connection.stream.destroy()
      }
    },
    Math.min(250, timeoutMs / 4)
  )
  timer.unref()
  return () => clearInterval(timer)
}

/**
 * The pool as Kysely uses it. Kysely hands a connection back without saying whether it failed, and a
 * connection whose query timed out still waits for that answer: it is discarded, not reused, and
 * anything sent on it afterwards (a transaction's rollback) fails at once instead of waiting again.
 */
function discardingFailedConnections(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect()
      let failure: Error | undefined
      const query = async (text: string, parameters: unknown[]) => {
        if (failure) throw failure
        try {
          return await client.query(text, parameters)
        } catch (error) {
          if (isDatabaseUnavailable(error)) failure = error as Error
          throw error
        }
      }
      // Kysely calls the cursor form only when a cursor class is configured; none is.
      return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release(failure) }
    },
    end: () => pool.end()
  }
}
