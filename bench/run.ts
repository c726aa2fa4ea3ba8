/**
 * `npm run bench`: the service and its baselines on one database, scenario by scenario and round by
 * round, with wrk. Prints the tables and the goals, and writes the run to bench/results/ (not in
 * git); `npm run bench:docs` puts the latest into docs/.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import {
  issueInBulk,
  issueKeySet,
  issueThroughAdmin,
  openBenchDatabase,
  primeKeys,
  restorePets,
  roundTrips,
  type BenchDatabase,
  type KeyIssuer
} from './database.js'
import { startOtlpReceiver } from '../harness/otlp-receiver.js'
import { checkoutCommit } from '../harness/processes.js'
import { MEASURED_FILE, monotonicMicros, type MeasuredWindow } from './profile.js'
import {
  countingStatements,
  cpuSeconds,
  peakRssMB,
  resetPeakRss,
  serverCpuSeconds,
  startRedis,
  startServer,
  type ServedProcess
} from './processes.js'
import { benchmarkBlock, RESULTS_DIR, type BenchResults, type RunRecord } from './report.js'
import { ADMIN_KEYS_MAX, BenchError, readSettings, type KeySet, type Scenario } from './settings.js'
import { runWrk, wrkVersion } from './wrk.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

/** Every baseline answers the one key's reads with the service's bytes, so they compare like with like. */
async function checkAgree(servers: ServedProcess[], key: string): Promise<void> {
  for (const path of ['/v1/pets?limit=20', '/v1/pets?status=available&limit=100', '/v1/pets/1']) {
    const [service, ...others] = await Promise.all(
      servers.map(async ({ origin }) => {
        const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${key}` } })
        return `${response.status} ${await response.text()}`
      })
    )
    const differing = others.findIndex((body) => body !== service)
    if (differing >= 0 || !service!.startsWith('200 ')) {
      const other = differing >= 0 ? `\nthe ${servers[differing + 1]!.name} ${others[differing]!.slice(0, 200)}` : ''
      throw new BenchError(`GET ${path}: the service answers ${service!.slice(0, 200)}${other}`)
    }
  }
}

async function main() {
  const settings = readSettings(process.env)
  const wrk = wrkVersion()
  const checkout = checkoutCommit(['src', 'migrations', 'bench', 'package-lock.json'])
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-bench-run-'))
  const started: ServedProcess[] = []
  let database: BenchDatabase | undefined
  let sink: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined
  try {
    database = await openBenchDatabase(process.env, { countStatements: true })
    const { postmasterPid: postmaster } = database
    const postgresCpu = () => (postmaster === undefined ? undefined : serverCpuSeconds(postmaster))
    const machine = [
      `${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
      `Node ${process.version}; ${database.description}; ${wrk}`
    ]
    machine.forEach(log)
    const redis = settings.baselines.includes('redis') ? await startRedis() : undefined
    if (redis) started.push(redis)
    const base = { databaseUrl: database.url }
    sink = settings.tracing === undefined ? undefined : await startOtlpReceiver()
    const service = await startServer('service', {
      ...base,
      logLevel: settings.logLevel,
      admin: settings.keysThroughAdmin,
      env: sink && {
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: String(settings.tracing)
      }
    })
    if (sink) log(`Tracing on, ${settings.tracing! * 100} % of requests sampled, spans sent in protobuf to ${sink.url}`)
    started.push(service)
    for (const name of settings.baselines) {
      const logLevel = settings.baselineLogLevel
      started.push(await startServer(name, { ...base, logLevel, admin: false, redisUrl: redis?.origin }))
    }
    const servers = started.filter((each) => each !== redis)

    const bulk = issueInBulk(database.handle.db)
    const admin = service.admin && issueThroughAdmin(service.admin.origin, service.admin.token)
    // A million requests to the admin API would take most of an hour: larger sets go in bulk.
    const issuerOf = ({ count }: KeySet): KeyIssuer => (admin && count <= ADMIN_KEYS_MAX ? admin : bulk)
    const one: KeySet = { kind: 'one', count: 1 }
    const [key] = await issueKeySet(issuerOf(one), one, join(dir, 'one.txt'))
    const keySets = new Map<Scenario, { file: string; keys: string[] }>()
    for (const scenario of settings.scenarios.filter((each) => each.keys.kind !== 'one')) {
      const began = performance.now()
      const file = join(dir, `keys-${scenario.id}.txt`)
      const issue = issuerOf(scenario.keys)
      keySets.set(scenario, { file, keys: await issueKeySet(issue, scenario.keys, file) })
      const how = issue === admin ? 'through the admin API' : 'in bulk'
      log(`Issued the keys of ${scenario.id} ${how} in ${((performance.now() - began) / 1000).toFixed(1)} s`)
    }
    await checkAgree(servers, key!)

    const runs: RunRecord[] = []
    // When each run was measured, on the clock of the servers' CPU profiles (BENCH_CPU_PROFILE).
    const measured: MeasuredWindow[] = []
    const total = settings.rounds * settings.scenarios.length * servers.length
    log(`${settings.setup} setup: ${total} runs of ${settings.warmupSeconds} s + ${settings.durationSeconds} s`)
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [index, scenario] of settings.scenarios.entries()) {
        // Which server goes first rotates from scenario to scenario and round to round.
        const shift = (round + index) % servers.length
        for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
          const keys = keySets.get(scenario)
          const load = {
            dir,
            origin: server.origin,
            connections: settings.connections,
            ...(keys ? { keyFile: keys.file } : { key })
          }
          if (settings.resetBeforeEach) await restorePets(database)
          if (settings.prime && scenario.primed && server === service) await primeKeys(server.origin, keys!.keys)
          resetPeakRss(server.pid)
          await runWrk(scenario, { ...load, seconds: settings.warmupSeconds })
          const counting = () => (server.metrics ? countingStatements(server.metrics) : undefined)
          const countingBefore = await counting()
          const [cpuBefore, tripsBefore, postgresBefore] = [
            cpuSeconds(server.pid),
            await roundTrips(database),
            postgresCpu()
          ]
          const measuredFrom = monotonicMicros()
          const result = await runWrk(scenario, { ...load, seconds: settings.durationSeconds })
          const measuredTo = monotonicMicros()
          const [cpuAfter, tripsAfter, postgresAfter] = [
            cpuSeconds(server.pid),
            await roundTrips(database),
            postgresCpu()
          ]
          const countingAfter = await counting()
          measured.push({
            server: server.name,
            scenario: scenario.id,
            round,
            from: measuredFrom,
            to: measuredTo,
            requests: result.requests
          })
          if (scenario.writes) await restorePets(database)
          const record: RunRecord = {
            round,
            scenario: scenario.id,
            server: server.name,
            ...result,
            requestsPerSecond: Math.round(result.requestsPerSecond),
            peakRssMB: peakRssMB(server.pid),
            cpuUsPerRequest: Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests),
            postgresCpuUsPerRequest:
              postgresAfter === undefined || postgresBefore === undefined
                ? null
                : Math.round(((postgresAfter - postgresBefore) * 1e6) / result.requests),
            roundTripsPerRequest: Math.round(((tripsAfter - tripsBefore) / result.requests) * 100) / 100,
            ...(countingBefore &&
              countingAfter && {
                counting: {
                  statements: countingAfter.statements - countingBefore.statements,
                  accounts: countingAfter.accounts - countingBefore.accounts,
                  seconds: countingAfter.seconds - countingBefore.seconds
                }
              })
          }
          runs.push(record)
          const { requestsPerSecond, errors } = record
          log(
            `[${runs.length}/${total}] round ${round} ${scenario.id} ${server.name}: ${requestsPerSecond} req/s, ${errors} errors`
          )
        }
      }
    }

    const results: BenchResults = {
      generatedAt: new Date().toISOString(),
      commit: checkout,
      machine,
      settings: { ...settings, scenarios: settings.scenarios.map((scenario) => scenario.id) },
      runs
    }
    if (sink) log(`The sink received ${sink.exports.count} exports, ${Math.round(sink.exports.bytes / 2 ** 20)} MiB`)
    const json = `${JSON.stringify(results, null, 2)}\n`
    await mkdir(RESULTS_DIR, { recursive: true })
    await writeFile(join(RESULTS_DIR, `${results.generatedAt.replace(/[:.]/g, '-')}.json`), json)
    await writeFile(join(RESULTS_DIR, 'latest.json'), json)
    if (process.env.BENCH_CPU_PROFILE) {
      // Each server writes its profile there when it exits, below.
      await mkdir(process.env.BENCH_CPU_PROFILE, { recursive: true })
      await writeFile(join(process.env.BENCH_CPU_PROFILE, MEASURED_FILE), `${JSON.stringify(measured, null, 2)}\n`)
    }
    process.stdout.write(`\n${benchmarkBlock(results).join('\n')}\n\nWritten to bench/results/latest.json.\n`)
  } finally {
    for (const each of started.reverse()) await each.stop().catch(() => {})
    await database?.stop().catch((error) => log(`Could not stop the database: ${String(error)}`))
    await sink?.close()
    await rm(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  const message =
    error instanceof BenchError
      ? error.message
      : `Benchmark failed: ${error instanceof Error ? error.stack : String(error)}`
  process.stderr.write(`${message}\n`)
  process.exitCode = 1
})
