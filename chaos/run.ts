// `npm run chaos`: the service under load while faults are injected on a seeded schedule, every
// request in a ledger, and a checker that reads the ledger, the database and a read-back afterwards.
// Exits 1 when an invariant broke or a fault did not happen. CHAOS_SECONDS (default 180) sets the
// length of the run, CHAOS_SEED (default: a fresh one, printed) the schedule. CHAOS_UPGRADE_FROM=<commit>
// runs a rolling upgrade from that commit's release to this checkout's instead of the faults.
import { randomInt } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { checkoutCommit, ROOT } from '../harness/processes.js'
import { TOOLS } from '../harness/programs.js'
import { check, type PetRow } from './checker.js'
import { nodeCopies, readIdempotency } from './database.js'
import { runFault, type FaultRecord } from './faults.js'
import { Ledger, type LedgerPet } from './ledger.js'
import { issueKeys, keyInfo, Load } from './load.js'
import { readBack, type ReadBack } from './readback.js'
import { chartSvg, describeViolations, petsCsv, reportMarkdown, summarize, summaryTable } from './report.js'
import { describeSchedule, makeSchedule, makeUpgradeSchedule, random, seedFrom } from './schedule.js'
import { LIBFAKETIME, PG_AUTOCTL, queryOnce, sleep, startTopology, type Topology } from './topology.js'
import {
  checkoutRelease,
  migrate,
  releaseKeyIssuer,
  resolveCommit,
  type Release,
  type UpgradeRecord
} from './upgrade.js'

const seconds = Number(process.env.CHAOS_SECONDS ?? 180)
if (!Number.isInteger(seconds) || seconds < 30) {
  console.error('CHAOS_SECONDS must be a whole number of seconds, at least 30')
  process.exit(2)
}

let seed: number
try {
  seed = seedFrom(process.env.CHAOS_SEED, () => randomInt(0, 2 ** 32))
} catch (error) {
  console.error((error as Error).message)
  process.exit(2)
}
let upgradeFrom: string | undefined
try {
  upgradeFrom = process.env.CHAOS_UPGRADE_FROM ? resolveCommit(process.env.CHAOS_UPGRADE_FROM) : undefined
} catch (error) {
  console.error((error as Error).message)
  process.exit(2)
}
const schedule = upgradeFrom === undefined ? makeSchedule(seed, seconds) : makeUpgradeSchedule(seed)

const programs = [
  { path: PG_AUTOCTL, package: 'postgresql-15-auto-failover' },
  { path: LIBFAKETIME, package: 'libfaketime' },
  ...(['nginx', 'haproxy', 'pgbouncer', 'psql'] as const).map((tool) => TOOLS[tool])
]
const missing = programs.filter((program) => !existsSync(program.path))
if (missing.length) {
  console.error(`npm run chaos needs: apt-get install -y ${missing.map((program) => program.package).join(' ')}`)
  process.exit(2)
}

/** The database's clock less this machine's, from the quickest of five readings. */
async function databaseClockOffset(url: string) {
  let best = { offsetMs: 0, roundTripMs: Infinity }
  for (let i = 0; i < 5; i++) {
    const before = Date.now()
    const [row] = await queryOnce<{ now: number }>(url, 'SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now')
    const after = Date.now()
    if (after - before < best.roundTripMs) {
      best = { offsetMs: Math.round(Number(row!.now) - (before + after) / 2), roundTripMs: after - before }
    }
  }
  return best
}

const startedAt = Date.now()
const log = (message: string) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${message}`)
const commit = checkoutCommit(['src', 'migrations', 'chaos', 'harness', 'deploy', 'package-lock.json'])
const folder = join(ROOT, 'reports/chaos', new Date(startedAt).toISOString().replace(/[:.]/g, '-'))
await mkdir(join(folder, 'logs'), { recursive: true })

const head: Release = { commit: commit.split(' ')[0]!, folder: ROOT }
let previous: (Release & { remove(): Promise<void> }) | undefined
let topology: Topology | undefined
let load: Load | undefined
let stopping: Promise<void> | undefined
/** Stops everything the run started, once, whatever called it. */
const stopEverything = () =>
  (stopping ??= (async () => {
    await load?.stop(5000).catch(() => {})
    await topology?.stop().catch(() => {})
    await previous?.remove().catch(() => {})
  })())

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping everything`)
    void stopEverything().finally(() => process.exit(130))
  })
}
// Everything is bounded; this catches what is not: the schedule, setup and tear-down together.
const watchdog = setTimeout(
  () => {
    log('the run took too long: stopping everything')
    void stopEverything().finally(() => process.exit(1))
  },
  (seconds + 900) * 1000
)

