import { readdirSync } from 'node:fs'
import { appendFile, chmod, chown, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { vi } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { freePort, startEmbeddedPostgres } from '../../src/db/embedded.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import type { TestDatabase } from './database.js'
import { crashPostmaster, freezePostmaster, signal } from '../../harness/postmaster.js'
import { postgresUser, run } from '../../harness/processes.js'

export interface StoppableCluster {
  database: TestDatabase
  stop(): Promise<void>
  start(): Promise<void>
  /** Stops Postgres as a crash would (`pg_ctl stop -m immediate`): no checkpoint, recovery on the next start. */
  crash(): Promise<void>
  /** SIGSTOP to the postmaster and every child: connections stay open and nothing answers. */
  freeze(): Promise<void>
  /** SIGCONT to the processes freeze() stopped. */
  thaw(): Promise<void>
  destroy(): Promise<void>
}

/**
 * A PostgreSQL cluster of the test's own, which the test can stop, crash, freeze and start again
 * (same port, same data) to see how the service behaves while its database is down and after it returns.
 */
export async function startStoppableCluster(options: { timeoutMs?: number } = {}): Promise<StoppableCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-outage-'))
  // As root the cluster runs as the postgres user, which must be able to enter the folder.
  await chmod(dir, 0o755)
  // Not ephemeral: the data must outlive a stop; destroy() removes the folder.
  const cluster = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), database: 'store' })
  const clusterDir = join(dir, 'data', 'pg')
  // Named apart from the service's connections, which tests count.
  const handle = connectDatabase({
    url: cluster.url,
    poolMax: 5,
    timeoutMs: options.timeoutMs ?? 1000,
    applicationName: 'animal-store-test'
  })
  await migrateToLatestOrThrow(handle.db)
  const database: TestDatabase = { ...handle, name: 'store', drop: async () => handle.close() }
  let running = true
  let frozen: number[] = []
  const thaw = async () => {
    for (const pid of frozen) signal(pid, 'SIGCONT')
    frozen = []
  }
  return {
    database,
    async stop() {
      await cluster.stop()
      running = false
    },
    async start() {
      await cluster.start()
      running = true
    },
    async crash() {
      await crashPostmaster(clusterDir)
      running = false
    },
    async freeze() {
      frozen = await freezePostmaster(clusterDir)
    },
    thaw,
    async destroy() {
      await thaw()
      // Stopped first: its shutdown ends sessions a failed test left waiting, which closing the pool would wait for.
      if (running) await cluster.stop()
      await handle.close().catch(() => {})
      await rm(dir, { recursive: true, force: true })
    }
  }
}

export interface DebianCluster {
  port: number
  /** The cluster's data directory, in a folder of the test's own. */
  dataDir: string
  /** A trust-authenticated superuser URL on loopback. */
  url(database?: string): string
  /** `pg_ctl stop -m immediate`: the server quits at once, as in a crash. */
  crash(): Promise<void>
  /** `pg_ctl promote`: a standby becomes a primary that accepts writes. */
  promote(): Promise<void>
  /** A standby: waits until it has replayed everything `primary` has written so far. */
  catchUpWith(primary: DebianCluster): Promise<void>
  destroy(): Promise<void>
}

// Debian's server programs (package postgresql) are not on PATH; the newest installed version.
function debianBinaries(): string {
  const [newest] = readdirSync('/usr/lib/postgresql')
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
  return `/usr/lib/postgresql/${newest}/bin`
}

async function postgresProgram(program: string, args: string[]): Promise<void> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' }
  const result = await run(join(debianBinaries(), program), args, { cwd: '/', env, user: postgresUser() })
  if (result.code !== 0) throw new Error(`${program} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`)
}

/**
 * A cluster of Debian's PostgreSQL in a folder of the test's own, on a free loopback port, run with
 * `pg_ctl` (not `pg_createcluster`, which would register it system-wide). With `standbyOf`, a
 * streaming replica made with `pg_basebackup` from that primary; otherwise a new primary.
 */
export async function startDebianCluster(options: { standbyOf?: DebianCluster } = {}): Promise<DebianCluster> {
  const folder = await mkdtemp(join(tmpdir(), 'animal-store-pg-'))
  const user = postgresUser()
  if (user) await chown(folder, user.uid, user.gid)
  const dataDir = join(folder, 'data')
  const port = await freePort()
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`
  const { standbyOf } = options
  if (standbyOf) {
    // -R writes the standby's connection to the primary; -C -S keeps the WAL it has not received yet.
    const slot = `standby_${port}`
    await postgresProgram('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(standbyOf.port), '-U', 'postgres'],
      ...['-D', dataDir, '-R', '-X', 'stream', '-C', '-S', slot, '--checkpoint=fast']
    ])
  } else {
    await postgresProgram('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '-N'])
  }
  // Later lines win: a standby's copy of the primary's settings gets a port of its own.
  await appendFile(
    join(dataDir, 'postgresql.conf'),
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n`
  )
  const pgCtl = (...args: string[]) => postgresProgram('pg_ctl', ['-D', dataDir, '-w', '-t', '60', ...args])
  await pgCtl('start', '-l', join(folder, 'server.log'))
  let running = true
  const query = async <Row>(target: string, text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    try {
      return (await client.query<Row & pg.QueryResultRow>(text, values)).rows
    } finally {
      await client.end()
    }
  }
  return {
    port,
    dataDir,
    url,
    async crash() {
      await pgCtl('stop', '-m', 'immediate')
      running = false
    },
    promote: () => pgCtl('promote'),
    async catchUpWith(primary) {
      const [written] = await query<{ lsn: string }>(primary.url(), 'SELECT pg_current_wal_insert_lsn()::text AS lsn')
      await vi.waitFor(
        async () => {
          const [standby] = await query<{ replayed: boolean }>(
            url(),
            'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS replayed',
            [written!.lsn]
          )
          if (!standby!.replayed) throw new Error('the standby has not replayed the primary’s WAL')
        },
        { timeout: 30_000, interval: 50 }
      )
    },
    async destroy() {
      if (running) await pgCtl('stop', '-m', 'immediate').catch(() => {})
      await rm(folder, { recursive: true, force: true })
    }
  }
}
