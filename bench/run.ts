/**
 * `npm run bench`: the service and its baselines on one database, scenario by scenario and round by
 * round, with wrk. Prints the tables and the goals, and writes every run to bench/results/ (not in
 * git); `npm run bench:docs` puts the latest into docs/.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import {
  issueInBulk,
  issueKeySet,
  issueThroughAdmin,
  openBenchDatabase,
  restorePets,
  transactions,
  type BenchDatabase
} from './database.js'
import { cpuSeconds, peakRssMB, resetPeakRss, startRedis, startServer, type RunningProcess } from './processes.js'
import { growthTable, RESULTS_DIR, resultsTable, verdicts, type BenchResults, type RunRecord } from './report.js'
import { BenchError, readSettings, type Scenario } from './settings.js'
import { runWrk, wrkVersion, writeScript } from './wrk.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

// Each key asked once before the run, so all are cached as in a fleet that keeps sending; above
// 10,000 keys they do not fit the key cache, and the tail is never primed.
const primed = (scenario: Scenario) =>
  (scenario.keys.kind === 'plans' || scenario.keys.kind === 'enterprise') && scenario.keys.count <= 10_000

async function prime(server: RunningProcess, keys: string[]): Promise<void> {
  const unique = [...new Set(keys)]
  let next = 0
  const worker = async () => {
    for (let i = next++; i < unique.length; i = next++) {
      const response = await fetch(`${server.origin}/v1/rate_limit`, {
        headers: { authorization: `Bearer ${unique[i]}` }
      })
      await response.arrayBuffer()
      if (response.status !== 200) throw new BenchError(`priming: GET /v1/rate_limit answered ${response.status}`)
    }
  }
  await Promise.all(Array.from({ length: 32 }, worker))
}

/** Every baseline answers the one key's reads with the service's bytes, so they compare like with like. */
async function checkAgree(servers: RunningProcess[], key: string): Promise<void> {
  for (const path of ['/v1/pets?limit=20', '/v1/pets?status=available&limit=100', '/v1/pets/1']) {
    const bodies = await Promise.all(
      servers.map(async (server) => {
        const response = await fetch(`${server.origin}${path}`, { headers: { authorization: `Bearer ${key}` } })
        return `${response.status} ${await response.text()}`
      })
    )
    const differing = servers.findIndex((_, i) => bodies[i] !== bodies[0])
    if (differing > 0 || !bodies[0]!.startsWith('200 ')) {
      throw new BenchError(
        `GET ${path}: the service answers ${bodies[0]!.slice(0, 200)}\nthe ${servers[Math.max(differing, 0)]!.name} ${bodies[Math.max(differing, 0)]!.slice(0, 200)}`
      )
    }
  }
}

