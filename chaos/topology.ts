// What a chaos run starts and stops: PostgreSQL under pg_auto_failover (a monitor, a primary and a
// synchronous standby), HAProxy sending connections to whichever node is a writable primary,
// PgBouncer in transaction mode in front of it, three built instances and nginx in front of them.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { appendFile, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from '../src/db/embedded.js'
import { postgresUser, processEnv, startProcess, waitFor, type RunningProcess } from '../harness/processes.js'
import { startNginx, startPgBouncer, type Nginx, type PgBouncer } from '../harness/programs.js'
import { makeDeployRoles, TOOLS } from '../harness/programs.js'
import { startNetwork, type Namespace, type Network } from '../harness/netns.js'
import type { Release } from './upgrade.js'

const POSTGRES_BIN = '/usr/lib/postgresql/15/bin'
export const PG_AUTOCTL = '/usr/bin/pg_autoctl'
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1'
export const DATABASE = 'animal_store'

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

/** Polls `check` every `everyMs` until it returns something other than undefined; throws after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 250) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = await check().catch(() => undefined)
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`)
    await sleep(everyMs)
  }
}

/** One query on a connection of its own, bounded in time: a frozen server must not hang the run. */
export async function queryOnce<Row extends pg.QueryResultRow>(url: string, text: string, timeoutMs = 10_000) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
  client.on('error', () => {})
  try {
    await client.connect()
    return (await client.query<Row>(text)).rows
  } finally {
    void client.end().catch(() => {})
  }
}

/**
 * A process group of its own inside `namespace`, run as the postgres user, its output appended to
 * `log`. `ip netns exec` and setpriv each exec the next program: the group's leader is pg_autoctl.
 */
function spawnAsPostgres(namespace: Namespace, args: string[], log: string, env: Record<string, string>): ChildProcess {
  const fd = openSync(log, 'a')
  const asPostgres = postgresUser()
    ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', PG_AUTOCTL, ...args]]
    : [PG_AUTOCTL, args]
  const [command, wrapped] = namespace.wrap(asPostgres[0] as string, asPostgres[1] as string[])
  const child = spawn(command, wrapped, {
    cwd: '/',
    env,
    detached: true,
    stdio: ['ignore', fd, fd]
  })
  closeSync(fd)
  child.on('error', () => {})
  return child
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

function signalPid(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal)
  } catch {}
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals) {
  try {
    process.kill(-child.pid!, signal)
  } catch {}
}

async function stopGroup(child: ChildProcess, timeoutMs = 20_000) {
  if (!running(child)) return signalGroup(child, 'SIGKILL')
  const exited = new Promise((done) => child.once('exit', done))
  // pg_autoctl stops its Postgres on SIGTERM (a fast shutdown).
  signalGroup(child, 'SIGTERM')
  if ((await Promise.race([exited.then(() => true), sleep(timeoutMs).then(() => false)])) === false) {
    signalGroup(child, 'SIGKILL')
    await exited
  }
  // Anything of the group left behind (a backend whose postmaster was killed).
  signalGroup(child, 'SIGKILL')
}

export interface NodeState {
  name: string
  port: number
  reported: string
  goal: string
}

export interface HaNode {
  name: string
  /** Its address in its own network namespace. */
  host: string
  namespace: Namespace
  port: number
  dataDir: string
  keeper: ChildProcess
}

/**
 * PostgreSQL 15 under pg_auto_failover: a monitor and two data nodes, the second a synchronous
 * standby, each in a network namespace of its own so that a node can be cut off from the others.
 */
export class AutoFailover {
  readonly nodes: HaNode[] = []
  private monitor?: ChildProcess
  private monitorPort = 0
  monitorNamespace!: Namespace

  private constructor(
    private readonly folder: string,
    private readonly logs: string,
    private readonly network: Network
  ) {}

  private get env() {
    // pg_autoctl keeps its state and configuration under XDG folders: here, the run's own.
    return {
      PATH: `${POSTGRES_BIN}:/usr/bin:/bin`,
      HOME: this.folder,
      XDG_CONFIG_HOME: join(this.folder, 'config'),
      XDG_DATA_HOME: join(this.folder, 'share'),
      XDG_RUNTIME_DIR: join(this.folder, 'run'),
      LC_ALL: 'C'
    }
  }

