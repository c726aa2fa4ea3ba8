/**
 * `npm run bench:flood`: requests without a key from many client addresses, through a trusted proxy,
 * at a fixed rate or as fast as they are answered, beside keyed traffic at a steady rate; then
 * FLOOD_ADMIN_CALLS calls to the admin API. Reports what the flood left in the database, the
 * service's peak RSS, what holds its memory after each and after a quiet, and the keyed requests'
 * p99 and errors against the same traffic without the flood.
 */
import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { sql } from 'kysely'
import { issueInBulk, issueThroughAdmin, openBenchDatabase, type BenchDatabase } from './database.js'
import { memoryMB, peakRssMB, resetPeakRss, startServer, type ServedProcess } from './processes.js'
import { RESULTS_DIR } from './report.js'
import { wrkReport } from './wrk.js'

const ADDRESSES = Number(process.env.FLOOD_ADDRESSES ?? 500_000)
const SECONDS = Number(process.env.FLOOD_SECONDS ?? 60)
// The issue's probe: 750,000 requests in 60 s. 0 sends each connection's next as soon as its last is answered.
const FLOOD_PER_SECOND = Number(process.env.FLOOD_PER_SECOND ?? 12_500)
const KEYED_PER_SECOND = Number(process.env.FLOOD_KEYED_PER_SECOND ?? 100)
const CONNECTIONS = Number(process.env.FLOOD_CONNECTIONS ?? 64)
const ROUNDS = Number(process.env.FLOOD_ROUNDS ?? 3)
// Seconds of quiet after the last round before the service's memory is read again.
const QUIET_SECONDS = Number(process.env.FLOOD_QUIET_SECONDS ?? 60)
// Keys issued through the admin API after the flood's quiet, then quiet again.
const ADMIN_CALLS = Number(process.env.FLOOD_ADMIN_CALLS ?? 10_000)
// Passed on to the service when set, to compare allocator, V8 and connection-cap settings.
const PASSED_ON = ['MALLOC_ARENA_MAX', 'NODE_OPTIONS', 'MAX_CONNECTIONS'].flatMap((name) =>
  process.env[name] ? [[name, process.env[name]] as const] : []
)
const FLOOD_SCRIPT = join(import.meta.dirname, '..', '..', 'bench', 'wrk', 'flood.lua')

const log = (line: string) => process.stderr.write(`${line}\n`)

interface Keyed {
  sent: number
  errors: number
  p50Ms: number
  p99Ms: number
}

/** Keyed requests at a fixed rate, each timed from when it was due (open loop), for `seconds`. */
async function keyedTraffic(origin: string, key: string, seconds: number): Promise<Keyed> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const latencies: number[] = []
  let errors = 0
  const paths = ['/v1/pets?limit=20', '/v1/pets/1', '/v1/rate_limit']
  const one = (path: string, due: number) =>
    new Promise<void>((resolve) => {
      const sent = request(`${origin}${path}`, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
        response.resume()
        response.on('end', () => {
          if (response.statusCode !== 200) errors++
          latencies.push(performance.now() - due)
          resolve()
        })
      })
      sent.setTimeout(10_000, () => sent.destroy(new Error('timeout')))
      sent.on('error', () => {
        errors++
        latencies.push(performance.now() - due)
        resolve()
      })
      sent.end()
    })
  const start = performance.now()
  const total = seconds * KEYED_PER_SECOND
  const inFlight: Promise<void>[] = []
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / KEYED_PER_SECOND
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    inFlight.push(one(paths[i % paths.length]!, due))
  }
  await Promise.all(inFlight)
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (share: number) => Math.round(latencies[Math.floor(share * (latencies.length - 1))]! * 10) / 10
  return { sent: total, errors, p50Ms: at(0.5), p99Ms: at(0.99) }
}

