/**
 * `npm run bench:count`: what one counting statement costs PostgreSQL, by how many accounts it
 * counts. COUNT_KEYS (4,000) `plans` keys are issued in bulk, half on bench-free and half on
 * bench-pro (a minute, a day and a calendar month; `POST /v1/pets` costs 2). Then, on one
 * connection and as one named prepared statement (as the service sends it), count_units for 1, 8 and
 * 50 accounts: COUNT_STATEMENTS (200, 100 and 40) statements, each on accounts of its own, so that no
 * statement finds another's lock; a first pass makes the accounts' counters, a second updates them
 * (the common case). Prints, for each pass, the median wall time of a statement, the CPU time the
 * database's backend process spent per statement (read from /proc, so the server must run on this
 * machine) and per account, and the WAL written per account; beside them, the floor's CPU a
 * statement on the same accounts: a heap-only update of each one's counter, committed asynchronously.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import pg from 'pg'
import { COUNT_STATEMENT, issueInBulk, issueKeySet, openBenchDatabase } from './database.js'
import { cpuSeconds } from './processes.js'
import { median } from './report.js'

/** CPU milliseconds the backend has spent so far, from /proc (ticks of 10 ms). */
const backendCpuMs = (pid: number) => cpuSeconds(pid) * 1000

const KEYS = Number(process.env.COUNT_KEYS ?? 4_000)
/** Statements per batch size: enough that the backend's CPU ticks (10 ms each) add up to a figure. */
const BATCHES = [
  { accounts: 1, statements: Number(process.env.COUNT_STATEMENTS ?? 200) },
  { accounts: 8, statements: Math.ceil(Number(process.env.COUNT_STATEMENTS ?? 200) / 2) },
  { accounts: 50, statements: Math.ceil(Number(process.env.COUNT_STATEMENTS ?? 200) / 5) }
]

interface Account {
  keyId: string
  accountId: string
}

/** A batch size's passes: its counters made, then updated, and the floor on the same accounts. */
interface Result {
  accounts: number
  statements: number
  made: Pass
  updated: Pass
  floorCpuMs: number
}

/** What a pass of statements cost. */
interface Pass {
  wallMs: number[]
  cpuMs: number
  walBytes: number
}

async function main() {
  const database = await openBenchDatabase(process.env)
  const folder = await mkdtemp(join(tmpdir(), 'animal-store-count-'))
  try {
    await issueKeySet(issueInBulk(database.handle.db), { kind: 'plans', count: KEYS }, join(folder, 'keys'))
    const { rows } = await sql<Account>`
      SELECT id::text AS "keyId", account_id::text AS "accountId" FROM api_keys ORDER BY id
    `.execute(database.handle.db)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
    let next = 0
    const take = (n: number) => {
      if (next + n > rows.length) throw new Error(`COUNT_KEYS=${KEYS} is too few for these statements`)
      return rows.slice(next, (next += n))
    }
    const results: Result[] = []
    for (const batch of BATCHES) {
      const sets = Array.from({ length: batch.statements }, () => take(batch.accounts))
      const made = await pass(client, backend, sets)
      const updated = await pass(client, backend, sets)
      results.push({ ...batch, made, updated, floorCpuMs: await floor(client, backend, sets) })
    }
    await client.end()
    const { rows: version } = await sql<{ v: string }>`SELECT version() AS v`.execute(database.handle.db)
    console.log(`count_units on ${database.description}; ${version[0]!.v.split(',')[0]}`)
    console.log(
      '| accounts | statements | counters made: wall ms | counters updated: wall ms | backend CPU ms | µs/account | WAL B/account | the floor: backend CPU ms |'
    )
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const { accounts, statements, made, updated, floorCpuMs } of results) {
      const cpu = updated.cpuMs / statements
      console.log(
        `| ${accounts} | ${statements} | ${median(made.wallMs).toFixed(2)} | ${median(updated.wallMs).toFixed(2)} | ` +
          `${cpu.toFixed(2)} | ${((cpu * 1000) / accounts).toFixed(0)} | ` +
          `${(updated.walBytes / statements / accounts).toFixed(0)} | ${(floorCpuMs / statements).toFixed(3)} |`
      )
    }
    const [one, , fifty] = results
    const past = (cpuMs: (result: Result) => number) =>
      ((cpuMs(fifty!) / fifty!.statements - cpuMs(one!) / one!.statements) / 49) * 1000
    console.log(
      `backend CPU an account past the first, from 1 to 50: ${past((result) => result.updated.cpuMs).toFixed(0)} µs, ` +
        `the floor ${past((result) => result.floorCpuMs).toFixed(0)} µs`
    )
  } finally {
    await rm(folder, { recursive: true, force: true })
    await database.stop()
  }
}

const walPosition = async (client: pg.Client) =>
  (await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn

/** One statement for each set of accounts, each asking a unit (a POST asks 2), and what they cost. */
async function pass(client: pg.Client, backend: number, sets: Account[][]): Promise<Pass> {
  const walBefore = await walPosition(client)
  const cpuBefore = backendCpuMs(backend)
  const wallMs = []
  for (const accounts of sets) {
    const costs = accounts.map((_, i) => (i % 8 === 7 ? 2 : 1))
    const started = performance.now()
    const { rows } = await client.query({
      name: 'count',
      text: COUNT_STATEMENT,
      values: [accounts.map((account) => account.keyId), accounts.map((account) => account.accountId), costs]
    })
    wallMs.push(performance.now() - started)
    if (rows.length !== accounts.length || rows.some((row: { admitted: boolean }) => !row.admitted)) {
      throw new Error(`count_units did not admit each of ${accounts.length} accounts once`)
    }
  }
  const cpuMs = backendCpuMs(backend) - cpuBefore
  const { rows } = await client.query<{ bytes: string }>(
    'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1)::bigint::text AS bytes',
    [walBefore]
  )
  return { wallMs, cpuMs, walBytes: Number(rows[0]!.bytes) }
}

/** Passes of the floor over the same statements: its CPU is a tenth of count_units', and /proc counts it in ticks of 10 ms. */
const FLOOR_PASSES = 10

// The least PostgreSQL must do to count exactly across instances: one heap-only update of each
// account's counter row, committed without waiting for the flush, as count_units commits.
const FLOOR_STATEMENT = `
  WITH asynchronous AS (SELECT set_config('synchronous_commit', 'off', true))
  UPDATE account_counters k SET used[1] = k.used[1] + 1
  FROM unnest($1::bigint[]) AS a(id), asynchronous
  WHERE k.account_id = a.id
`

/** The floor's backend CPU over FLOOR_PASSES passes of the same statements, in ms a pass. */
async function floor(client: pg.Client, backend: number, sets: Account[][]): Promise<number> {
  const cpuBefore = backendCpuMs(backend)
  for (let round = 0; round < FLOOR_PASSES; round++) {
    for (const accounts of sets) {
      const { rowCount } = await client.query({
        name: 'floor',
        text: FLOOR_STATEMENT,
        values: [accounts.map((account) => account.accountId)]
      })
      if (rowCount !== accounts.length) throw new Error(`the floor updated ${rowCount} of ${accounts.length} counters`)
    }
  }
  return (backendCpuMs(backend) - cpuBefore) / FLOOR_PASSES
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