  get monitorUrl() {
    return `postgres://postgres@${this.monitorNamespace.address}:${this.monitorPort}/pg_auto_failover`
  }

  nodeUrl(node: { host: string; port: number }, database = 'postgres') {
    return `postgres://postgres@${node.host}:${node.port}/${database}`
  }

  static async start(
    logs: string,
    network: Network,
    onStarted: (stop: () => Promise<void>) => void
  ): Promise<AutoFailover> {
    const folder = await mkdtemp(join(tmpdir(), 'animal-store-chaos-pg-'))
    const user = postgresUser()
    const cluster = new AutoFailover(folder, logs, network)
    onStarted(() => cluster.stop())
    const folders = [folder, ...['config', 'share', 'run'].map((sub) => join(folder, sub))]
    for (const path of folders.slice(1)) await mkdir(path, { mode: 0o700 })
    // As root, pg_autoctl runs as the postgres user, which must own its folders.
    for (const path of user ? folders : []) await chown(path, user!.uid, user!.gid)
    await cluster.startMonitor()
    await cluster.addNode('node1')
    await until('node1 to be the primary', () => cluster.stateWhen((nodes) => nodes[0]?.reported === 'single'), 120_000)
    // A primary cut off from the monitor and its standby must fence itself before the monitor promotes
    // the standby (about 15 s, below), or HAProxy finds two primaries and reads on the old one are stale:
    // its walsender gives the unreachable standby up after 5 s (not 60), and its keeper demotes it 3 s
    // (not 20) after it last reached either. node2's base backup copies the setting.
    await queryOnce(cluster.nodeUrl(cluster.nodes[0]!), "ALTER SYSTEM SET wal_sender_timeout = '5s'")
    await queryOnce(cluster.nodeUrl(cluster.nodes[0]!), 'SELECT pg_reload_conf()')
    await cluster.addNode('node2')
    await cluster.waitHealthy(180_000)
    for (const node of cluster.nodes) await cluster.configure(node, 'timeout.network_partition_timeout', '3')
    return cluster
  }

  /** `pg_autoctl config set` on a node: kept in its configuration file, and its running keeper reloads it. */
  async configure(node: HaNode, key: string, value: string) {
    await new Promise<void>((done, fail) =>
      execFile(
        PG_AUTOCTL,
        ['config', 'set', '--pgdata', node.dataDir, key, value],
        { env: this.env, cwd: '/', timeout: 30_000, ...postgresUser() },
        (error, stdout, stderr) =>
          error ? fail(new Error(`pg_autoctl config set ${key}: ${stderr}${stdout}`)) : done()
      )
    )
  }

  private async startMonitor() {
    this.monitorPort = await freePort()
    this.monitorNamespace = await this.network.add('monitor')
    const { address } = this.monitorNamespace
    const pgdata = join(this.folder, 'monitor')
    this.monitor = spawnAsPostgres(
      this.monitorNamespace,
      [
        ...['create', 'monitor', '--pgdata', pgdata, '--pgctl', `${POSTGRES_BIN}/pg_ctl`],
        ...['--pgport', String(this.monitorPort), '--listen', address, '--hostname', address],
        ...['--auth', 'trust', '--no-ssl', '--run']
      ],
      join(this.logs, 'monitor.log'),
      this.env
    )
    await this.trustNetwork(pgdata)
    await until('the monitor to start', () => this.state(), 120_000, 500)
    // Failover in about 15 s instead of about 50: a node is unhealthy after 10 s without a report and a
    // failed health check, twice the 5 s freeze a run injects, which must not fail over; the
    // standby waits 5 s (not 30) for a primary that does not answer to demote itself.
    const settings = {
      health_check_period: 1000,
      health_check_timeout: 1000,
      health_check_max_retries: 1,
      health_check_retry_delay: 500,
      node_considered_unhealthy_timeout: 10_000,
      primary_demote_timeout: 5000
    }
    for (const [name, value] of Object.entries(settings)) {
      await queryOnce(this.monitorUrl, `ALTER SYSTEM SET pgautofailover.${name} = ${value}`)
    }
    await queryOnce(this.monitorUrl, 'SELECT pg_reload_conf()')
  }

