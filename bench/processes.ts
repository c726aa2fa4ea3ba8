/** The processes a run starts (the service, its baselines, the Redis of the `redis` baseline), and what /proc says of them. */
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startProcess } from '../harness/processes.js'
import { freePort } from '../src/db/embedded.js'
import { BenchError, type Baseline } from './settings.js'

export const REDIS_SERVER = '/usr/bin/redis-server'

export interface ServedProcess {
  name: string
  pid: number
  origin: string
  /** The admin API's origin and token, when its listener is on. */
  admin?: { origin: string; token: string }
  /** The service's metrics listener. */
  metrics?: string
  stop(): Promise<void>
}

/** Spawns a process and waits until `ready` says it serves, for at most 60 s. */
async function start(
  name: string,
  [command, ...args]: string[],
  env: Record<string, string>,
  origin: string,
  ready: (output: string) => Promise<boolean>
): Promise<ServedProcess> {
  const started = startProcess(command!, args, { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, { keep: 20_000 })
  const output = () => started.stdout() + started.stderr()
  const running: ServedProcess = { name, pid: started.child.pid!, origin, stop: () => started.stop('SIGTERM') }
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && started.child.exitCode === null;) {
    if (await ready(output()).catch(() => false)) return running
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await running.stop()
  throw new BenchError(`the ${name} did not start:\n${output()}`)
}

/** Redis from Debian's package, on a port of its own, nothing saved to disk. */
export async function startRedis(): Promise<ServedProcess> {
  if (!existsSync(REDIS_SERVER)) {
    throw new BenchError(
      'The redis baseline needs redis-server: apt-get install -y redis-server (or BENCH_BASELINE=bare)'
    )
  }
  const port = String(await freePort())
  const command = [REDIS_SERVER, '--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  return start('redis', command, {}, `redis://127.0.0.1:${port}`, async (output) =>
    output.includes('Ready to accept connections')
  )
}

/**
 * The service or a baseline from the build this file is part of (dist-bench/, never the dist/ that
 * tests run), configured by nothing but what is set here; metrics on, as in production.
 */
export async function startServer(
  name: 'service' | Baseline,
  options: {
    databaseUrl: string
    logLevel: string
    admin: boolean
    redisUrl?: string
    /** More of the service's variables. */
    env?: Record<string, string>
  }
): Promise<ServedProcess> {
  const entry = join(import.meta.dirname, ...(name === 'service' ? ['..', 'src', 'server.js'] : ['baseline.js']))
  const port = await freePort()
  const metricsPort = await freePort()
  const admin = options.admin ? { port: await freePort(), token: randomBytes(24).toString('hex') } : undefined
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: options.logLevel,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    DATABASE_URL: options.databaseUrl,
    BASELINE: name,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...(admin ? { ADMIN_TOKEN: admin.token, ADMIN_PORT: String(admin.port) } : {}),
    // BENCH_NODE_OPTIONS: node's options for the service alone (a heap snapshot on a signal).
    ...(name === 'service' && process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
    ...options.env
  }
  const origin = `http://127.0.0.1:${port}`
  // Any answer means it listens: a key may not exist yet.
  // BENCH_CPU_PROFILE names a folder for CPU profiles (node --cpu-prof), one a run, in a folder per server.
  const profile = process.env.BENCH_CPU_PROFILE && join(process.env.BENCH_CPU_PROFILE, name)
  const command = [process.execPath, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), entry]
  const server = await start(name, command, env, origin, async () => {
    return (await fetch(`${origin}/v1/pets`)).status > 0
  })
  if (admin) server.admin = { origin: `http://127.0.0.1:${admin.port}`, token: admin.token }
  if (name === 'service') server.metrics = `http://127.0.0.1:${metricsPort}`
  return server
}

/** Peak resident set size since start or the last reset (VmHWM), in MB. */
export function peakRssMB(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m)
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN
}

/** Resident set size now (VmRSS), in MB. */
function rssMB(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN
}

/** A sample's value in a Prometheus text exposition; NaN when it has none. */
function metricValue(text: string, name: string): number {
  const match = text.match(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} ([\\d.e+-]+)$`, 'm'))
  return match ? Number(match[1]) : Number.NaN
}

/** The service's counting statements so far, from its metrics listener: how many, the accounts they counted, their seconds. */
export async function countingStatements(
  metricsOrigin: string
): Promise<{ statements: number; accounts: number; seconds: number }> {
  const text = await (await fetch(`${metricsOrigin}/metrics`)).text()
  return {
    statements: metricValue(text, 'animal_store_counting_statement_subjects_count'),
    accounts: metricValue(text, 'animal_store_counting_statement_subjects_sum'),
    seconds: metricValue(text, 'animal_store_counting_statement_duration_seconds_sum')
  }
}

/**
 * What holds a process's memory, in MB: its RSS and, from the service's metrics listener
 * (prom-client's process and V8 gauges), V8's heap used and total with its old and new spaces,
 * memory outside the heap (Buffers among it), and the sockets it holds open (from /proc).
 */
export async function memoryMB(pid: number, metricsOrigin: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${metricsOrigin}/metrics`)).text()
  const read = (name: string) => Math.round(metricValue(text, name) / 1e5) / 10
  const sockets = readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')
    } catch {
      return false
    }
  }).length
  return {
    rss: rssMB(pid),
    heapUsed: read('nodejs_heap_size_used_bytes'),
    heapTotal: read('nodejs_heap_size_total_bytes'),
    oldSpace: read('nodejs_heap_space_size_total_bytes{space="old"}'),
    newSpace: read('nodejs_heap_space_size_total_bytes{space="new"}'),
    external: read('nodejs_external_memory_bytes'),
    sockets
  }
}

/** Resets VmHWM to the current RSS (Linux 4.0 and later). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5')
}

/** Fields 3 onwards of a process's stat(5), so that field N is at index N - 3. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** CPU time (user + system, every thread) of the process so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid)
  // Fields 14 and 15 of stat(5), in clock ticks of 1/100 s on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The parent of a PostgreSQL backend (its postmaster); undefined when no backend of that number runs on this machine. */
export function postmasterOf(backendPid: number): number | undefined {
  try {
    const fields = statFields(backendPid)
    if (!readFileSync(`/proc/${backendPid}/comm`, 'utf8').startsWith('postgres')) return undefined
    return Number(fields[1])
  } catch {
    return undefined
  }
}

/**
 * CPU time of a process's children so far, in seconds: those it has reaped (fields 16 and 17 of its
 * stat) and those running.
 */
export function childrenCpuSeconds(pid: number): number {
  const fields = statFields(pid)
  let seconds = (Number(fields[13]) + Number(fields[14])) / 100
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Number(statFields(entry)[1]) === pid) seconds += cpuSeconds(Number(entry))
    } catch {
      // Ended between the listing and the read: the parent's reaped time holds it now, or soon.
    }
  }
  return seconds
}

/** CPU time of a PostgreSQL server so far, in seconds: its postmaster's and every backend's, ended or running. */
export const serverCpuSeconds = (postmasterPid: number) => cpuSeconds(postmasterPid) + childrenCpuSeconds(postmasterPid)
