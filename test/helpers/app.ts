import { sql } from 'kysely'
import type { Writable } from 'node:stream'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { buildAdminApp } from '../../src/admin/app.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import type { PlanName } from '../../src/db/schema.js'
import { createLogger } from '../../src/logging.js'
import { replaceCustomLimits, type CustomLimits } from '../../src/repositories/accounts.js'
import { getApiKey, issueApiKey } from '../../src/repositories/api-keys.js'
import { afterAll, beforeAll, expect, vi } from 'vitest'
import { createTestDatabase, type TestDatabase } from './database.js'

export interface TestAppOptions {
  env?: Record<string, string>
  clock?: () => number
  /** Receives the production logger's JSON lines (LOG_LEVEL defaults to info then). */
  logStream?: Writable
}

/** The configuration, through the production schema, and a logger when the test reads the log. */
function testSettings(database: TestDatabase, options: TestAppOptions) {
  const config = loadConfig({
    LOG_LEVEL: options.logStream ? 'info' : 'silent',
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    // Many apps share one test process, whose event loop the test machinery itself delays: shedding
    // on its delay is tested where a test turns it on (test/reliability/slow-clients.test.ts).
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    ...options.env
  })
  const logger = options.logStream ? createLogger(config, options.logStream) : undefined
  return { config, logger }
}

/**
 * The production app on a test database, configured through the same schema as production. Like a
 * separate instance, it has a connection pool of its own, closed with the app.
 */
export async function createTestApp(database: TestDatabase, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const { config, logger } = testSettings(database, options)
  const handle = connectDatabase({
    url: config.DATABASE_URL ?? database.url,
    directUrl: config.DATABASE_DIRECT_URL,
    poolMax: config.DATABASE_POOL_MAX,
    timeoutMs: config.DATABASE_TIMEOUT_MS,
    queryTimeoutMs: config.DATABASE_TIMEOUT_MS
  })
  const app = await buildApp({ config, database: handle, clock: options.clock, logger, afterClose: handle.close })
  await app.ready()
  return app
}

/** The admin token of the tests' admin apps, their ADMIN_TOKEN unless a test gives its own. */
export const ADMIN_TOKEN = 'admin-token-of-the-tests-0123456789abcdef'

/** Injects admin requests that carry ADMIN_TOKEN, unless they name an authorization of their own. */
export const asAdmin = (app: FastifyInstance) => withKey(app, ADMIN_TOKEN)

/** The admin app on a test database, as the server builds it beside the public app (ADMIN_TOKEN set). */
export async function createTestAdminApp(
  database: TestDatabase,
  options: TestAppOptions = {}
): Promise<FastifyInstance> {
  const { config, logger } = testSettings(database, { ...options, env: { ADMIN_TOKEN, ...options.env } })
  const handle = connectDatabase({ url: database.url, timeoutMs: config.DATABASE_TIMEOUT_MS })
  const app = await buildAdminApp({ config, database: handle, clock: options.clock, logger, afterClose: handle.close })
  await app.ready()
  return app
}

/**
 * A clock tests move by hand. With a database, moving it also fixes that database's clock
 * (service_clock, db/schema.sql) at the same instant, so that the instances, which decide every
 * limit on the database's clock and measure their offset from it, see the same time as the test.
 */
export function manualClock(start: Date | number, database?: () => TestDatabase) {
  let now = typeof start === 'number' ? start : start.getTime()
  const clock = () => now
  const write = async () => {
    if (database) {
      await sql`INSERT INTO service_clock (at) VALUES (${new Date(now)}) ON CONFLICT (one) DO UPDATE SET at = excluded.at`.execute(
        database().db
      )
    }
  }
  clock.set = async (to: Date | number) => {
    now = typeof to === 'number' ? to : to.getTime()
    await write()
  }
  clock.advance = async (ms: number) => {
    now += ms
    await write()
  }
  /** Lets the database's clock run again. */
  clock.release = async () => {
    if (database) await sql`DELETE FROM service_clock`.execute(database().db)
  }
  return clock
}

/** Issues a key; by default an enterprise key with limits no test reaches. */
export async function issueTestKey(
  database: TestDatabase,
  plan: PlanName = 'enterprise',
  limits: CustomLimits | undefined = plan === 'enterprise' ? { perMinute: 1_000_000, perDay: 100_000_000 } : undefined
): Promise<string> {
  return (await issueApiKey(database.db, { plan, limits, name: 'test' })).key
}

/**
 * Moves the key's account to `plan`, `limits` its only overrides (none without), writing the tables
 * directly: no audit event, no webhook event, as no path of the service may.
 */
export async function setApiKeyPlan(database: TestDatabase, id: bigint, plan: PlanName, limits?: CustomLimits) {
  const key = (await getApiKey(database.db, id))!
  await database.db.updateTable('accounts').set({ plan }).where('id', '=', key.accountId).execute()
  await replaceCustomLimits(database.db, key.accountId, limits ?? null)
}

/** Injects requests that carry the key. */
export function withKey(app: FastifyInstance, key: string) {
  return {
    inject: (options: InjectOptions) =>
      app.inject({ ...options, headers: { authorization: `Bearer ${key}`, ...options.headers } })
  }
}

/** A stream that keeps every JSON log line written to it. */
export function logCapture() {
  const lines: Record<string, unknown>[] = []
  let text = ''
  const stream = {
    write(chunk: string) {
      text += chunk
      for (const line of chunk.split('\n')) if (line.trim()) lines.push(JSON.parse(line))
      return true
    }
  } as unknown as Writable
  return { stream, lines, text: () => text }
}

/** A database of the test file's own and the production app on it, made before its tests and dropped after. */
export function useTestApp(options: TestAppOptions = {}) {
  const context = {} as { database: TestDatabase; app: FastifyInstance }
  beforeAll(async () => {
    context.database = await createTestDatabase()
    context.app = await createTestApp(context.database, options)
  })
  afterAll(async () => {
    await context.app?.close()
    await context.database?.drop()
  })
  return context
}

/**
 * A database of the test file's own with the admin app on it, and the public app beside it when
 * `api` is given, made before its tests and dropped after.
 */
export function useTestAdminApp(options: { admin?: TestAppOptions; api?: TestAppOptions } = {}) {
  const context = {} as { database: TestDatabase; admin: FastifyInstance; api: FastifyInstance }
  beforeAll(async () => {
    context.database = await createTestDatabase()
    context.admin = await createTestAdminApp(context.database, options.admin)
    if (options.api) context.api = await createTestApp(context.database, options.api)
  })
  afterAll(async () => {
    await Promise.all([context.admin?.close(), context.api?.close()])
    await context.database?.drop()
  })
  return context
}

/**
 * Waits until `check` holds on every instance. The change channel carries a change within about a
 * second; the 10 s bound, well short of a cached key's 60 s age, tells the two apart on a machine too
 * busy for the second.
 */
export async function onEveryInstance(apps: FastifyInstance[], check: (app: FastifyInstance) => Promise<boolean>) {
  await vi.waitFor(async () => expect((await Promise.all(apps.map(check))).every(Boolean)).toBe(true), {
    timeout: 10_000,
    interval: 20
  })
}
