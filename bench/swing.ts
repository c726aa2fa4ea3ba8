/**
 * `npm run bench:swing`: what moves the service's req/s from one window to the next. The service
 * alone, as an operator runs it (LOG_LEVEL info, its 10,000 `plans` keys issued through the admin
 * API, no priming), serves `plans` in SWING_WINDOWS (24) back-to-back wrk runs of SWING_SECONDS (5)
 * each. Per window: req/s and p99, the service's CPU per request, its garbage collection (prom-client's
 * `nodejs_gc_duration_seconds`, scraped from its metrics listener), what PostgreSQL did meanwhile to
 * the tables the counting path writes (updates, HOT updates, autovacuum and autoanalyze runs), and
 * checkpoints. Prints a table, then what the slow windows had that the others did not.
 * SWING_FILLFACTOR sets the counting tables' fillfactor first.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { issueKeySet, issueThroughAdmin, openBenchDatabase, type BenchDatabase } from './database.js'
import { cpuSeconds, startServer, type ServedProcess } from './processes.js'
import { median } from './report.js'
import { SCENARIOS } from './settings.js'
import { runWrk } from './wrk.js'

const WINDOWS = Number(process.env.SWING_WINDOWS ?? 24)
/** A fillfactor to set on the counting tables before any row is written, to see what HOT updates change. */
const FILLFACTOR = process.env.SWING_FILLFACTOR ? Number(process.env.SWING_FILLFACTOR) : undefined
const SECONDS = Number(process.env.SWING_SECONDS ?? 5)
/** The tables a counted request writes to. */
const TABLES = ['account_counters', 'api_key_usage']

const log = (line: string) => process.stderr.write(`${line}\n`)

interface Sample {
  at: number
  cpu: number
  gcSeconds: Record<string, number>
  tables: Record<string, { updates: number; hot: number; dead: number; autovacuum: number; autoanalyze: number }>
  checkpoints: number
}

