import type { Config } from '../config.js'
import { startEmbeddedPostgres } from './embedded.js'

export interface DatabaseLocation {
  url: string
  /** A session of its own, never through a transaction pooler: migrations and LISTEN. */
  directUrl: string
  /** Where the data lives, fit for a log line: never carries a password. */
  description: string
  embedded: boolean
  stop(): Promise<void>
}

function describeUrl(url: string): string {
  const parsed = new URL(url)
  return `postgres://${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`
}

/** DATABASE_URL when set; otherwise the embedded cluster in EMBEDDED_DATA_DIR. */
export async function openDatabaseLocation(
  config: Config,
  log: (message: string) => void = () => {}
): Promise<DatabaseLocation> {
  if (config.DATABASE_URL) {
    return {
      url: config.DATABASE_URL,
      directUrl: config.DATABASE_DIRECT_URL ?? config.DATABASE_URL,
      description: describeUrl(config.DATABASE_URL),
      embedded: false,
      stop: async () => {}
    }
  }
  const embedded = await startEmbeddedPostgres({ dataDir: config.EMBEDDED_DATA_DIR, database: 'animal_store', log })
  return {
    url: embedded.url,
    directUrl: embedded.url,
    description: `embedded PostgreSQL in ${config.EMBEDDED_DATA_DIR}/pg`,
    embedded: true,
    stop: embedded.stop
  }
}
