import type { Config } from '../config.js'
import { startEmbeddedPostgres } from './embedded.js'

export interface DatabaseLocation {
  url: string
  /** Where the data lives, fit for a log line: never carries a password. */
  description: string
  embedded: boolean
  stop(): Promise<void>
}

export function describeUrl(url: string): string {
  const parsed = new URL(url)
  return `postgres://${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`
}

/** DATABASE_URL when set; otherwise the embedded cluster in EMBEDDED_DATA_DIR. */
export async function openDatabaseLocation(
  config: Config,
  log: (message: string) => void = () => {}
): Promise<DatabaseLocation> {
  if (config.DATABASE_URL) {
    return { url: config.DATABASE_URL, description: describeUrl(config.DATABASE_URL), embedded: false, stop: async () => {} }
  }
  const embedded = await startEmbeddedPostgres({ dataDir: config.EMBEDDED_DATA_DIR, database: 'animal_store', log })
  return {
    url: embedded.url,
    description: `embedded PostgreSQL in ${config.EMBEDDED_DATA_DIR}/pg`,
    embedded: true,
    stop: embedded.stop
  }
}