async function flood(
  origin: string,
  firstAddress: number
): Promise<{ requests: number; perSecond: number; statuses: Record<string, number> }> {
  const args = [
    '-t1',
    `-c${CONNECTIONS}`,
    `-d${SECONDS}s`,
    '--timeout',
    '10s',
    '-s',
    FLOOD_SCRIPT,
    `${origin}/v1/pets`,
    '--',
    String(ADDRESSES),
    String(FLOOD_PER_SECOND),
    String(firstAddress)
  ]
  const report = await wrkReport<{ requests: number; durationUs: number; statuses: Record<string, number> }>(
    args,
    'FLOOD_RESULT'
  )
  return {
    requests: report.requests,
    perSecond: Math.round(report.requests / (report.durationUs / 1e6)),
    statuses: report.statuses
  }
}

/** The counting table's windows: one per window of each account counted, so none for requests without a key. */
async function counterRows(database: BenchDatabase) {
  const { rows } = await sql<{ rows: string; bytes: string }>`
    SELECT count(*) AS rows, pg_total_relation_size('account_counters') AS bytes FROM limit_counters
  `.execute(database.handle.db)
  return { rows: Number(rows[0]!.rows), megabytes: Number(rows[0]!.bytes) / 1e6 }
}

/** Connection attempts the kernel dropped at a full accept queue, machine-wide (TcpExt ListenDrops): each waits out a SYN retry. */
function listenDrops(): number {
  const [names, values] = readFileSync('/proc/net/netstat', 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('TcpExt:'))
    .map((line) => line.split(' '))
  return Number(values![names!.indexOf('ListenDrops')])
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!

const database = await openBenchDatabase(process.env)
let service: ServedProcess | undefined
try {
  const [key] = await issueInBulk(database.handle.db).issue([
    { plan: 'enterprise', limits: { perMinute: 100_000_000, perDay: 100_000_000 } }
  ])
  // As an operator runs it (LOG_LEVEL info, the admin listener on); the flood arrives through a
  // proxy the service trusts, so every request names its own address.
  service = await startServer('service', {
    databaseUrl: database.url,
    logLevel: 'info',
    admin: true,
    env: { TRUST_PROXY: '127.0.0.1/32', ...Object.fromEntries(PASSED_ON) }
  })
  const memoryAtStart = await memoryMB(service.pid, service.metrics!)
  const pace = FLOOD_PER_SECOND > 0 ? `${FLOOD_PER_SECOND.toLocaleString('en')} req/s` : 'as fast as answered'
  const before = await counterRows(database)
  const rounds = []
  const rss = { alone: 0, flood: 0, admin: 0 }
  // Keyed p99 moves a lot from minute to minute on a shared machine: each round measures it alone just before the flood.
  for (let round = 0; round < ROUNDS; round++) {
    log(`Round ${round + 1} of ${ROUNDS}: keyed traffic alone, ${KEYED_PER_SECOND} req/s for ${SECONDS} s`)
    resetPeakRss(service.pid)
    const alone = await keyedTraffic(service.origin, key!, SECONDS)
    rss.alone = Math.max(rss.alone, peakRssMB(service.pid))
    log(
      `  the flood: ${ADDRESSES.toLocaleString('en')} new addresses, ${pace}, ${CONNECTIONS} connections, keyed traffic beside it`
    )
    resetPeakRss(service.pid)
    const dropsBefore = listenDrops()
    const [flooded, beside] = await Promise.all([
      flood(service.origin, round * ADDRESSES),
      keyedTraffic(service.origin, key!, SECONDS)
    ])
    rss.flood = Math.max(rss.flood, peakRssMB(service.pid))
    const dropped = listenDrops() - dropsBefore
    const p99Ratio = Math.round((beside.p99Ms / alone.p99Ms) * 100) / 100
    rounds.push({ flood: { ...flooded, dropped }, keyed: { alone, beside, p99Ratio } })
    log(
      `  flood ${flooded.requests.toLocaleString('en')} requests (${flooded.perSecond.toLocaleString('en')}/s), statuses ${JSON.stringify(flooded.statuses)}, ${dropped.toLocaleString('en')} connection attempts dropped at a full accept queue; keyed p99 ${alone.p99Ms} ms alone, ${beside.p99Ms} ms beside: ${p99Ratio}x`
    )
  }
  const after = await counterRows(database)
  const memoryAfterFlood = await memoryMB(service.pid, service.metrics!)
  const quiet = async () => {
    log(`Quiet for ${QUIET_SECONDS} s`)
    await new Promise((resolve) => setTimeout(resolve, QUIET_SECONDS * 1000))
    return memoryMB(service!.pid, service!.metrics!)
  }
  const memoryAfterQuiet = await quiet()
  log(`${ADMIN_CALLS.toLocaleString('en')} admin calls: keys issued through POST /admin/v1/keys`)
  resetPeakRss(service.pid)
  await issueThroughAdmin(service.admin!.origin, service.admin!.token).issue(
    Array.from({ length: ADMIN_CALLS }, () => ({ plan: 'free' }))
  )
  rss.admin = peakRssMB(service.pid)
  const memoryAfterAdmin = await memoryMB(service.pid, service.metrics!)
  const memoryAfterAdminQuiet = await quiet()
  const memory = {
    atStart: memoryAtStart,
    afterFlood: memoryAfterFlood,
    afterQuiet: memoryAfterQuiet,
    afterAdmin: memoryAfterAdmin,
    afterAdminQuiet: memoryAfterAdminQuiet
  }
  const mb = (each: Record<string, number>) =>
    `RSS ${each.rss}, heap used ${each.heapUsed} of ${each.heapTotal} (old ${each.oldSpace}, new ${each.newSpace}), external ${each.external}; ${each.sockets} sockets open`

  const ratio = median(rounds.map((r) => r.keyed.p99Ratio))
  const errors = rounds.reduce((sum, r) => sum + r.keyed.alone.errors + r.keyed.beside.errors, 0)
  const result = {
    date: new Date().toISOString(),
    addresses: ADDRESSES,
    seconds: SECONDS,
    floodPerSecond: FLOOD_PER_SECOND,
    connections: CONNECTIONS,
    keyedPerSecond: KEYED_PER_SECOND,
    rounds,
    keyed: { p99RatioMedian: ratio, errors },
    peakRssMB: rss,
    memoryMB: memory,
    passedOn: Object.fromEntries(PASSED_ON),
    counterRows: { before, after }
  }
  const flooded = rounds.map((r) => r.flood.requests)
  const lines = [
    `flood: ${ROUNDS} rounds of ${SECONDS} s, ${pace}, ${CONNECTIONS} connections: ${flooded.map((n) => n.toLocaleString('en')).join(', ')} requests`,
    `counter rows: ${before.rows} before the first round, ${after.rows} after (the keyed account's windows), table ${after.megabytes.toFixed(2)} MB`,
    `peak RSS: ${rss.alone} MB keyed alone, ${rss.flood} MB with the flood (goal: under 250 MB), ${rss.admin} MB during the admin calls`,
    `memory (MB) at start: ${mb(memory.atStart)}`,
    `right after the flood: ${mb(memory.afterFlood)}`,
    `after ${QUIET_SECONDS} s of quiet: ${mb(memory.afterQuiet)} (goal: RSS under 200 MB)`,
    `right after ${ADMIN_CALLS.toLocaleString('en')} admin calls: ${mb(memory.afterAdmin)}`,
    `after ${QUIET_SECONDS} s of quiet: ${mb(memory.afterAdminQuiet)} (goal: RSS under 200 MB)`,
    ...(PASSED_ON.length ? [`passed on: ${PASSED_ON.map(([name, value]) => `${name}=${value}`).join(' ')}`] : []),
    `keyed p99 beside the flood / alone, each round: ${rounds.map((r) => `${r.keyed.p99Ratio}x`).join(', ')}; median ${ratio}x (goal: at most 3x); errors ${errors} of ${2 * ROUNDS * SECONDS * KEYED_PER_SECOND}`
  ]
  for (const line of lines) console.log(line)
  await mkdir(RESULTS_DIR, { recursive: true })
  await writeFile(
    join(RESULTS_DIR, `flood-${result.date.replace(/[:.]/g, '-')}.json`),
    `${JSON.stringify(result, null, 2)}\n`
  )
  const met =
    rss.flood < 250 && memory.afterQuiet.rss! < 200 && memory.afterAdminQuiet.rss! < 200 && ratio <= 3 && errors === 0
  process.exitCode = met ? 0 : 1
  console.log(met ? 'every goal met' : 'a goal was missed')
} finally {
  await service?.stop()
  await database.stop()
}
