/**
 * `npm run bench`: the service and the bare Fastify + pg baseline, side by side on the same
 * database, scenario by scenario and round by round, with wrk. Prints a table of medians and the
 * goals, and writes the same as JSON to bench/results/<timestamp>.json and latest.json.
 */
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  BenchError,
  MIXED_KEY_COUNT,
  PLAN_KEY_COUNT,
  PET_COUNT,
  SCENARIOS,
  checkServersAgree,
  describeMachine,
  ensureResultsDir,
  issueBenchKeys,
  machineFacts,
  makeWorkDir,
  openBenchDatabase,
  prepareWrkScripts,
  primeKeyCache,
  readSettings,
  restorePets,
  runWrk,
  startServer,
  totalErrors,
  wrkVersion,
  type BenchDatabase,
  type RunningServer
} from './harness.js'
import {
  SHARED_PERCENT,
  evaluateGoals,
  TABLE_NOTES,
  formatWarnings,
  formatGoals,
  formatTable,
  summarizeScenarios,
  type BenchResults,
  type RunRecord
} from './report.js'
import { accountCpu, peakRss, resetPeakRss, sampleProcesses, waitForQuiet, writeSyscalls } from './procfs.js'

const log = (line: string) => process.stderr.write(`${line}\n`)
const MB = 1024 * 1024
// Before each run, wait (up to BENCH_QUIET_WAIT s) until other processes take under this much of a core.
const QUIET_CORES = 0.1

const METHOD = [
  'Both servers run side by side on one database; each run loads one of them while the other idles.',
  'Every run is a warm-up of BENCH_WARMUP s (discarded) and a measurement of BENCH_DURATION s, wrk -t1 with BENCH_CONNECTIONS connections.',
  'Scenarios run in the order listed, reads before writes; within a pair, which server goes first alternates by scenario and round.',
  `After every run that writes, pets added are deleted, then VACUUM and CHECKPOINT, so every run starts on the same ${PET_COUNT} seeded pets.`,
  'Figures are medians over rounds; ratios are service median over baseline median. Peak RSS is VmHWM, reset before each run, maximum over rounds.'
]

