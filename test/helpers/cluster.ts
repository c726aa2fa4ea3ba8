import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectDatabase } from '../../src/db/connect.js'
import { startEmbeddedPostgres } from '../../src/db/embedded.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import type { TestDatabase } from './database.js'

export interface StoppableCluster {
  database: TestDatabase
  stop(): Promise<void>
  start(): Promise<void>
  destroy(): Promise<void>
}

/**
 * A PostgreSQL cluster of the test's own, which the test can stop and start again (same port,
 * same data) to see how the service behaves while its database is down and after it returns.
 */
export async function startStoppableCluster(options: { timeoutMs?: number } = {}): Promise<StoppableCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-outage-'))
  // As root the cluster runs as the postgres user, which must be able to enter the folder.
  await chmod(dir, 0o755)
  // Not ephemeral: the data must outlive a stop; destroy() removes the folder.
  const cluster = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), database: 'store' })
  const handle = connectDatabase({ url: cluster.url, poolMax: 5, timeoutMs: options.timeoutMs ?? 1000 })
  await migrateToLatestOrThrow(handle.db)
  const database: TestDatabase = { ...handle, name: 'store', drop: async () => handle.close() }
  return {
    database,
    stop: cluster.stop,
    start: cluster.start,
    async destroy() {
      await handle.close().catch(() => {})
      await cluster.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
