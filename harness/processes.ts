// Starting and stopping processes, one way for the tests, the benchmark and the chaos run: any
// program (`startProcess`, `run`), and the built server as `npm start` and the image run it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { userInfo } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { freePort } from '../src/db/embedded.js'

/** The checkout: the folder of package.json above this module, whether it runs from harness/ or from a build of it. */
export const ROOT = (() => {
  let folder = import.meta.dirname
  while (!existsSync(join(folder, 'package.json'))) folder = dirname(folder)
  return folder
})()
/**
 * The checkout's commit as a report names it, marked when `paths` hold changes not committed: what
 * ran is then not that commit's. 'unknown' outside a git checkout.
 */
export function checkoutCommit(paths: string[]): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()
    const changed = git('status', '--porcelain', '--', ...paths)
    return `${git('rev-parse', '--short=7', 'HEAD')}${changed ? ' (with uncommitted changes)' : ''}`
  } catch {
    return 'unknown'
  }
}

/** Entry points run from the build that the test run's global setup makes: the JavaScript `npm start` and the image run. */
const built = (entry: string) => resolve(ROOT, 'dist', entry.replace(/\.ts$/, '.js'))

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/** Polls `find` until it returns something, for output that travels through a pipe and may trail a response. */
export async function eventually<T>(find: () => T | undefined, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error('not found in time')
    await sleep(20)
  }
}

export async function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; user?: { uid: number; gid: number } } = {}
) {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options.user
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const code = await new Promise<number | null>((done) => child.on('close', (exitCode) => done(exitCode)))
  return { code, stdout, stderr }
}

/** Environment for a built process: only what the test names, plus PATH. */
export function processEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', ...env }
}

export interface RunningProcess {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** stdout's JSON lines. */
  logs(): Record<string, unknown>[]
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>
  /** Sends `signal` (SIGKILL after 5 s) if the process still runs, and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>
}

/**
 * Spawns a process in `cwd` (the checkout by default); `stdoutFile` gives it a file rather than a pipe
 * (nginx cannot open /dev/stdout on a socket). With `group`, it leads a process group of its own and
 * `stop` signals the whole group: for `npm start`, which does not pass signals on to the server. With
 * `keep`, only the last `keep` characters of stdout and of stderr are kept: for a long run that logs.
 */
export function startProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  options: { stdoutFile?: string; cwd?: string; group?: boolean; keep?: number } = {}
): RunningProcess {
  const { stdoutFile, cwd = ROOT, group = false, keep } = options
  const kept = (text: string) => (keep === undefined ? text : text.slice(-keep))
  const fileFd = stdoutFile === undefined ? undefined : openSync(stdoutFile, 'a')
  const child = spawn(command, args, { cwd, env, detached: group, stdio: ['ignore', fileFd ?? 'pipe', 'pipe'] })
  const signal = (name: NodeJS.Signals) => (group ? process.kill(-child.pid!, name) : child.kill(name))
  if (fileFd !== undefined) closeSync(fileFd)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => (stdout = kept(stdout + chunk)))
  child.stderr!.on('data', (chunk) => (stderr = kept(stderr + chunk)))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((done) =>
    // 'close' rather than 'exit': by then everything the process wrote has been read.
    child.on('close', (code, signal) => done({ code, signal, at: Date.now() }))
  )
  let running = true
  void exited.then(() => (running = false))
  return {
    child,
    stdout: () => (stdoutFile === undefined ? stdout : readFileSync(stdoutFile, 'utf8')),
    stderr: () => stderr,
    logs: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    exited,
    async stop(name: NodeJS.Signals = 'SIGKILL') {
      if (!running) return
      signal(name)
      const killer = setTimeout(() => signal('SIGKILL'), 5000)
      await exited
      clearTimeout(killer)
    }
  }
}

