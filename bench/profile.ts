/**
 * `npm run bench:profile [-- SCENARIO]`: one scenario against the service running under
 * `node --cpu-prof`, then the top functions by self time. The .cpuprofile goes to bench/results/
 * (git-ignored); open it in Chrome DevTools or VS Code for the call tree.
 *
 * BENCH_PROFILE_SERVER=baseline profiles the baseline instead, for comparison.
 */
import { readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { formatProfile, readProfile, summarizeProfile } from './profile-top.js'
import {
  BenchError,
  ROOT,
  describeMachine,
  ensureResultsDir,
  issueBenchKeys,
  machineFacts,
  makeWorkDir,
  openBenchDatabase,
  prepareWrkScripts,
  primeKeyCache,
  readSettings,
  runWrk,
  scenarioById,
  startServer,
  totalErrors,
  wrkVersion,
  type BenchDatabase,
  type RunningServer,
  type ServerName
} from './harness.js'

const log = (line: string) => process.stderr.write(`${line}\n`)

async function main() {
  const settings = readSettings(process.env, { durationSeconds: 10, rounds: 1 })
  const scenario = scenarioById(process.argv[2] ?? process.env.BENCH_PROFILE_SCENARIO ?? 'list')
  const serverName = (process.env.BENCH_PROFILE_SERVER ?? 'service') as ServerName
  if (serverName !== 'service' && serverName !== 'baseline') {
    throw new BenchError(`BENCH_PROFILE_SERVER must be service or baseline, not '${serverName}'`)
  }
  const wrk = wrkVersion()
  const resultsDir = await ensureResultsDir()
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const profileName = `${serverName}-${scenario.id}-${stamp}.cpuprofile`
  const workDir = await makeWorkDir()
  let database: BenchDatabase | undefined
  let server: RunningServer | undefined
  try {
    database = await openBenchDatabase(process.env, log)
    const keys = await issueBenchKeys(database, workDir, scenario.keys ? [scenario.keys] : [])
    const scripts = await prepareWrkScripts(workDir)
    const facts = machineFacts(database, wrk)
    server = await startServer(serverName, {
      databaseUrl: database.url,
      logLevel: settings.logLevel,
      key: keys.key,
      baseline: settings.baseline,
      nodeArgs: ['--cpu-prof', '--cpu-prof-dir', resultsDir, '--cpu-prof-name', profileName]
    })
    const run = {
      origin: server.origin,
      scenario,
      script: scripts.get(scenario.id)!,
      keys,
      connections: settings.connections,
      threads: settings.threads
    }
    log(
      `Profiling the ${serverName} on ${scenario.title}: ${settings.warmupSeconds} s warm-up, ${settings.durationSeconds} s measured`
    )
    if (serverName === 'service' && scenario.keys) await primeKeyCache(server, keys.files[scenario.keys]!)
    await runWrk({ ...run, seconds: settings.warmupSeconds })
    // Only samples taken while wrk measures count: start-up and warm-up are left out.
    const startUs = Number(process.hrtime.bigint() / 1000n)
    const result = await runWrk({ ...run, seconds: settings.durationSeconds })
    const endUs = Number(process.hrtime.bigint() / 1000n)
    // The profile is written when the process exits.
    await server.stop()
    server = undefined

    const file = join(resultsDir, profileName)
    if (!(await readdir(resultsDir)).includes(profileName)) throw new Error(`node wrote no profile to ${file}`)
    const report = [
      `CPU profile of the ${serverName}, ${scenario.title}`,
      ...describeMachine(facts),
      `Under the profiler: ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.latencyMs.p50.toFixed(2)} ms, ` +
        `p99 ${result.latencyMs.p99.toFixed(2)} ms, ${totalErrors(result)} errors ` +
        `(wrk -t${settings.threads} -c${settings.connections}, ${settings.durationSeconds} s after ${settings.warmupSeconds} s warm-up; ` +
        'only samples from the measured seconds count)',
      '',
      formatProfile(summarizeProfile(await readProfile(file), ROOT, { startUs, endUs }), 25, result.requests),
      '',
      `Profile: ${file}`
    ].join('\n')
    await writeFile(file.replace(/\.cpuprofile$/, '.top.md'), `${report}\n`)
    process.stdout.write(`\n${report}\n`)
  } finally {
    await server?.stop().catch(() => {})
    await database?.stop().catch((error) => log(`Could not stop the database: ${String(error)}`))
    await rm(workDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  process.stderr.write(
    `${error instanceof BenchError ? error.message : `Profiling failed: ${error instanceof Error ? error.stack : String(error)}`}\n`
  )
  process.exitCode = 1
})
