/** The processes a run starts: the service, its baselines, and the Redis the `redis` baseline counts in. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { ConfigSchema } from '../src/config.js'
import { freePort } from '../src/db/embedded.js'
import { BenchError, type Baseline } from './settings.js'

// Servers come from the build this file is part of (dist-bench/), never from the dist/ that tests run.
const SERVICE_ENTRY = join(import.meta.dirname, '..', 'src', 'server.js')
const BASELINE_ENTRY = join(import.meta.dirname, 'baseline.js')
export const REDIS_SERVER = '/usr/bin/redis-server'

export interface RunningProcess {
  name: string
  pid: number
  origin: string
  /** The admin API's origin and token, when its listener is on. */
  admin?: { origin: string; token: string }
  output(): string
  stop(): Promise<void>
}

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, origin: string): RunningProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000))
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  const exited = once(child, 'exit')
  return {
    name,
    pid: child.pid!,
    origin,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    }
  }
}

async function waitUntil(server: RunningProcess, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await server.stop()
  throw new BenchError(`the ${server.name} did not start within 60 s:\n${server.output()}`)
}

/** Redis from Debian's package, on a port of its own, nothing saved to disk. */
export async function startRedis(): Promise<RunningProcess & { port: number }> {
  if (!existsSync(REDIS_SERVER)) {
    throw new BenchError(
      'The redis baseline needs redis-server: apt-get install -y redis-server (or BENCH_BASELINE=bare)'
    )
  }
  const port = await freePort()
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no']
  const redis = start('redis', REDIS_SERVER, args, { PATH: process.env.PATH }, `redis://127.0.0.1:${port}`)
  await waitUntil(redis, async () => redis.output().includes('Ready to accept connections'))
  return { ...redis, port }
}

// The service's configuration comes only from what is set here; none is inherited from the caller.
const SERVICE_VARIABLES = new Set([...Object.keys(ConfigSchema.properties), 'TEST_DATABASE_URL'])

export async function startServer(
  name: 'service' | Baseline,
  options: {
    databaseUrl: string
    logLevel: string
    admin: boolean
    redisUrl?: string
    nodeArgs?: string[]
    /** More of the service's variables. */
    env?: Record<string, string>
  }
): Promise<RunningProcess> {
  const entry = name === 'service' ? SERVICE_ENTRY : BASELINE_ENTRY
  if (!existsSync(entry)) throw new BenchError(`${entry} is missing: build first (npm run bench does)`)
  const port = await freePort()
  const env = Object.fromEntries(Object.entries(process.env).filter(([variable]) => !SERVICE_VARIABLES.has(variable)))
  const admin = options.admin ? { port: await freePort(), token: randomBytes(24).toString('hex') } : undefined
  Object.assign(env, {
    NODE_ENV: 'production',
    LOG_LEVEL: options.logLevel,
    HOST: '127.0.0.1',
    PORT: String(port),
    // Metrics on, as in production, on a port of their own.
    METRICS_PORT: String(await freePort()),
    DATABASE_URL: options.databaseUrl,
    BASELINE: name,
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
    ...(admin ? { ADMIN_TOKEN: admin.token, ADMIN_PORT: String(admin.port) } : {}),
    ...options.env
  })
  const origin = `http://127.0.0.1:${port}`
  const server = start(name, process.execPath, [...(options.nodeArgs ?? []), entry], env, origin)
  if (admin) server.admin = { origin: `http://127.0.0.1:${admin.port}`, token: admin.token }
  // Any answer means it listens: a key may not exist yet.
  await waitUntil(server, async () => (await fetch(`${origin}/v1/pets`)).status > 0)
  return server
}

/** Peak resident set size since start or the last reset (VmHWM), in MB. */
export function peakRssMB(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmHWM:\s+(\d+) kB/m)
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN
}

/** Resets VmHWM to the current RSS (Linux 4.0 and later). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5')
}

/** CPU time (user + system, every thread) of the process so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 14 and 15 of stat(5), in clock ticks of 1/100 s on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100
}