  private async addNode(name: string) {
    const port = await freePort()
    const dataDir = join(this.folder, name)
    const namespace = await this.network.add(name)
    const host = namespace.address
    // A keeper blocked on the monitor over a cut link never runs its own partition check, and a cut-off
    // primary keeps taking writes: its queries to the monitor fail within 3 s instead of at TCP's
    // retransmission timeout (minutes).
    const monitor = `postgres://autoctl_node@${this.monitorNamespace.address}:${this.monitorPort}/pg_auto_failover?sslmode=disable&connect_timeout=2&tcp_user_timeout=3000`
    const keeper = spawnAsPostgres(
      namespace,
      [
        ...['create', 'postgres', '--pgdata', dataDir, '--pgctl', `${POSTGRES_BIN}/pg_ctl`, '--name', name],
        ...['--pgport', String(port), '--listen', host, '--hostname', host, '--monitor', monitor],
        ...['--dbname', DATABASE, '--auth', 'trust', '--no-ssl', '--run']
      ],
      this.logPath({ name }),
      this.env
    )
    this.nodes.push({ name, host, namespace, port, dataDir, keeper })
    // A standby's data directory is a base backup of the primary's, pg_hba.conf included.
    if (this.nodes.length === 1) await this.trustNetwork(dataDir)
  }