function machine(database: BenchDatabase, wrk: string): { lines: string[]; commit: string } {
  let commit = 'unknown'
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim()
    commit = git('rev-parse', '--short=7', 'HEAD')
    if (git('status', '--porcelain', '--', 'src', 'migrations', 'bench', 'package-lock.json')) {
      commit += ' (with uncommitted changes)'
    }
  } catch {
    // Not a git checkout.
  }
  const lines = [
    `${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    `Node ${process.version}; PostgreSQL ${database.postgresVersion} (${database.description}); ${wrk}`
  ]
  return { lines, commit }
}

async function main() {
  const settings = readSettings(process.env)
  const wrk = wrkVersion()
  const workDir = await mkdtemp(join(tmpdir(), 'animal-store-bench-run-'))
  const started: RunningProcess[] = []
  let database: BenchDatabase | undefined
  try {
    database = await openBenchDatabase(process.env)
    const { lines, commit } = machine(database, wrk)
    lines.forEach((line) => log(line))
    const redis = settings.baselines.includes('redis') ? await startRedis() : undefined
    if (redis) started.push(redis)
    const base = { databaseUrl: database.url, logLevel: settings.logLevel }
    const service = await startServer('service', { ...base, admin: settings.keysThroughAdmin })
    started.push(service)
    for (const name of settings.baselines) {
      started.push(await startServer(name, { ...base, admin: false, redisUrl: redis?.origin }))
    }
    const servers = started.filter((each) => each !== redis)

    const issue = service.admin
      ? issueThroughAdmin(service.admin.origin, service.admin.token)
      : issueInBulk(database.handle.db)
    const [key] = await issueKeySet(issue, { kind: 'one' }, join(workDir, 'one.txt'))
    const keyFiles = new Map<Scenario, { file: string; keys: string[] }>()
    for (const scenario of settings.scenarios.filter((each) => each.keys.kind !== 'one')) {
      const began = performance.now()
      const file = join(workDir, `keys-${scenario.id}.txt`)
      keyFiles.set(scenario, { file, keys: await issueKeySet(issue, scenario.keys, file) })
      log(`Issued the keys of ${scenario.id} in ${((performance.now() - began) / 1000).toFixed(1)} s`)
    }
    await checkAgree(servers, key!)
    const scripts = new Map(
      await Promise.all(settings.scenarios.map(async (each) => [each, await writeScript(workDir, each)] as const))
    )

    const runs: RunRecord[] = []
    const total = settings.rounds * settings.scenarios.length * servers.length
    log(`${settings.setup} setup: ${total} runs of ${settings.warmupSeconds} s + ${settings.durationSeconds} s`)
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [index, scenario] of settings.scenarios.entries()) {
        // Which server goes first rotates from scenario to scenario and round to round.
        const shift = (round + index) % servers.length
        for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
          const keys = keyFiles.get(scenario)
          const run = {
            origin: server.origin,
            scenario,
            script: scripts.get(scenario)!,
            connections: settings.connections
          }
          const load = keys ? { ...run, keyFile: keys.file } : { ...run, key }
          if (settings.resetBeforeEach) await restorePets(database)
          if (settings.prime && keys && server === service && primed(scenario)) await prime(server, keys.keys)
          resetPeakRss(server.pid)
          await runWrk({ ...load, seconds: settings.warmupSeconds })
          const [cpuBefore, transactionsBefore] = [cpuSeconds(server.pid), await transactions(database)]
          const result = await runWrk({ ...load, seconds: settings.durationSeconds })
          const [cpuAfter, transactionsAfter] = [cpuSeconds(server.pid), await transactions(database)]
          if (scenario.writes) await restorePets(database)
          const record: RunRecord = {
            round,
            scenario: scenario.id,
            server: server.name,
            requests: result.requests,
            requestsPerSecond: Math.round(result.requestsPerSecond),
            p50Ms: result.p50Ms,
            p99Ms: result.p99Ms,
            errors: result.errors,
            peakRssMB: peakRssMB(server.pid),
            cpuUsPerRequest: Math.round(((cpuAfter - cpuBefore) * 1e6) / result.requests),
            roundTripsPerRequest: Math.round(((transactionsAfter - transactionsBefore) / result.requests) * 100) / 100
          }
          runs.push(record)
          log(
            `[${runs.length}/${total}] round ${round} ${scenario.id} ${server.name}: ${record.requestsPerSecond} req/s, ` +
              `p99 ${record.p99Ms} ms, ${record.cpuUsPerRequest} µs CPU/req, ${record.roundTripsPerRequest} round trips/req, ` +
              `peak RSS ${record.peakRssMB} MB${record.errors ? `, ${record.errors} ERRORS` : ''}`
          )
        }
      }
    }

    const results: BenchResults = {
      generatedAt: new Date().toISOString(),
      commit,
      machine: lines,
      settings: { ...settings, scenarios: settings.scenarios.map((scenario) => scenario.id) },
      runs
    }
    await mkdir(RESULTS_DIR, { recursive: true })
    const json = `${JSON.stringify(results, null, 2)}\n`
    await writeFile(join(RESULTS_DIR, `${results.generatedAt.replace(/[:.]/g, '-')}.json`), json)
    await writeFile(join(RESULTS_DIR, 'latest.json'), json)
    const printed = [
      '',
      `${results.generatedAt} at ${commit}`,
      ...lines,
      '',
      ...resultsTable(results),
      '',
      ...growthTable(results),
      '',
      ...verdicts(results)
    ]
    process.stdout.write(
      `${printed.join('\n')}\n\nWritten to bench/results/latest.json; npm run bench:docs puts it into docs/.\n`
    )
  } finally {
    for (const each of started.reverse()) await each.stop().catch(() => {})
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
