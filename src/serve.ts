import closeWithGrace from 'close-with-grace'
import type { Kysely } from 'kysely'
import { buildAdminApp } from './admin/app.js'
import { buildApp } from './app.js'
import { adminTokens, webhookAddressPolicy, type Config } from './config.js'
import { connectDatabase, connectDedicated } from './db/connect.js'
import { prepareSchema, withSchemaConnection } from './db/migrate.js'
import { openDatabaseLocation, type DatabaseLocation } from './db/open.js'
import type { Database } from './db/schema.js'
import { countApiKeys, issueApiKey } from './repositories/api-keys.js'
import { registerAdminCredentials } from './repositories/operators.js'
import { wake } from './v8-flags.js'
import { startWebhookWorker } from './webhooks/worker.js'

/** On a first start with the embedded database, one free-plan key so a newcomer can call the API at once. */
async function issueDevelopmentKey(db: Kysely<Database>) {
  if ((await countApiKeys(db)) > 0) return undefined
  return issueApiKey(db, { plan: 'free', name: 'development' })
}

/** What the process started before this module loaded, to close after the database. */
export interface Started {
  tracing?: { shutdown(): Promise<void> }
}

/** Opens the database (embedded, or DATABASE_URL's), builds the apps, listens, and closes with grace. */
export async function serve(config: Config, started: Started = {}) {
  const location = await openDatabaseLocation(config)
  try {
    await serveOn(config, location, started)
  } catch (error) {
    // An embedded cluster this process started would outlive it.
    await location.stop().catch(() => {})
    throw error
  }
}

async function serveOn(config: Config, location: DatabaseLocation, started: Started) {
  await withSchemaConnection(location.directUrl, config.DATABASE_TIMEOUT_MS, async (db) => {
    await prepareSchema(db, { migrate: config.MIGRATE_ON_START })
    // As the schema's owner (a development database), ADMIN_TOKEN is registered here; else by `migrate`.
    if (config.ADMIN_TOKEN) await registerAdminCredentials(db, adminTokens(config.ADMIN_TOKEN))
  })
  const database = connectDatabase({
    url: location.url,
    directUrl: location.directUrl,
    poolMax: config.DATABASE_POOL_MAX,
    timeoutMs: config.DATABASE_TIMEOUT_MS,
    queryTimeoutMs: config.DATABASE_TIMEOUT_MS
  })
  const developmentKey = location.embedded ? await issueDevelopmentKey(database.db) : undefined
  const app = await buildApp({ config, database })
  // Keys over HTTP, on a listener of their own, only when ADMIN_TOKEN is set.
  const admin = config.ADMIN_TOKEN ? await buildAdminApp({ config, database }) : undefined
  const webhooks = config.WEBHOOKS_WORKER ? startWebhooks(config, database, app) : undefined
  app.server.on('request', wake)
  admin?.server.on('request', wake)

  // Readiness turns 503, in-flight requests finish, then the pool closes; past the grace period the process exits 1.
  const logger = {
    error: (message: unknown) =>
      message instanceof Error ? app.log.error({ err: message }, 'shutdown failed') : app.log.error(String(message))
  }
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS, logger }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await Promise.all([app.close(), admin?.close(), webhooks?.stop()])
    await database.close()
    await location.stop()
    await started.tracing?.shutdown()
    app.log.info('shut down cleanly')
  })

  // The side listeners first: once the public port answers and says so, nothing is left to fail.
  await app.metrics.listen()
  if (admin) {
    await admin.listen({ host: config.ADMIN_HOST, port: config.ADMIN_PORT })
    const { port: adminPort } = admin.server.address() as { port: number }
    app.log.info(`admin API on http://${config.ADMIN_HOST}:${adminPort}/admin/v1`)
  }
  await app.listen({ host: config.HOST, port: config.PORT })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.PORT
  const base = `http://${config.HOST}:${port}/v1`
  app.log.info(`Animal Store API listening on ${base} using ${location.description}`)
  // The key goes to the terminal on stderr, never to the log stream on stdout, which collectors keep.
  if (developmentKey) {
    process.stderr.write(
      `\nDevelopment API key (free plan), shown only this once:\n  ${developmentKey.key}\n` +
        `Try it:\n  curl -H 'Authorization: Bearer ${developmentKey.key}' ${base}/pets\n\n`
    )
  }
}

/**
 * The outbox's delivery worker, on connections of its own (each endpoint being sent to holds one
 * while it sends, past the request pool's watchdog); its metrics beside the app's.
 */
function startWebhooks(
  config: Config,
  { url, directUrl }: { url: string; directUrl: string },
  app: Awaited<ReturnType<typeof buildApp>>
) {
  const dedicated = connectDedicated({
    url,
    max: config.WEBHOOKS_CONCURRENCY,
    queryTimeoutMs: Math.max(config.DATABASE_TIMEOUT_MS, 5000),
    applicationName: 'animal-store-webhooks'
  })
  const worker = startWebhookWorker({
    db: dedicated.db,
    policy: webhookAddressPolicy(config),
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    concurrency: config.WEBHOOKS_CONCURRENCY,
    // LISTEN needs a session: the direct address when the pooled one is a transaction pooler.
    listenUrl: directUrl,
    log: app.log,
    registry: app.metrics.registry
  })
  return {
    async stop() {
      await worker.stop()
      await dedicated.close()
    }
  }
}