async function main() {
  const settings = readSettings(process.env, { durationSeconds: 5, rounds: 3 })
  const wrk = wrkVersion()
  const scenarios = SCENARIOS.filter((scenario) => settings.scenarios.includes(scenario.id))
  const workDir = await makeWorkDir()
  let database: BenchDatabase | undefined
  const servers: RunningServer[] = []
  try {
    database = await openBenchDatabase(process.env, log)
    const keySets = scenarios.flatMap((scenario) => scenario.keys ?? [])
    log(`Seeded ${PET_COUNT} pets; issuing keys (${['one', ...new Set(keySets)].join(', ')})`)
    const keys = await issueBenchKeys(database, workDir, keySets)
    const scripts = await prepareWrkScripts(workDir)
    const facts = machineFacts(database, wrk)
    for (const line of describeMachine(facts)) log(line)

    const serverOptions = {
      databaseUrl: database.url,
      logLevel: settings.logLevel,
      key: keys.key,
      baseline: settings.baseline
    }
    const service = await startServer('service', serverOptions)
    servers.push(service)
    const baseline = await startServer('baseline', serverOptions)
    servers.push(baseline)
    await checkServersAgree(service, baseline, database, keys)
    let peakRssReset = true

    const runs: RunRecord[] = []
    const perRun = settings.warmupSeconds + settings.durationSeconds
    const total = settings.rounds * scenarios.length * 2
    log(
      `Measuring ${scenarios.length} scenarios × 2 servers × ${settings.rounds} rounds, ` +
        `${settings.warmupSeconds} s + ${settings.durationSeconds} s each: about ${Math.ceil((total * (perRun + 2)) / 60)} min, ` +
        'more while other processes keep the CPU busy'
    )
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [index, scenario] of scenarios.entries()) {
        const pair = (round + index) % 2 === 0 ? [service, baseline] : [baseline, service]
        for (const [order, server] of pair.entries()) {
          const run = {
            origin: server.origin,
            scenario,
            script: scripts.get(scenario.id)!,
            keys,
            connections: settings.connections,
            threads: settings.threads
          }
          const quiet =
            settings.quietWaitSeconds > 0 ? await waitForQuiet(settings.quietWaitSeconds, QUIET_CORES) : undefined
          if (server.name === 'service' && scenario.keys) await primeKeyCache(server, keys.files[scenario.keys]!)
          peakRssReset = resetPeakRss(server.pid) && peakRssReset
          await runWrk({ ...run, seconds: settings.warmupSeconds })
          const writesBefore = writeSyscalls(server.pid)
          const before = sampleProcesses()
          const result = await runWrk({ ...run, seconds: settings.durationSeconds })
          const cpu = accountCpu(before, sampleProcesses(), server.pid, database.embedded)
          const writes = writeSyscalls(server.pid) - writesBefore
          const perRequest = (seconds: number) => Math.round((seconds * 1e6) / result.requests)
          const record: RunRecord = {
            round,
            scenario: scenario.id,
            server: server.name,
            order: order + 1,
            requests: result.requests,
            requestsPerSecond: Math.round(result.requestsPerSecond),
            latencyMs: result.latencyMs,
            errors: result.errors,
            peakRssMB: Math.round((peakRss(server.pid) / MB) * 10) / 10,
            serverCpuUsPerRequest: perRequest(cpu.serverSeconds),
            postgresCpuUsPerRequest: cpu.postgresSeconds === null ? null : perRequest(cpu.postgresSeconds),
            writesPerRequest: Math.round((writes / result.requests) * 100) / 100,
            otherCpuPercent: Math.round((cpu.otherSeconds / cpu.seconds) * 100),
            machineCpuPercent: Math.round((cpu.machineSeconds / cpu.seconds) * 100),
            quietWaitSeconds: quiet ? Math.round(quiet.waitedSeconds) : 0
          }
          if (scenario.writes) record.petsAdded = await restorePets(database)
          runs.push(record)
          const errors = totalErrors(result)
          log(
            `[${runs.length}/${total}] round ${round} ${scenario.title} ${server.name}: ` +
              `${record.requestsPerSecond} req/s, p50 ${result.latencyMs.p50.toFixed(2)} ms, ` +
              `p99 ${result.latencyMs.p99.toFixed(2)} ms, ${record.serverCpuUsPerRequest} µs CPU/req, ` +
              `${record.writesPerRequest} writes/req, peak RSS ${record.peakRssMB} MB` +
              (record.otherCpuPercent >= SHARED_PERCENT
                ? `; other processes took ${record.otherCpuPercent} % of a core`
                : '') +
              (errors ? `, ${errors} ERRORS` : '')
          )
        }
      }
    }

    const summaries = summarizeScenarios(scenarios, runs)
    const results: BenchResults = {
      generatedAt: new Date().toISOString(),
      machine: facts,
      settings: { ...settings, pets: PET_COUNT, manyKeys: MIXED_KEY_COUNT, planKeys: PLAN_KEY_COUNT, peakRssReset },
      method: METHOD,
      scenarios: summaries,
      goals: evaluateGoals(summaries),
      runs
    }
    if (!peakRssReset) log('WARNING: the kernel refused to reset VmHWM; peak RSS figures are since each server started')
    const dir = await ensureResultsDir()
    const json = `${JSON.stringify(results, null, 2)}\n`
    const stamped = join(dir, `${results.generatedAt.replace(/[:.]/g, '-')}.json`)
    await writeFile(stamped, json)
    await writeFile(join(dir, 'latest.json'), json)

    const printed = [
      '',
      `Benchmark, ${results.generatedAt}`,
      ...describeMachine(facts),
      `wrk -t${settings.threads} -c${settings.connections}, ${settings.warmupSeconds} s warm-up + ` +
        `${settings.durationSeconds} s, ${settings.rounds} rounds, medians; ${PET_COUNT} pets; service LOG_LEVEL=${settings.logLevel}`,
      settings.baseline === 'spec'
        ? "Baseline: bare Fastify + pg with the specification's per-request work (BENCH_BASELINE=spec, bench/spec-floor.ts)"
        : 'Baseline: bare Fastify + pg (bench/baseline.ts)',
      '',
      formatTable(summaries),
      ...TABLE_NOTES,
      '',
      'Goals (2-core machine, ratios to the baseline in this run):',
      formatGoals(results.goals),
      ...formatWarnings(summaries, runs),
      '',
      `Written to ${stamped} and bench/results/latest.json`
    ]
    process.stdout.write(`${printed.join('\n')}\n`)
  } finally {
    for (const server of servers.reverse()) await server.stop().catch(() => {})
    await database?.stop().catch((error) => log(`Could not stop the database: ${String(error)}`))
    await rm(workDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  process.stderr.write(
    `${error instanceof BenchError ? error.message : `Benchmark failed: ${error instanceof Error ? error.stack : String(error)}`}\n`
  )
  process.exitCode = 1
})
