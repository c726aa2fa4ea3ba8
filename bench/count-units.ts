/**
 * `npm run bench:count`: what one counting statement costs PostgreSQL, by how many accounts it
 * counts. COUNT_KEYS (4,000) `plans` keys are issued in bulk, half on bench-free and half on
 * bench-pro (a minute, a day and a calendar month; `POST /v1/pets` costs 2). Then, on one
 * connection, statements of count_units for 1, 10 and 50 accounts, each account counted once per
 * round so that no statement finds another's lock: COUNT_ROUNDS (5) rounds, each first counting
 * accounts not counted before (their counters are made) and then the same accounts again (their
 * counters are updated, the common case). Prints the medians, per statement and per account.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import pg from 'pg'
import { issueInBulk, issueKeySet, openBenchDatabase } from './database.js'
import { median } from './report.js'

const KEYS = Number(process.env.COUNT_KEYS ?? 4_000)
const ROUNDS = Number(process.env.COUNT_ROUNDS ?? 5)
const BATCHES = [1, 10, 50]

const STATEMENT = `
  SELECT * FROM count_units($1::bigint[], $2::bigint[], $3::integer[], $3::integer[],
    array_fill(0, ARRAY[cardinality($1)]), array_fill(0::float8, ARRAY[cardinality($1)]),
    array_fill(10, ARRAY[cardinality($1)]), array_fill(60, ARRAY[cardinality($1)]),
    '{}', '{}', '{}', '{}', '{}')
`

interface Account {
  keyId: string
  accountId: string
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
    const first = await timed(client, rows.slice(0, 1))
    let next = 1
    const take = (n: number) => {
      if (next + n > rows.length) throw new Error(`COUNT_KEYS=${KEYS} is too few for ${ROUNDS} rounds`)
      return rows.slice(next, (next += n))
    }
    const results: { batch: number; made: number[]; updated: number[] }[] = BATCHES.map((batch) => ({
      batch,
      made: [],
      updated: []
    }))
    for (let round = 0; round < ROUNDS; round++) {
      for (const result of results) {
        const accounts = take(result.batch)
        result.made.push(await timed(client, accounts))
        result.updated.push(await timed(client, accounts))
      }
    }
    await client.end()
    const { rows: version } = await sql<{ v: string }>`SELECT version() AS v`.execute(database.handle.db)
    console.log(`count_units on ${database.description}; ${version[0]!.v.split(',')[0]}`)
    console.log(`first statement of a connection (1 account): ${first.toFixed(2)} ms`)
    console.log('| accounts | counters made: ms | µs/account | counters updated: ms | µs/account |')
    console.log('|---:|---:|---:|---:|---:|')
    for (const { batch, made, updated } of results) {
      const m = median(made)
      const u = median(updated)
      console.log(
        `| ${batch} | ${m.toFixed(2)} | ${((m * 1000) / batch).toFixed(0)} | ${u.toFixed(2)} | ${((u * 1000) / batch).toFixed(0)} |`
      )
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
    await database.stop()
  }
}

/** Wall milliseconds of one counting statement for these accounts, each asking a unit (a POST asks 2). */
async function timed(client: pg.Client, accounts: Account[]): Promise<number> {
  const costs = accounts.map((_, i) => (i % 8 === 7 ? 2 : 1))
  const started = performance.now()
  const { rows } = await client.query(STATEMENT, [
    accounts.map((account) => account.keyId),
    accounts.map((account) => account.accountId),
    costs
  ])
  const ms = performance.now() - started
  if (rows.length !== accounts.length || rows.some((row: { admitted: boolean }) => !row.admitted)) {
    throw new Error(`count_units did not admit each of ${accounts.length} accounts once`)
  }
  return ms
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