/** prom-client's GC duration sums by kind (major, minor, incremental, weakcb), in seconds. */
async function gcSeconds(metricsOrigin: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${metricsOrigin}/metrics`)).text()
  const sums: Record<string, number> = {}
  for (const match of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([\d.e+-]+)$/gm)) {
    sums[match[1]!] = Number(match[2])
  }
  return sums
}

async function sample(database: BenchDatabase, service: ServedProcess): Promise<Sample> {
  const db = database.handle.db
  const { rows: tables } = await sql<{
    relname: string
    n_tup_upd: string
    n_tup_hot_upd: string
    n_dead_tup: string
    autovacuum_count: string
    autoanalyze_count: string
  }>`
    SELECT relname, n_tup_upd, n_tup_hot_upd, n_dead_tup, autovacuum_count, autoanalyze_count
    FROM pg_stat_user_tables WHERE relname = ANY(${TABLES})
  `.execute(db)
  // pg_stat_checkpointer from PostgreSQL 17, pg_stat_bgwriter before.
  const { rows: checkpoints } = await sql<{ count: string }>`
    SELECT CASE WHEN to_regclass('pg_catalog.pg_stat_checkpointer') IS NULL THEN 0 ELSE 1 END AS count
  `.execute(db)
  const newer = Number(checkpoints[0]!.count) === 1
  const { rows: counted } = newer
    ? await sql<{ count: string }>`SELECT num_timed + num_requested AS count FROM pg_stat_checkpointer`.execute(db)
    : await sql<{ count: string }>`
        SELECT checkpoints_timed + checkpoints_req AS count FROM pg_stat_bgwriter
      `.execute(db)
  return {
    at: performance.now(),
    cpu: cpuSeconds(service.pid),
    gcSeconds: await gcSeconds(service.metrics!),
    tables: Object.fromEntries(
      tables.map((row) => [
        row.relname,
        {
          updates: Number(row.n_tup_upd),
          hot: Number(row.n_tup_hot_upd),
          dead: Number(row.n_dead_tup),
          autovacuum: Number(row.autovacuum_count),
          autoanalyze: Number(row.autoanalyze_count)
        }
      ])
    ),
    checkpoints: Number(counted[0]!.count)
  }
}

async function main() {
  const scenario = SCENARIOS.find((each) => each.id === 'plans')!
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-swing-'))
  let database: BenchDatabase | undefined
  let service: ServedProcess | undefined
  try {
    database = await openBenchDatabase(process.env)
    if (FILLFACTOR !== undefined) {
      for (const table of TABLES) {
        await sql`ALTER TABLE ${sql.table(table)} SET (fillfactor = ${sql.lit(FILLFACTOR)})`.execute(database.handle.db)
      }
    }
    service = await startServer('service', { databaseUrl: database.url, logLevel: 'info', admin: true })
    const file = join(dir, 'keys.txt')
    await issueKeySet(issueThroughAdmin(service.admin!.origin, service.admin!.token), scenario.keys, file)
    // PostgreSQL publishes its table statistics about once a second.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 1100))
    const load = { dir, origin: service.origin, keyFile: file, connections: 32 }
    await runWrk(scenario, { ...load, seconds: 2 })
    const rows: string[][] = []
    const windows: { rps: number; gcMs: number; autovacuum: boolean; checkpoint: boolean; hotShare: number }[] = []
    for (let window = 1; window <= WINDOWS; window++) {
      await settle()
      const before = await sample(database, service)
      const result = await runWrk(scenario, { ...load, seconds: SECONDS })
      await settle()
      const after = await sample(database, service)
      const gc = (kind: string) => ((after.gcSeconds[kind] ?? 0) - (before.gcSeconds[kind] ?? 0)) * 1000
      const table = (name: string) => {
        const [a, b] = [after.tables[name], before.tables[name]]
        if (!a || !b) return { updates: 0, hot: 0, dead: a?.dead ?? 0, autovacuum: 0, autoanalyze: 0 }
        return {
          updates: a.updates - b.updates,
          hot: a.hot - b.hot,
          dead: a.dead,
          autovacuum: a.autovacuum - b.autovacuum,
          autoanalyze: a.autoanalyze - b.autoanalyze
        }
      }
      const counters = table('account_counters')
      const usage = table('api_key_usage')
      const checkpoints = after.checkpoints - before.checkpoints
      const gcMs = gc('major') + gc('minor') + gc('incremental') + gc('weakcb')
      const updates = counters.updates + usage.updates
      const hotShare = updates ? (counters.hot + usage.hot) / updates : 1
      windows.push({
        rps: result.requestsPerSecond,
        gcMs,
        autovacuum: counters.autovacuum + usage.autovacuum > 0,
        checkpoint: checkpoints > 0,
        hotShare
      })
      rows.push([
        String(window),
        Math.round(result.requestsPerSecond).toLocaleString('en'),
        result.p99Ms.toFixed(1),
        String(Math.round(((after.cpu - before.cpu) * 1e6) / result.requests)),
        gc('minor').toFixed(0),
        (gc('major') + gc('incremental')).toFixed(0),
        `${counters.updates} (${counters.hot} HOT)`,
        `${usage.updates} (${usage.hot} HOT)`,
        `${counters.autovacuum}/${usage.autovacuum}`,
        `${counters.autoanalyze}/${usage.autoanalyze}`,
        `${counters.dead}/${usage.dead}`,
        String(checkpoints)
      ])
      log(`window ${window}: ${Math.round(result.requestsPerSecond)} req/s`)
    }
    const head = [
      'window',
      'req/s',
      'p99 ms',
      'CPU µs/req',
      'GC minor ms',
      'GC major ms',
      'counter updates',
      'usage updates',
      'autovacuum c/u',
      'autoanalyze c/u',
      'dead rows c/u',
      'checkpoints'
    ]
    const lines = [
      `| ${head.join(' | ')} |`,
      `|${head.map(() => '---:').join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`)
    ]
    const rps = windows.map((each) => each.rps)
    const middle = median(rps)
    const slow = windows.filter((each) => each.rps < middle * 0.85)
    const share = (list: typeof windows, pick: (each: (typeof windows)[number]) => boolean) =>
      `${list.filter(pick).length} of ${list.length}`
    lines.push(
      '',
      `req/s: median ${Math.round(middle)}, lowest ${Math.round(Math.min(...rps))}, highest ${Math.round(Math.max(...rps))}.`,
      `Windows under 0.85 × the median: ${slow.length}; with an autovacuum of a counting table ${share(slow, (each) => each.autovacuum)} ` +
        `(all windows: ${share(windows, (each) => each.autovacuum)}); with a checkpoint ${share(slow, (each) => each.checkpoint)} ` +
        `(all: ${share(windows, (each) => each.checkpoint)}); GC ms median ${slow.length ? median(slow.map((each) => each.gcMs)).toFixed(0) : '-'} ` +
        `(all: ${median(windows.map((each) => each.gcMs)).toFixed(0)}).`
    )
    process.stdout.write(`${lines.join('\n')}\n`)
  } finally {
    await service?.stop().catch(() => {})
    await database?.stop().catch(() => {})
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
