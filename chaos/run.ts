// `npm run chaos`: the service under load while faults are injected on a schedule, every request in
// a ledger, and a checker that reads the ledger and the database afterwards. Exits 1 when an
// invariant broke or a fault did not happen. CHAOS_SECONDS (default 180) sets the length of the run.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ROOT } from '../harness/processes.js'
import { TOOLS } from '../harness/programs.js'
import { check, type PetRow } from './checker.js'
import { FAULT_KINDS, runFault, type FaultRecord } from './faults.js'
import { Ledger } from './ledger.js'
import { issueKeys, keyInfo, Load } from './load.js'
import { chartSvg, describeViolations, petsCsv, summaryTable } from './report.js'
import { LIBFAKETIME, PG_AUTOCTL, queryOnce, sleep, startTopology, type Topology } from './topology.js'

const seconds = Number(process.env.CHAOS_SECONDS ?? 180)
if (!Number.isInteger(seconds) || seconds < 30) {
  console.error('CHAOS_SECONDS must be a whole number of seconds, at least 30')
  process.exit(2)
}

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

const startedAt = Date.now()
const log = (message: string) => console.log(`[${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${message}`)
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
})()
const folder = join(ROOT, 'reports/chaos', new Date(startedAt).toISOString().replace(/[:.]/g, '-'))
await mkdir(join(folder, 'logs'), { recursive: true })

let topology: Topology | undefined
let load: Load | undefined
let stopping: Promise<void> | undefined
/** Stops everything the run started, once, whatever called it. */
const stopEverything = () =>
  (stopping ??= (async () => {
    await load?.stop(5000).catch(() => {})
    await topology?.stop().catch(() => {})
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
  log(`starting the topology; report in ${folder}`)
  topology = await startTopology({
    logs: join(folder, 'logs'),
    // A ban of 20 s rather than 15 min: banned keys come back and are banned again within a run.
    instanceEnv: { LOG_LEVEL: 'warn', TRUST_PROXY: '127.0.0.1', BAN_SECONDS: '20' }
  })
  log(`nginx at ${topology.url}; instances ${topology.instances.map((i) => `${i.name}:${i.port}`).join(', ')}`)
  const clients = await issueKeys(topology.directUrl)
  const keys = clients.map(keyInfo)
  await writeFile(join(folder, 'keys.json'), `${JSON.stringify(keys, null, 1)}\n`)
  log(`${clients.length} keys issued`)

  const ledger = new Ledger(join(folder, 'ledger.jsonl'))
  load = new Load({
    url: topology.url,
    ledger,
    clients,
    backgroundRate: 40,
    instanceAt: topology.instanceAt
  })
  const loadStart = Date.now()
  load.start()

  // The schedule scales with the run: quiet gaps of a twentieth, the clock a third ahead (at most a minute).
  const gapMs = Math.max(4000, (seconds * 1000) / 20)
  const clockAheadForMs = Math.min(60_000, Math.max(10_000, (seconds * 1000) / 3))
  const faults: FaultRecord[] = []
  await sleep(gapMs)
  for (const kind of FAULT_KINDS) {
    log(`fault: ${kind}`)
    faults.push(
      await runFault(kind, { topology, entries: ledger.entries, clockAheadForMs, log: (line) => log(`  ${line}`) })
    )
    await sleep(gapMs)
  }
  await sleep(Math.max(0, loadStart + seconds * 1000 - Date.now()))
  log('stopping the load')
  await load.stop()
  await ledger.close()

  // Read from the primary, through HAProxy.
  const pets = await queryOnce<PetRow>(
    topology.directUrl,
    'SELECT id::text, name, category_id::text AS "categoryId", status FROM pets ORDER BY id',
    60_000
  )
  await writeFile(join(folder, 'pets.csv'), petsCsv(pets))
  await stopEverything()

  const { report, violations } = check({ entries: ledger.entries, keys, pets, faults })
  const meta = {
    commit,
    startedAt: new Date(startedAt).toISOString(),
    seconds,
    loadSeconds: (Date.now() - loadStart) / 1000
  }
  await writeFile(join(folder, 'report.json'), `${JSON.stringify({ ...meta, ...report }, null, 2)}\n`)
  await writeFile(
    join(folder, 'chart.svg'),
    chartSvg(
      ledger.entries,
      faults,
      `Responses per second by status, chaos run of ${meta.startedAt.slice(0, 16)} at ${commit}`
    )
  )
  console.log(`\n${summaryTable(report)}\n`)
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
