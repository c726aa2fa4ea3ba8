// Programs from Debian's packages that the tests and the chaos run start for real, each configured
// from the file the deployment ships (deploy/nginx.conf, deploy/pgbouncer.ini) on free loopback ports.
import { execFile } from 'node:child_process'
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../src/db/embedded.js'
import { postgresUser, processEnv, ROOT, startProcess, type RunningProcess } from './processes.js'

/** Programs from Debian's packages that some suites run for real. */
export const TOOLS = {
  nginx: { path: '/usr/sbin/nginx', package: 'nginx' },
  chromium: { path: '/usr/bin/chromium', package: 'chromium' },
  haproxy: { path: '/usr/sbin/haproxy', package: 'haproxy' },
  pgbouncer: { path: '/usr/sbin/pgbouncer', package: 'pgbouncer' },
  pg_ctlcluster: { path: '/usr/bin/pg_ctlcluster', package: 'postgresql' },
  psql: { path: '/usr/bin/psql', package: 'postgresql-client' },
  promtool: { path: '/usr/bin/promtool', package: 'prometheus' }
} as const

export type Tool = keyof typeof TOOLS

/** What deploy/postgres/roles.sql reads: the owner's and the service's role names (its defaults when absent) and passwords. */
export interface DeployRoles {
  DATABASE_OWNER_ROLE?: string
  DATABASE_OWNER_PASSWORD: string
  DATABASE_SERVICE_ROLE?: string
  DATABASE_SERVICE_PASSWORD: string
}

/**
 * Runs deploy/postgres/roles.sql with psql on `url`, as docs/deploy.md makes the roles, within 30 s;
 * fails with psql's stderr when it does not exit 0, and returns that stderr otherwise.
 */
export function makeDeployRoles(url: string, roles: DeployRoles): Promise<{ stderr: string }> {
  return new Promise((done, fail) =>
    execFile(
      TOOLS.psql.path,
      [url, '--no-psqlrc', '-q', '-f', join(ROOT, 'deploy/postgres/roles.sql')],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...roles }, timeout: 30_000 },
      (error, _stdout, stderr) =>
        error ? fail(new Error(`deploy/postgres/roles.sql: ${stderr || error.message}`)) : done({ stderr })
    )
  )
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

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
 * address and upstream servers pointed at loopback ports (or at `host:port`); its own prefix, pid
 * file and temp folders.
 * With `upstreamHeader`, each response names the replica that answered in `X-Upstream`.
 */
export async function startNginx(
  upstreams: (number | string)[],
  options: { upstreamHeader?: boolean } = {}
): Promise<Nginx> {
  const shipped = await readFile(join(ROOT, 'deploy/nginx.conf'), 'utf8')
  return runNginx(shipped, { 'app:3000': upstreams }, (site) =>
    site.replace(/^(\s*)proxy_hide_header X-Request-Id;$/m, (line, indent: string) =>
      options.upstreamHeader ? `${line}\n${indent}add_header X-Upstream $upstream_addr always;` : line
    )
  )
}

/**
 * nginx running deploy/nginx-auth-request.conf: a service on `service` (a loopback port) behind it,
 * each of its requests authorized first by the store's instances on `store`.
 */
export async function startNginxAuthRequest(store: number[], service: number): Promise<Nginx> {
  const shipped = await readFile(join(ROOT, 'deploy/nginx-auth-request.conf'), 'utf8')
  return runNginx(shipped, { 'app:3000': store, 'orders:8080': [service] })
}

/**
 * nginx on a free loopback port with a site file of the deployment's: its `server NAME ...;` lines
 * replaced by the loopback ports (or `host:port`s) given for each name, and its `listen 8080;` by
 * that port; its own prefix, pid file and temp folders.
 */
async function runNginx(
  shipped: string,
  upstreams: Record<string, (number | string)[]>,
  edit: (site: string) => string = (site) => site
): Promise<Nginx> {
  const port = await freePort()
  const prefix = await mkdtemp(join(tmpdir(), 'animal-store-nginx-'))
  // Run as root, nginx's workers are `nobody`: they must reach the temp folders that buffer large bodies.
  await chmod(prefix, 0o755)
  const listen = /^(\s*)listen 8080;$/m
  let site = shipped
  for (const [name, servers] of Object.entries(upstreams)) {
    const upstream = new RegExp(`^(\\s*)server ${name.replace('.', '\\.')}( [^;]*)?;$`, 'm')
    if (!upstream.test(site)) {
      throw new Error(`the nginx site no longer has the \`server ${name} ...;\` line this replaces`)
    }
    site = site.replace(upstream, (_line, indent: string, params = '') =>
      servers
        .map((server) => `${indent}server ${typeof server === 'number' ? `127.0.0.1:${server}` : server}${params};`)
        .join('\n')
    )
  }
  if (!listen.test(site)) throw new Error('the nginx site no longer has the `listen 8080;` line this replaces')
  site = edit(site.replace(listen, `$1listen 127.0.0.1:${port};`))
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
 * start it again where its clients expect it), `startTimeoutMs` the 10 s it has to start, and
 * `listenAddresses` adds addresses to loopback.
 */
export async function startPgBouncer(
  target: string,
  options: { poolSize?: number; port?: number; startTimeoutMs?: number; listenAddresses?: string[] } = {}
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
    [
      /^listen_addr = .*$/m,
      `listen_addr = ${['127.0.0.1', ...(options.listenAddresses ?? [])].join(',')}\nunix_socket_dir =`
    ],
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
