/** wrk, the load generator: its version, and one run of a scenario with the totals it reports. */
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BenchError, PET_COUNT, type Scenario } from './settings.js'

const WRK_DIR = join(import.meta.dirname, '..', '..', 'bench', 'wrk')

export interface WrkResult {
  requests: number
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  /** Socket errors, timeouts and responses above 399. */
  errors: number
}

export function wrkVersion(): string {
  try {
    // `wrk -v` prints its version and exits with 1.
    return execFileSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n')[0]!
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stdout?: string }
    if (failure.code === 'ENOENT') {
      throw new BenchError('wrk is missing: apt-get install -y wrk (brew install wrk on macOS)')
    }
    return failure.stdout?.split('\n')[0]?.replace(/ Copyright.*/, '') ?? 'wrk'
  }
}

/** The scenario's own Lua followed by report.lua, written into `dir`. */
export async function writeScript(dir: string, scenario: Scenario): Promise<string> {
  const own = scenario.script ? await readFile(join(WRK_DIR, scenario.script), 'utf8') : ''
  const file = join(dir, `${scenario.id}.lua`)
  await writeFile(file, `${own}\n${await readFile(join(WRK_DIR, 'report.lua'), 'utf8')}`)
  return file
}

export async function runWrk(options: {
  origin: string
  scenario: Scenario
  script: string
  /** The one key, or a file of keys the script reads. */
  key?: string
  keyFile?: string
  seconds: number
  connections: number
}): Promise<WrkResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s', '-s', options.script]
  if (options.key) args.push('-H', `Authorization: Bearer ${options.key}`)
  args.push(
    `${options.origin}${options.scenario.path}`,
    '--',
    ...(options.keyFile ? [options.keyFile] : []),
    String(PET_COUNT)
  )
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const [code] = await once(child, 'exit')
  const line = output.split('\n').find((candidate) => candidate.startsWith('BENCH_RESULT '))
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${output}`)
  const report = JSON.parse(line.slice('BENCH_RESULT '.length)) as {
    requests: number
    durationUs: number
    errors: Record<string, number>
    latencyUs: { p50: number; p99: number }
  }
  return {
    requests: report.requests,
    requestsPerSecond: report.requests / (report.durationUs / 1e6),
    p50Ms: report.latencyUs.p50 / 1000,
    p99Ms: report.latencyUs.p99 / 1000,
    errors: Object.values(report.errors).reduce((sum, count) => sum + count, 0)
  }
}