  /**
   * Lets every address of the run's network in, for any database and for replication, without a
   * password: the harness, HAProxy and PgBouncer connect from the host's address on the bridge, which
   * pg_autoctl's own rules do not name. Appended once initdb has written pg_hba.conf, then reloaded.
   */
  private async trustNetwork(dataDir: string) {
    const hba = join(dataDir, 'pg_hba.conf')
    const pidFile = join(dataDir, 'postmaster.pid')
    await until('initdb', async () => (existsSync(hba) && existsSync(pidFile) ? true : undefined), 120_000, 200)
    const cidr = `${this.network.host.split('.').slice(0, 3).join('.')}.0/24`
    await appendFile(hba, `\nhost all all ${cidr} trust\nhost replication all ${cidr} trust\n`)
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0])
    signalPid(pid, 'SIGHUP')
  }

  /** The nodes as the monitor sees them. */
  async state(): Promise<NodeState[]> {
    return queryOnce<NodeState>(
      this.monitorUrl,
      'SELECT nodename AS name, nodeport AS port, reportedstate::text AS reported, goalstate::text AS goal FROM pgautofailover.node ORDER BY nodeid'
    )
  }

  private async stateWhen(test: (nodes: NodeState[]) => boolean) {
    const nodes = await this.state()
    return test(nodes) ? nodes : undefined
  }

  /** Waits for a primary and a secondary, each in the state the monitor assigned it. */
  async waitHealthy(timeoutMs: number) {
    await until(
      'a primary and a synchronous standby',
      async () => {
        const nodes = await this.state()
        const settled = nodes.length === 2 && nodes.every((node) => node.reported === node.goal)
        const roles = nodes.map((node) => node.reported).sort()
        if (settled && roles[0] === 'primary' && roles[1] === 'secondary') return nodes
        // A standby's base backup waits for a checkpoint; asking for one spares it the wait.
        const primary = nodes.find((node) => ['single', 'wait_primary'].includes(node.reported))
        const node = this.nodes.find((known) => known.name === primary?.name)
        if (node) await queryOnce(this.nodeUrl(node), 'CHECKPOINT').catch(() => {})
        return undefined
      },
      timeoutMs,
      1000
    )
  }

  /** The node the monitor has made primary, if one is. */
  async primary(): Promise<HaNode | undefined> {
    const nodes = await this.state()
    const primary = nodes.find(
      (node) => ['primary', 'wait_primary', 'single'].includes(node.reported) && node.reported === node.goal
    )
    return this.nodes.find((node) => node.name === primary?.name)
  }

  /** The pid of a node's postmaster, from its postmaster.pid. */
  postmasterPid(node: HaNode): number {
    return Number(readFileSync(join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  }

  /** SIGKILL to a node's keeper, its Postgres and every backend: the machine is gone. */
  kill(node: HaNode) {
    signalGroup(node.keeper, 'SIGKILL')
  }

  /**
   * A planned switchover (`pg_autoctl perform switchover`): the primary is demoted and the standby
   * promoted once it has caught up. Returns whether it succeeded and the lines of its output that say how.
   */
  async switchover(): Promise<{ ok: boolean; output: string }> {
    const node = this.nodes[0]!
    return new Promise((done) => {
      execFile(
        PG_AUTOCTL,
        ['perform', 'switchover', '--pgdata', node.dataDir, '--wait', '120'],
        { env: this.env, cwd: '/', timeout: 150_000, ...postgresUser() },
        (error, stdout, stderr) => {
          const output = `${stdout}${stderr}`
            .split('\n')
            .filter((line) => /ERROR|FATAL|WARN|switchover|failover/i.test(line))
            .slice(-6)
            .join(' | ')
          done({ ok: !error, output: `${error ? `exit ${error.code ?? error.signal}: ` : ''}${output}` })
        }
      )
    })
  }

  /** Where a node's keeper and PostgreSQL write their log. */
  logPath(node: { name: string }) {
    return join(this.logs, `${node.name}.log`)
  }

  /** Starts a killed node's keeper again: it rejoins as a standby of the new primary. */
  rejoin(node: HaNode) {
    node.keeper = spawnAsPostgres(node.namespace, ['run', '--pgdata', node.dataDir], this.logPath(node), this.env)
  }

  private async stop() {
    await Promise.all(this.nodes.map((node) => stopGroup(node.keeper)))
    if (this.monitor) await stopGroup(this.monitor)
    await rm(this.folder, { recursive: true, force: true })
  }
}

/** A PostgreSQL protocol message: a type byte (none for the start-up message), its length, its body. */
function message(type: string, body: Buffer): string {
  const length = Buffer.alloc(4)
  length.writeInt32BE(body.length + 4)
  return Buffer.concat([Buffer.from(type), length, body]).toString('hex')
}

const cString = (...parts: string[]) => Buffer.from(parts.map((part) => `${part}\0`).join(''))

/**
 * HAProxy's check of a node, in the PostgreSQL protocol (the nodes trust loopback): log in, ask
 * whether it is a writable primary (not in recovery, and not read-only, as pg_auto_failover keeps a
 * promoted node until its old primary is gone) and log out, and expect the answer `writable-primary`.
 * HAProxy runs it itself: no program is forked per check, which a busy machine cannot afford. The
 * log-out goes in the query's packet, so that a node answering `other` closes the connection and
 * fails the check at once; HAProxy otherwise waits for the string until `timeout check` (3 s).
 */
function primaryCheck(): string[] {
  const protocol = Buffer.from([0, 3, 0, 0])
  const startup = message(
    '',
    Buffer.concat([protocol, cString('user', 'postgres', 'database', 'postgres'), Buffer.from([0])])
  )
  const query = message(
    'Q',
    cString(
      "SELECT CASE WHEN NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' THEN 'writable-primary' ELSE 'other' END AS role"
    )
  )
  return [
    '  option tcp-check',
    '  tcp-check connect',
    `  tcp-check send-binary ${startup}`,
    // AuthenticationOk: R, length 8, 0.
    '  tcp-check expect binary 520000000800000000',
    `  tcp-check send-binary ${query}${message('X', Buffer.alloc(0))}`,
    '  tcp-check expect string writable-primary'
  ]
}

/**
 * HAProxy in TCP mode in front of both nodes, sending connections only to the node that answers as a
 * writable primary; sessions to a node that stops being one are closed.
 */
async function startPrimaryProxy(
  nodes: HaNode[],
  logs: string,
  databasePath: string
): Promise<{ port: number; process: RunningProcess }> {
  const port = await freePort()
  const prefix = await mkdtemp(join(tmpdir(), 'animal-store-chaos-haproxy-'))
  await writeFile(
    join(prefix, 'haproxy.cfg'),
    [
      'global',
      '  log stderr format iso local0 notice',
      'defaults',
      '  log global',
      '  mode tcp',
      '  timeout connect 1s',
      // A connection refused by one node is tried once more, on the other.
      '  retries 1',
      '  option redispatch 1',
      '  timeout check 3s',
      '  timeout client 1h',
      '  timeout server 1h',
      'listen postgres',
      `  bind 127.0.0.1:${port}`,
      `  bind ${databasePath}:${port}`,
      ...primaryCheck(),
      // A node changing role is checked every 250 ms, and a refused connection takes it out at once:
      // the old primary leaves and the new one joins within a quarter of a second (docs/deploy.md).
      '  default-server inter 1s fastinter 250ms downinter 250ms fall 3 rise 1',
      '  default-server observe layer4 error-limit 1 on-error mark-down on-marked-down shutdown-sessions',
      ...nodes.map((node) => `  server ${node.name} ${node.host}:${node.port} check`),
      ''
    ].join('\n')
  )
  const haproxy = startProcess(TOOLS.haproxy.path, ['-db', '-f', join(prefix, 'haproxy.cfg')], processEnv({}))
  return {
    port,
    process: {
      ...haproxy,
      async stop() {
        await haproxy.stop('SIGTERM')
        await writeFile(join(logs, 'haproxy.log'), haproxy.stderr())
        await rm(prefix, { recursive: true, force: true })
      }
    }
  }
}

export interface Instance {
  name: string
  /** Its network namespace: the database path can be cut off from it alone. */
  namespace: Namespace
  port: number
  url: string
  process: RunningProcess
  /** Milliseconds its clock runs ahead of the machine's (libfaketime; behind when negative), 0 normally. */
  clockOffsetMs: number
  /** The checkout its process runs from. */
  release: Release
}

export interface Topology {
  /** nginx: where the load goes. */
  url: string
  instances: Instance[]
  cluster: AutoFailover
  network: Network
  /** Through HAProxy to the primary, as DATABASE_DIRECT_URL. */
  directUrl: string
  bouncer: PgBouncer
  /** The instance's name from nginx's upstream address (the last tried, if several). */
  instanceAt(upstream: string | null): string | null
  /** Stops an instance as SIGKILL would end it. */
  killInstance(instance: Instance): Promise<void>
  /**
   * Starts an instance again on its port; with `clockOffsetMs`, under libfaketime with its clock that
   * far ahead (behind when negative); with `release`, from that checkout rather than the one it ran from.
   */
  startInstance(instance: Instance, clockOffsetMs?: number, release?: Release): Promise<void>
  /** Stops an instance gracefully (SIGTERM), as a deploy would. */
  stopInstance(instance: Instance): Promise<void>
  /** Stops PgBouncer (SIGTERM: at once) and starts it again on the same port. */
  restartBouncer(): Promise<{ oldPid: number; newPid: number }>
  stop(): Promise<void>
}

export interface TopologyOptions {
  logs: string
  instanceEnv: Record<string, string>
  /** The checkout the instances start from: the previous release in an upgrade; this one otherwise. */
  release: Release
}

/**
 * The roles of deploy/postgres/roles.sql, made as docs/deploy.md makes them, and the URL through
 * HAProxy of the one the service's requests use, which is not a superuser: on a primary cut off from
 * its synchronous standby, every commit waits, each connection the service gives up on leaves its
 * backend waiting, and as a superuser they took the last slots too ("sorry, too many clients
 * already"), PostgreSQL's reserve for its superusers, which pg_auto_failover's keeper needs to see
 * that it is cut off and demote itself.
 */
async function makeServiceRole(directUrl: string) {
  const role = 'animal_store_service'
  const password = () => randomBytes(12).toString('hex')
  await makeDeployRoles(directUrl, {
    DATABASE_OWNER_PASSWORD: password(),
    DATABASE_SERVICE_ROLE: role,
    DATABASE_SERVICE_PASSWORD: password()
  })
  const url = new URL(directUrl)
  url.username = role
  return url.toString()
}

/** Starts everything; stops whatever had started when a step fails. */
export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const stops: (() => Promise<void>)[] = []
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {})
  }
  try {
    const network = await startNetwork()
    stops.push(() => network.stop())
    const cluster = await AutoFailover.start(options.logs, network, (stop) => stops.push(stop))
    const proxy = await startPrimaryProxy(cluster.nodes, options.logs, network.databasePath)
    stops.push(() => proxy.process.stop())
    const directUrl = `postgres://postgres@127.0.0.1:${proxy.port}/${DATABASE}`
    // HAProxy takes each node for up until its checks say otherwise, so a first connection may reach the
    // standby: wait until several in a row reach the writable primary.
    const writable = "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable"
    await until(
      'HAProxy to reach only the writable primary',
      async () => {
        for (let i = 0; i < 6; i++) {
          const [row] = await queryOnce<{ writable: boolean }>(directUrl, writable)
          if (row?.writable !== true) return undefined
        }
        return true
      },
      60_000
    )
    const serviceUrl = await makeServiceRole(directUrl)
    const saveOutput = async (name: string, program: RunningProcess) =>
      writeFile(join(options.logs, `${name}.log`), `${program.stdout()}${program.stderr()}`, { flag: 'a' })
    const listenAddresses = [network.databasePath]
    let bouncer = await startPgBouncer(serviceUrl, { startTimeoutMs: 120_000, listenAddresses })
    const bouncerPort = bouncer.port
    stops.push(async () => {
      await bouncer.stop()
      await saveOutput('pgbouncer', bouncer)
    })

    // The instances reach PgBouncer and HAProxy at the database path's address, and nginx reaches them
    // from the host's: a partition can take the one and leave the other.
    const onDatabasePath = (url: string) => {
      const moved = new URL(url)
      moved.hostname = network.databasePath
      return moved.toString()
    }
    const env = {
      ...options.instanceEnv,
      TRUST_PROXY: network.host,
      DATABASE_URL: onDatabasePath(bouncer.url),
      DATABASE_DIRECT_URL: onDatabasePath(directUrl)
    }
    const instances: Instance[] = []
    for (const name of ['a', 'b', 'c']) {
      const port = await freePort()
      const namespace = await network.add(name)
      const url = `http://${namespace.address}:${port}`
      instances.push({ name, namespace, port, url, process: undefined!, clockOffsetMs: 0, release: options.release })
    }
    const startInstance = async (instance: Instance, clockOffsetMs = 0, release = instance.release) => {
      const faked: Record<string, string> = clockOffsetMs
        ? {
            LD_PRELOAD: LIBFAKETIME,
            FAKETIME: `${clockOffsetMs > 0 ? '+' : '-'}${Math.abs(clockOffsetMs) / 1000}s`,
            FAKETIME_DONT_FAKE_MONOTONIC: '1'
          }
        : {}
      instance.clockOffsetMs = clockOffsetMs
      instance.release = release
      // As a supervisor would: a process that exits while starting (its database was failing over) is
      // started again, for up to two minutes: a failover on a busy machine takes 40 s and more.
      const deadline = Date.now() + 120_000
      for (;;) {
        const metricsPort = await freePort()
        instance.process = startProcess(
          ...instance.namespace.wrap(process.execPath, [join(release.folder, 'dist/src/server.js')]),
          processEnv({
            HOST: instance.namespace.address,
            PORT: String(instance.port),
            METRICS_PORT: String(metricsPort),
            ...env,
            ...faked
          }),
          { cwd: release.folder }
        )
        try {
          await waitFor(`${instance.url}/health/ready`, instance.process, 120_000)
          return
        } catch (error) {
          await saveOutput(`instance-${instance.name}`, instance.process)
          if (Date.now() > deadline || running(instance.process.child)) throw error
          await sleep(2000)
        }
      }
    }
    // One at a time: the first runs the migrations.
    for (const instance of instances) {
      stops.push(async () => {
        await instance.process.stop('SIGTERM')
        await saveOutput(`instance-${instance.name}`, instance.process)
      })
      await startInstance(instance)
    }
    const nginx: Nginx = await startNginx(
      instances.map((instance) => `${instance.namespace.address}:${instance.port}`),
      { upstreamHeader: true }
    )
    stops.push(() => nginx.stop())
    const byPort = new Map(
      instances.map((instance) => [`${instance.namespace.address}:${instance.port}`, instance.name])
    )

    return {
      url: nginx.url,
      instances,
      cluster,
      network,
      directUrl,
      get bouncer() {
        return bouncer
      },
      instanceAt(upstream) {
        const last = upstream?.split(',').at(-1)?.trim()
        return (last && byPort.get(last)) || null
      },
      async killInstance(instance) {
        await instance.process.stop('SIGKILL')
        await saveOutput(`instance-${instance.name}`, instance.process)
      },
      startInstance,
      async stopInstance(instance) {
        await instance.process.stop('SIGTERM')
        await saveOutput(`instance-${instance.name}`, instance.process)
      },
      async restartBouncer() {
        const oldPid = bouncer.child.pid!
        await bouncer.stop()
        await saveOutput('pgbouncer', bouncer)
        bouncer = await startPgBouncer(serviceUrl, { port: bouncerPort, startTimeoutMs: 120_000, listenAddresses })
        return { oldPid, newPid: bouncer.child.pid! }
      },
      stop: stopAll
    }
  } catch (error) {
    await stopAll()
    throw error
  }
}
