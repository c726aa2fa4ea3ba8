import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect, createServer, type AddressInfo } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort } from '../../src/db/embedded.js'
import { TOOLS } from './requirements.js'

export const ROOT = resolve(import.meta.dirname, '../..')
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
 * `stop` signals the whole group: for `npm start`, which does not pass signals on to the server.
 */
export function startProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  options: { stdoutFile?: string; cwd?: string; group?: boolean } = {}
): RunningProcess {
  const { stdoutFile, cwd = ROOT, group = false } = options
  const fileFd = stdoutFile === undefined ? undefined : openSync(stdoutFile, 'a')
  const child = spawn(command, args, { cwd, env, detached: group, stdio: ['ignore', fileFd ?? 'pipe', 'pipe'] })
  const signal = (name: NodeJS.Signals) => (group ? process.kill(-child.pid!, name) : child.kill(name))
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

/**
 * Waits until a program just started accepts connections on `port`. When it exits first, or
 * `timeoutMs` (10 s) pass, it is stopped, its folder `prefix` removed, and the error carries what it wrote on stderr.
 */
async function startedListening(
  name: string,
  program: RunningProcess,
  port: number,
  prefix: string,
  timeoutMs = 10_000
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await accepting(port))) {
    const exited = await Promise.race([program.exited, sleep(50)])
    if (exited || Date.now() > deadline) {
      await program.stop('SIGTERM')
      await rm(prefix, { recursive: true, force: true })
      throw new Error(`${name} did not start:\n${program.stderr()}`)
    }
  }
}

export interface Nginx extends RunningProcess {
  port: number
  url: string
}

/**
 * nginx from Debian's package running deploy/nginx.conf, the file compose mounts, with its listen
 * address and upstream servers pointed at loopback ports; its own prefix, pid file and temp folders.
 * With `upstreamHeader`, each response names the replica that answered in `X-Upstream`.
 */
export async function startNginx(upstreamPorts: number[], options: { upstreamHeader?: boolean } = {}): Promise<Nginx> {
  const port = await freePort()
  const prefix = await mkdtemp(join(tmpdir(), 'animal-store-nginx-'))
  // Run as root, nginx's workers are `nobody`: they must reach the temp folders that buffer large bodies.
  await chmod(prefix, 0o755)
  const shipped = await readFile(join(ROOT, 'deploy/nginx.conf'), 'utf8')
  const upstream = /^(\s*)server app:3000( [^;]*)?;$/m
  const listen = /^(\s*)listen 8080;$/m
  if (!upstream.test(shipped) || !listen.test(shipped)) {
    throw new Error(
      'deploy/nginx.conf no longer has the `server app:3000 ...;` and `listen 8080;` lines this test replaces'
    )
  }
  const site = shipped
    .replace(upstream, (_line, indent: string, params = '') =>
      upstreamPorts.map((upstreamPort) => `${indent}server 127.0.0.1:${upstreamPort}${params};`).join('\n')
    )
    .replace(listen, `$1listen 127.0.0.1:${port};`)
    .replace(/^(\s*)proxy_hide_header X-Request-Id;$/m, (line, indent: string) =>
      options.upstreamHeader ? `${line}\n${indent}add_header X-Upstream $upstream_addr always;` : line
    )
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
    TOOLS.nginx.path,
    ['-e', 'stderr', '-p', prefix, '-c', `${prefix}/nginx.conf`, '-g', 'daemon off;'],
    processEnv({}),
    { stdoutFile: join(prefix, 'stdout.log') }
  )
  await startedListening('nginx', nginx, port, prefix)
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

export interface TcpProxy extends RunningProcess {
  port: number
  /** From now on connects clients to `backend` only, and closes the sessions open to the others. */
  switchTo(backend: string): Promise<void>
}

/**
 * HAProxy from Debian's package in TCP mode on a free loopback port, in front of `backends` (name to
 * loopback port); the first is the active one. Switched at run time through its admin socket, as a
 * failover manager would.
 */