try {
  log(
    `CHAOS_SEED=${seed} CHAOS_SECONDS=${seconds}${upgradeFrom ? ` CHAOS_UPGRADE_FROM=${upgradeFrom}` : ''}: replay with the same values`
  )
  for (const line of describeSchedule(schedule)) log(`  ${line}`)
  if (upgradeFrom !== undefined) {
    log(`checking out the previous release, ${upgradeFrom}; the instances start from it`)
    previous = await checkoutRelease(upgradeFrom, log)
  }
  log(`starting the topology; report in ${folder}`)
  topology = await startTopology({
    logs: join(folder, 'logs'),
    // A ban of 20 s rather than 15 min: banned keys come back and are banned again within a run.
    instanceEnv: { LOG_LEVEL: 'warn', TRUST_PROXY: '127.0.0.1', BAN_SECONDS: '20' },
    release: previous ?? head
  })
  const running = topology
  log(`nginx at ${running.url}; instances ${running.instances.map((i) => `${i.name}:${i.port}`).join(', ')}`)
  const databaseClock = await databaseClockOffset(running.directUrl)
  log(
    `the database's clock is ${databaseClock.offsetMs} ms from this machine's (round trip ${databaseClock.roundTripMs} ms)`
  )
  // In an upgrade the previous release issues them, as it issued the keys clients hold when it begins.
  const { clients, reader } = await issueKeys(
    running.directUrl,
    random(seed ^ 0x5bd1e995),
    previous ? await releaseKeyIssuer(previous) : undefined
  )
  const keys = clients.map(keyInfo)
  await writeFile(join(folder, 'keys.json'), `${JSON.stringify(keys, null, 1)}\n`)
  log(
    `${clients.length} keys in ${new Set(keys.map((key) => key.accountId)).size} accounts issued${previous ? ` by ${previous.commit}` : ''}`
  )

  const ledger = new Ledger(join(folder, 'ledger.jsonl'))
  load = new Load({
    url: running.url,
    ledger,
    clients,
    backgroundRate: 40,
    instanceAt: running.instanceAt,
    random: random(seed + 1)
  })
  const loadStart = Date.now()
  load.start()

  // Two lanes, each one fault at a time: the database's faults and the instances' overlap. In an
  // upgrade, the migration runs first, while the previous release serves, then the instances' lane.
  const faults: FaultRecord[] = []
  const context = {
    topology: running,
    entries: ledger.entries,
    log: (line: string) => log(`  ${line}`),
    upgradeTo: head
  }
  const upgrade: UpgradeRecord | undefined = previous && { from: previous.commit, to: head.commit, migration: null }
  if (upgrade) {
    await sleep(schedule.migrateAfterMs ?? 0)
    log(`migrating the database to ${head.commit} while the instances of ${upgrade.from} serve`)
    upgrade.migration = await migrate(running.directUrl)
    log(
      `  migration ${upgrade.migration.ok ? 'done' : 'FAILED'} in ${upgrade.migration.endedAt - upgrade.migration.at} ms: ${upgrade.migration.output}`
    )
  }
  await Promise.all(
    (['database', 'instances'] as const).map(async (lane) => {
      for (const fault of schedule.faults.filter((scheduled) => scheduled.lane === lane)) {
        await sleep(fault.pauseMs)
        log(`fault #${fault.id}: ${fault.kind}`)
        faults.push(await runFault(fault, context))
      }
    })
  )
  faults.sort((a, b) => a.at - b.at)
  // Liveness is checked in each whole minute without a fault: the load runs on through one at least.
  const lastFaultEnd = Math.max(...faults.map((fault) => Math.max(fault.undoneAt, fault.at + (fault.recoveredMs ?? 0))))
  const quietEnd = (Math.ceil((lastFaultEnd + 2000) / 60_000) + 1) * 60_000 + 1000
  const loadEnds = Math.max(loadStart + seconds * 1000, quietEnd)
  log(`the load runs until ${new Date(loadEnds).toISOString()}, through a whole minute without a fault`)
  await sleep(Math.max(0, loadEnds - Date.now()))
  log('stopping the load')
  await load.stop()
  const loadEnd = Date.now()
  await ledger.close()

  // Every acknowledged pet, read back through nginx as a client would.
  const acknowledged = new Map<string, LedgerPet>()
  for (const entry of ledger.entries) if (entry.status === 201 && entry.pet) acknowledged.set(entry.pet.id, entry.pet)
  log(`reading back ${acknowledged.size} acknowledged pets`)
  const readBackResult: ReadBack | null = await readBack(running.url, reader, [...acknowledged.values()]).catch(
    (error: unknown) => {
      log(`read-back failed: ${error instanceof Error ? error.message : String(error)}`)
      return null
    }
  )
  await writeFile(join(folder, 'readback.json'), `${JSON.stringify(readBackResult, null, 1)}\n`)

  // Read from the primary, through HAProxy.
  const pets = await queryOnce<PetRow>(
    running.directUrl,
    'SELECT id::text, name, category_id::text AS "categoryId", status FROM pets ORDER BY id',
    60_000
  )
  await writeFile(join(folder, 'pets.csv'), petsCsv(pets))
  const idempotency = await readIdempotency(running.directUrl).catch((error: unknown) => {
    log(`idempotency_keys not read: ${error instanceof Error ? error.message : String(error)}`)
    return null
  })
  await writeFile(join(folder, 'idempotency.json'), `${JSON.stringify(idempotency)}\n`)
  log('comparing the two database nodes once the standby has caught up')
  const nodes = await nodeCopies(running).catch((error: unknown) => {
    log(`nodes not compared: ${error instanceof Error ? error.message : String(error)}`)
    return null
  })
  await writeFile(join(folder, 'nodes.json'), `${JSON.stringify(nodes, null, 1)}\n`)
  await stopEverything()

  const { report, violations } = check({
    entries: ledger.entries,
    keys,
    pets,
    faults,
    schedule: schedule.faults,
    readBack: readBackResult,
    databaseClockOffsetMs: databaseClock.offsetMs,
    load: { from: loadStart, to: loadEnd },
    idempotency,
    nodes,
    upgrade
  })
  const meta = {
    seed,
    commit,
    startedAt: new Date(startedAt).toISOString(),
    seconds,
    loadSeconds: (loadEnd - loadStart) / 1000,
    load: { from: loadStart, to: loadEnd },
    databaseClock,
    schedule: schedule.faults
  }
  const full = { ...meta, ...report }
  await writeFile(join(folder, 'report.json'), `${JSON.stringify(full, null, 2)}\n`)
  await writeFile(join(folder, 'report.md'), reportMarkdown(full))
  await writeFile(join(folder, 'summary.json'), `${JSON.stringify(summarize(full), null, 2)}\n`)
  await writeFile(
    join(folder, 'chart.svg'),
    chartSvg(
      ledger.entries,
      faults,
      `Responses per second by status, chaos run of ${meta.startedAt.slice(0, 16)} at ${commit}, seed ${seed}`
    )
  )
  console.log(`\n${summaryTable(report)}\n`)
  console.log(`CHAOS_SEED=${seed} CHAOS_SECONDS=${seconds}`)
  if (violations.length) {
    console.log(describeViolations(violations))
    console.log(`\n${violations.length} invariant(s) broken; report in ${folder}`)
    process.exitCode = 1
  } else {
    console.log(`Every invariant held; report in ${folder}`)
  }
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await stopEverything()
  clearTimeout(watchdog)
}
