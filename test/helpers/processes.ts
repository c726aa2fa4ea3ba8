import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort } from '../../src/db/embedded.js'

export const ROOT = resolve(import.meta.dirname, '../..')
/** Entry points run from the build that the test run's global setup makes: the JavaScript `npm start` and the image run. */
const built = (entry: string) => resolve(ROOT, 'dist', entry.replace(/\.ts$/, '.js'))
export const NGINX = '/usr/sbin/nginx'

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

export async function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] })
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

/** Spawns a process; `stdoutFile` gives it a file rather than a pipe (nginx cannot open /dev/stdout on a socket). */
export function startProcess(command: string, args: string[], env: Record<string, string>, stdoutFile?: string): RunningProcess {
  const fileFd = stdoutFile === undefined ? undefined : openSync(stdoutFile, 'a')
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', fileFd ?? 'pipe', 'pipe'] })
  if (fileFd !== undefined) closeSync(fileFd)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
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
    async stop(signal: NodeJS.Signals = 'SIGKILL') {
      if (!running) return
      child.kill(signal)
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(killer)
    }
  }
}

/** Waits until `url` answers 200, failing early with the process's output if it exits first. */
export async function waitFor(url: string, owner: RunningProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let exited = false
  void owner.exited.then(() => (exited = true))
  while (Date.now() < deadline) {
    if (exited) throw new Error(`process exited before ${url} answered:\n${owner.stdout()}${owner.stderr()}`)
    const ok = await fetch(url).then((response) => response.ok, () => false)
    if (ok) return
    await sleep(50)
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${owner.stdout()}${owner.stderr()}`)
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

/** Accepts TCP connections on the port yet. */
async function accepting(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      done(true)
    })
    socket.once('error', () => done(false))
  })
}

export interface Nginx extends RunningProcess {
  port: number
  url: string
}

/**
 * nginx from Debian's package running deploy/nginx.conf, the file compose mounts, with its listen
 * address and upstream servers pointed at loopback ports; its own prefix, pid file and temp folders.
 */
export async function startNginx(upstreamPorts: number[]): Promise<Nginx> {
  if (!existsSync(NGINX)) {
    throw new Error(`nginx is not installed at ${NGINX}: the deploy tests need Debian's package (apt-get install -y nginx)`)
  }
  const port = await freePort()
  const prefix = await mkdtemp(join(tmpdir(), 'animal-store-nginx-'))
  // Run as root, nginx's workers are `nobody`: they must reach the temp folders that buffer large bodies.
  await chmod(prefix, 0o755)
  const shipped = await readFile(join(ROOT, 'deploy/nginx.conf'), 'utf8')
  const upstream = /^(\s*)server app:3000( [^;]*)?;$/m
  const listen = /^(\s*)listen 8080;$/m
  if (!upstream.test(shipped) || !listen.test(shipped)) {
    throw new Error('deploy/nginx.conf no longer has the `server app:3000 ...;` and `listen 8080;` lines this test replaces')
  }
  const site = shipped
    .replace(upstream, (_line, indent: string, params = '') =>
      upstreamPorts.map((upstreamPort) => `${indent}server 127.0.0.1:${upstreamPort}${params};`).join('\n')
    )
    .replace(listen, `$1listen 127.0.0.1:${port};`)
  await writeFile(join(prefix, 'site.conf'), site)
  await writeFile(
    join(prefix, 'nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${prefix}/nginx.pid;`,
      'error_log stderr warn;',
      'events { worker_connections 512; }',
      'http {',
      `  client_body_temp_path ${prefix}/client_body;`,
      `  proxy_temp_path ${prefix}/proxy;`,
      `  fastcgi_temp_path ${prefix}/fastcgi;`,
      `  uwsgi_temp_path ${prefix}/uwsgi;`,
      `  scgi_temp_path ${prefix}/scgi;`,
      `  include ${prefix}/site.conf;`,
      '}',
      ''
    ].join('\n')
  )
  const nginx = startProcess(
    NGINX,
    ['-e', 'stderr', '-p', prefix, '-c', `${prefix}/nginx.conf`, '-g', 'daemon off;'],
    processEnv({}),
    join(prefix, 'stdout.log')
  )
  const deadline = Date.now() + 10_000
  while (!(await accepting(port))) {
    const exited = await Promise.race([nginx.exited, sleep(50)])
    if (exited || Date.now() > deadline) {
      await nginx.stop('SIGTERM')
      await rm(prefix, { recursive: true, force: true })
      throw new Error(`nginx did not start:\n${nginx.stderr()}`)
    }
  }
  return {
    ...nginx,
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      // SIGTERM: the master stops its workers before it exits.
      await nginx.stop('SIGTERM')
      await rm(prefix, { recursive: true, force: true })
    }
  }
}

/** The environment of this process without the variables that choose a database, address or mode. */
function cleanEnv(env: Record<string, string | undefined>): Record<string, string> {
  const inherited = { ...process.env }
  for (const name of ['DATABASE_URL', 'TEST_DATABASE_URL', 'PORT', 'HOST', 'NODE_ENV', 'EMBEDDED_DATA_DIR']) delete inherited[name]
  return Object.fromEntries(Object.entries({ ...inherited, ...env }).filter(([, value]) => value !== undefined)) as Record<string, string>
}

/** Runs a built entry point (src/….ts) to its end, as `npm start` or `npm run cli` would. */
export const runEntry = (entry: string, args: string[], env: Record<string, string | undefined>) =>
  run(process.execPath, [built(entry), ...args], { env: cleanEnv(env) })

export const runCli = (args: string[], env: Record<string, string | undefined>) => runEntry('src/cli.ts', args, env)

export interface RunningServer {
  child: ChildProcess
  url: string
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** Starts the built server as `npm start` does and waits for its "listening" log line. */
export async function startServer(env: Record<string, string | undefined>, timeoutMs = 45_000): Promise<RunningServer> {
  const child = spawn(process.execPath, [built('src/server.ts')], {
    cwd: ROOT,
    env: cleanEnv({ LOG_LEVEL: 'info', METRICS_PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
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
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode
      child.kill(signal)
      const [code] = await once(child, 'exit')
      return code as number | null
    }
  }
}
