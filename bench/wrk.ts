/** wrk, the load generator: its version, and one run of a scenario with the totals it reports. */
import { execFile, spawnSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BenchError, PET_COUNT, type Scenario } from './settings.js'

const WRK_DIR = join(import.meta.dirname, '..', '..', 'bench', 'wrk')

export function wrkVersion(): string {
  // `wrk -v` prints its version and usage, and exits with 1.
  const { stdout, error } = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  if (error) throw new BenchError('wrk is missing: apt-get install -y wrk (brew install wrk on macOS)')
  return stdout.split('\n')[0]!.replace(/ Copyright.*/, '')
}

/**
 * Runs the scenario's script with report.lua appended (written into `dir`), with the one key as a
 * header or a file of keys as the script's argument; errors are socket errors, timeouts and
 * responses above 399.
 */
export async function runWrk(
  scenario: Scenario,
  options: { dir: string; origin: string; key?: string; keyFile?: string; seconds: number; connections: number }
) {
  const script = join(options.dir, `${scenario.id}.lua`)
  const own = scenario.script ? await readFile(join(WRK_DIR, scenario.script), 'utf8') : ''
  await writeFile(script, `${own}\n${await readFile(join(WRK_DIR, 'report.lua'), 'utf8')}`)
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s', '-s', script]
  if (options.key) args.push('-H', `Authorization: Bearer ${options.key}`)
  args.push(`${options.origin}${scenario.path}`, '--', String(PET_COUNT), scenario.keys.kind, options.keyFile ?? '')
  const report = await wrkReport<Record<'requests' | 'durationUs' | 'errors' | 'p50Us' | 'p99Us', number>>(
    args,
    'BENCH_RESULT'
  )
  return {
    requests: report.requests,
    requestsPerSecond: report.requests / (report.durationUs / 1e6),
    p50Ms: report.p50Us / 1000,
    p99Ms: report.p99Us / 1000,
    errors: report.errors
  }
}

/** Runs wrk and returns the JSON its script printed on the line that starts with `marker`. */
export async function wrkReport<Report>(args: string[], marker: string): Promise<Report> {
  const { stdout } = await promisify(execFile)('wrk', args).catch(
    (error: { code?: number; stdout?: string; stderr?: string }) => {
      throw new BenchError(`wrk failed (exit ${error.code}):\n${error.stdout ?? ''}${error.stderr ?? ''}`)
    }
  )
  const line = stdout.split('\n').find((candidate) => candidate.startsWith(`${marker} `))
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`)
  return JSON.parse(line.slice(marker.length + 1)) as Report
}