export async function startHaproxy(backends: Record<string, number>): Promise<TcpProxy> {
  const port = await freePort()
  const prefix = await mkdtemp(join(tmpdir(), 'animal-store-haproxy-'))
  const socket = join(prefix, 'admin.sock')
  const names = Object.keys(backends)
  await writeFile(
    join(prefix, 'haproxy.cfg'),
    [
      'global',
      `  stats socket ${socket} mode 600 level admin`,
      'defaults',
      '  mode tcp',
      '  timeout connect 1s',
      '  timeout client 1h',
      '  timeout server 1h',
      'listen postgres',
      `  bind 127.0.0.1:${port}`,
      ...names.map((name, index) => `  server ${name} 127.0.0.1:${backends[name]}${index === 0 ? '' : ' disabled'}`),
      ''
    ].join('\n')
  )
  const haproxy = startProcess(TOOLS.haproxy.path, ['-db', '-f', join(prefix, 'haproxy.cfg')], processEnv({}))
  await startedListening('haproxy', haproxy, port, prefix)
  const command = (line: string) =>
    new Promise<string>((resolve, reject) => {
      const admin = connect(socket)
      let reply = ''
      admin.on('data', (chunk) => (reply += chunk))
      admin.once('error', reject)
      admin.once('close', () => resolve(reply))
      admin.end(`${line}\n`)
    })
  return {
    ...haproxy,
    port,
    async switchTo(backend) {
      const others = names.filter((name) => name !== backend)
      const reply = await command(
        [
          `set server postgres/${backend} state ready`,
          ...others.flatMap((name) => [
            `set server postgres/${name} state maint`,
            `shutdown sessions server postgres/${name}`
          ])
        ].join('; ')
      )
      if (reply.trim() !== '') throw new Error(`haproxy refused the switch: ${reply}`)
    },
    async stop() {
      await haproxy.stop('SIGTERM')
      await rm(prefix, { recursive: true, force: true })
    }
  }
}

/** As root, the postgres user, under which Postgres and PgBouncer must run; otherwise undefined. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

export interface PgBouncer extends RunningProcess {
  port: number
  /** `target` with PgBouncer's address in place of the server's. */
  url: string
}

/**
 * PgBouncer from Debian's package running deploy/pgbouncer.ini, the file compose mounts, in front of
 * the server and credentials of `target` (any database on it), on a free loopback port. Only the
 * [databases] line, the listen address and port and the authentication are rewritten; `poolSize`,
 * when given, replaces the server connections per database and user, `port` the free port (to
 * start it again where its clients expect it), and `startTimeoutMs` the 10 s it has to start.
 */
export async function startPgBouncer(
  target: string,
  options: { poolSize?: number; port?: number; startTimeoutMs?: number } = {}
): Promise<PgBouncer> {
  const port = options.port ?? (await freePort())
  const server = new URL(target)
  const prefix = await mkdtemp(join(tmpdir(), 'animal-store-pgbouncer-'))
  const config = join(prefix, 'pgbouncer.ini')
  // PgBouncer reads an empty `password=` as a broken line and drops the database ("bouncer config
  // error"), so a server that trusts loopback gets no password at all.
  const credentials = [
    `user=${decodeURIComponent(server.username) || 'postgres'}`,
    ...(server.password ? [`password=${decodeURIComponent(server.password)}`] : [])
  ].join(' ')
  const replacements: [RegExp, string][] = [
    [/^animal_store = .*$/m, `* = host=${server.hostname} port=${server.port} ${credentials}`],
    [/^listen_addr = .*$/m, 'listen_addr = 127.0.0.1\nunix_socket_dir ='],
    [/^listen_port = .*$/m, `listen_port = ${port}`],
    // The tests' servers trust loopback or take the password above: clients here need none.
    [/^auth_type = .*$/m, 'auth_type = any'],
    [/^auth_file = .*\n/m, '']
  ]
  if (options.poolSize !== undefined) {
    replacements.push([/^default_pool_size = .*$/m, `default_pool_size = ${options.poolSize}`])
  }
  let ini = await readFile(join(ROOT, 'deploy/pgbouncer.ini'), 'utf8')
  for (const [line, replacement] of replacements) {
    if (!line.test(ini)) {
      throw new Error(`deploy/pgbouncer.ini no longer has the line ${line} that this helper rewrites`)
    }
    ini = ini.replace(line, replacement)
  }
  await writeFile(config, ini, { mode: 0o600 })
  // PgBouncer refuses to run as root: it reads its configuration, then becomes the postgres user.
  const user = postgresUser()
  if (user) await Promise.all([prefix, config].map((path) => chown(path, user.uid, user.gid)))
  const bouncer = startProcess(TOOLS.pgbouncer.path, [...(user ? ['-u', 'postgres'] : []), config], processEnv({}))
  await startedListening('pgbouncer', bouncer, port, prefix, options.startTimeoutMs)
  const url = new URL(target)
  url.host = `127.0.0.1:${port}`
  return {
    ...bouncer,
    port,
    url: url.toString(),
    async stop() {
      await bouncer.stop('SIGTERM')
      await rm(prefix, { recursive: true, force: true })
    }
  }
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

/** Starts the built server as `npm start` does and waits for its "listening" log line. */
export async function startServer(env: Record<string, string | undefined>, timeoutMs = 45_000): Promise<RunningServer> {
  const child = spawn(process.execPath, [built('src/server.ts')], {
    cwd: ROOT,
    env: cleanEnv({ LOG_LEVEL: 'info', METRICS_PORT: '0', ...env }),
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
