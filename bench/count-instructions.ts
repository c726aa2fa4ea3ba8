/**
 * `npm run bench:count:instructions`: the instructions PostgreSQL spends on one counting statement,
 * which a shared machine does not swing as it swings CPU time. A private cluster (initdb of
 * COUNT_PG_BIN, PostgreSQL 15 by default, in a temporary folder) is migrated to this tree's head and
 * given COUNT_KEYS (4,000) `plans` keys as `bench:count` gives them; every account is counted once,
 * the plans' limits are raised so that nothing is refused, and the cluster is stopped. Then, for 1, 8
 * and 50 accounts, a single-user backend on a fresh copy of the cluster runs under
 * `valgrind --tool=callgrind` a script of 10 prepared count_units statements of warm-up and N more,
 * and again with 2N (N = 40, 20 and 8), each statement on accounts of its own; the difference over N
 * is a statement's instructions. Needs valgrind; as root, the cluster runs as the user postgres.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { COUNT_STATEMENT, issueInBulk, issueKeySet, openBenchDatabase } from './database.js'

const BIN = process.env.COUNT_PG_BIN ?? '/usr/lib/postgresql/15/bin'
const KEYS = Number(process.env.COUNT_KEYS ?? 4_000)
const PORT = 54_329
const BATCHES = [
  { accounts: 1, statements: 40 },
  { accounts: 8, statements: 20 },
  { accounts: 50, statements: 8 }
]
const WARM_UP = 10

/** Runs a program as the cluster's owner: the user postgres when this runs as root. */
function asOwner(command: string, args: string[], input?: string): string {
  const root = process.getuid?.() === 0
  return execFileSync(root ? 'runuser' : command, root ? ['-u', 'postgres', '--', command, ...args] : args, {
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['pipe', 'pipe', 'pipe']
  })
}

const owned = (path: string) => {
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', path])
}

// On one line: the single-user backend ends a statement at each newline.
const PREPARE = `PREPARE c(bigint[], bigint[], integer[]) AS ${COUNT_STATEMENT.replace(/\s+/g, ' ').trim()}`

/** Instructions of a single-user backend running `statements` statements of `accounts` accounts each. */
function instructions(cluster: string, folder: string, keys: string[][], accounts: number, statements: number): number {
  const data = join(folder, 'run')
  rmSync(data, { recursive: true, force: true })
  cpSync(cluster, data, { recursive: true })
  owned(data)
  const lines = [PREPARE]
  for (let s = 0; s < WARM_UP + statements; s++) {
    const set = keys.slice(s * accounts, (s + 1) * accounts)
    const list = (values: (string | number)[]) => `'{${values.join(',')}}'`
    const costs = set.map((_, i) => (i % 8 === 7 ? 2 : 1))
    lines.push(`EXECUTE c(${list(set.map((k) => k[0]!))}, ${list(set.map((k) => k[1]!))}, ${list(costs)})`)
  }
  const script = join(folder, 'script.sql')
  writeFileSync(script, lines.join('\n') + '\n')
  owned(script)
  const out = asOwner('sh', [
    '-c',
    `valgrind --tool=callgrind --callgrind-out-file=/dev/null ${BIN}/postgres --single -D ${data} animal_store_bench < ${script} 2>&1 >/dev/null`
  ])
  const collected = /Collected : (\d+)/.exec(out)
  if (!collected) throw new Error(`no instruction count from valgrind:\n${out.slice(-2000)}`)
  return Number(collected[1])
}

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'animal-store-instructions-'))
  const cluster = join(folder, 'cluster')
  owned(folder)
  try {
    asOwner(`${BIN}/initdb`, ['-D', cluster, '-U', 'postgres', '-A', 'trust'])
    const start = [
      '-D',
      cluster,
      '-o',
      `-p ${PORT} -k ${folder} -c listen_addresses=127.0.0.1`,
      '-l',
      join(folder, 'log')
    ]
    asOwner(`${BIN}/pg_ctl`, [...start, '-w', 'start'])
    let keys: string[][]
    try {
      const database = await openBenchDatabase({ BENCH_DATABASE_URL: `postgres://postgres@127.0.0.1:${PORT}/postgres` })
      const { db } = database.handle
      await issueKeySet(issueInBulk(db), { kind: 'plans', count: KEYS }, join(folder, 'keys'))
      await sql`UPDATE plan_limits SET "limit" = 1000000000 WHERE plan LIKE 'bench-%'`.execute(db)
      // Each account's counters made, as the common case finds them.
      await sql`
        SELECT count(*) FROM api_keys k
        CROSS JOIN LATERAL count_units(ARRAY[k.id], ARRAY[k.account_id], '{1}', '{1}', '{0}', '{0}', '{10}', '{60}',
          '{}', '{}', '{}', '{}', '{}') AS c
      `.execute(db)
      await sql`VACUUM ANALYZE`.execute(db)
      const { rows } = await sql<{ key: string; account: string }>`
        SELECT id::text AS key, account_id::text AS account FROM api_keys ORDER BY id
      `.execute(db)
      keys = rows.map((row) => [row.key, row.account])
      await database.stop()
    } finally {
      asOwner(`${BIN}/pg_ctl`, ['-D', cluster, '-w', 'stop'])
    }
    console.log(`count_units on ${BIN}, ${KEYS} accounts each counted once; instructions a statement:`)
    console.log('| accounts | N | instructions a statement |')
    console.log('|---:|---:|---:|')
    for (const { accounts, statements } of BATCHES) {
      const once = instructions(cluster, folder, keys, accounts, statements)
      const twice = instructions(cluster, folder, keys, accounts, 2 * statements)
      console.log(`| ${accounts} | ${statements} | ${((twice - once) / statements / 1e6).toFixed(3)} M |`)
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