/** Waits until `url` answers 200 (asked with `init`), failing early with the process's output if it exits first. */
export async function waitFor(
  url: string,
  owner: RunningProcess,
  timeoutMs = 20_000,
  init: RequestInit = {}
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let exited = false
  void owner.exited.then(() => (exited = true))
  while (Date.now() < deadline) {
    if (exited) throw new Error(`process exited before ${url} answered:\n${owner.stdout()}${owner.stderr()}`)
    const ok = await fetch(url, init).then(
      (response) => response.ok,
      () => false
    )
    if (ok) return
    await sleep(50)
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${owner.stdout()}${owner.stderr()}`)
}

/**
 * The origin a server started with `PORT=0` and `LOG_LEVEL=info` says it listens on, read from its log:
 * a port chosen by the system, where a port picked beforehand may be taken by the time a slow start binds it.
 */
export async function listeningOrigin(owner: RunningProcess, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs
  let exited = false
  void owner.exited.then(() => (exited = true))
  while (Date.now() < deadline) {
    const origin = owner.stdout().match(/listening on (http:\/\/[^/\s]+)\/v1/)?.[1]
    if (origin !== undefined) return origin
    if (exited) throw new Error(`process exited before it listened:\n${owner.stdout()}${owner.stderr()}`)
    await sleep(50)
  }
  throw new Error(`process did not listen within ${timeoutMs} ms:\n${owner.stdout()}${owner.stderr()}`)
}

export interface Replica extends RunningProcess {
  port: number
  metricsPort: number
  url: string
}

/** The built server, `node dist/src/server.js`, on free loopback ports. */
export async function startReplica(env: Record<string, string>): Promise<Replica> {
  const port = await freePort()
  const metricsPort = await freePort()
  const server = startProcess(
    'node',
    ['dist/src/server.js'],
    processEnv({ HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info', ...env })
  )
  const url = `http://127.0.0.1:${port}`
  try {
    await waitFor(`${url}/health/ready`, server)
  } catch (error) {
    await server.stop()
    throw error
  }
  return { ...server, port, metricsPort, url }
}

/** As root, the postgres user, under which Postgres and PgBouncer must run; otherwise undefined. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/** The environment of this process without the variables that choose a database, address or mode. */
function cleanEnv(env: Record<string, string | undefined>): Record<string, string> {
  const inherited = { ...process.env }
  for (const name of ['DATABASE_URL', 'TEST_DATABASE_URL', 'PORT', 'HOST', 'NODE_ENV', 'EMBEDDED_DATA_DIR']) {
    delete inherited[name]
  }
  return Object.fromEntries(
    Object.entries({ ...inherited, ...env }).filter(([, value]) => value !== undefined)
  ) as Record<string, string>
}

/** Runs a built entry point (src/….ts) to its end, as `npm start` or `npm run cli` would. */
export const runEntry = (entry: string, args: string[], env: Record<string, string | undefined>) =>
  run(process.execPath, [built(entry), ...args], { env: cleanEnv(env) })

export const runCli = (args: string[], env: Record<string, string | undefined>) => runEntry('src/cli.ts', args, env)

export interface RunningServer {
  child: ChildProcess
  url: string
  /** stdout and stderr as they arrived, interleaved. */
  output(): string
  stdout(): string
  stderr(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts the built server as `npm start` does and waits for its "listening" log line, which gives the
 * URL: on a port the system chooses unless `PORT` is given.
 */
export async function startServer(env: Record<string, string | undefined>, timeoutMs = 45_000): Promise<RunningServer> {
  const child = spawn(process.execPath, [built('src/server.ts')], {
    cwd: ROOT,
    // The tests run beside many other processes, which delay its event loop: shedding on that delay is
    // tested where a test turns it on (test/reliability/slow-clients.test.ts), as test/helpers/app.ts does.
    env: cleanEnv({ LOG_LEVEL: 'info', PORT: '0', METRICS_PORT: '0', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = output.match(/listening on (http:\/\/\S+\/v1)/)
      if (match) {
        clearTimeout(timer)
        resolveUrl(match[1]!)
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${output}`))
    })
  })
  return {
    child,
    url,
    output: () => output,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode
      child.kill(signal)
      const [code] = await once(child, 'exit')
      return code as number | null
    }
  }
}

/** A loopback port held open by a listener, for tests of what a program does when its port is taken. */
export async function holdPort(): Promise<{ port: number; release(): void }> {
  const holder = createServer()
  await new Promise<void>((listening) => holder.listen(0, '127.0.0.1', listening))
  return { port: (holder.address() as AddressInfo).port, release: () => holder.close() }
}
