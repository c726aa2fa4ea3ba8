import proxyAddr from '@fastify/proxy-addr'
import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'

const ISO_DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$'

// The one description of the service's configuration. Nothing else reads process.env.
export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development'
  }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // A direct session connection for migrations and change notifications, when DATABASE_URL is a
  // transaction pooler (PgBouncer in transaction mode); unset, DATABASE_URL serves both.
  DATABASE_DIRECT_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_MAX: Type.Integer({ default: 10, minimum: 1, maximum: 200 }),
  // Longest wait for a pooled connection, a new connection or a query's answer before a request gets 503.
  DATABASE_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 100 }),
  // Whether the server and the CLI's key commands run pending migrations at start. false where their
  // role may not change the schema: then start-up stops while migrations are pending.
  MIGRATE_ON_START: Type.Boolean({ default: true }),
  EMBEDDED_DATA_DIR: Type.String({ default: '.data', minLength: 1 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' }
  ),
  // Operations (docs/deploy.md): the metrics listener, shutdown and the HTTP server's timeouts.
  METRICS_HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  // 0 turns the metrics listener off.
  METRICS_PORT: Type.Integer({ default: 9464, minimum: 0, maximum: 65535 }),
  // The admin API (keys and usage over HTTP) listens only when ADMIN_TOKEN is set, on its own address.
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 32 })),
  ADMIN_HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  ADMIN_PORT: Type.Integer({ default: 9465, minimum: 0, maximum: 65535 }),
  // Days of usage per key kept for billing; older days are deleted.
  USAGE_RETENTION_DAYS: Type.Integer({ default: 400, minimum: 1 }),
  AUDIT_RETENTION_DAYS: Type.Integer({
    default: 400,
    minimum: 1,
    description: 'Days an audit event of an account or key change is kept; older events are deleted'
  }),
  ADMIN_PUBLIC_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^/?#]+(/[^?#]*)?$',
      description:
        "The admin API's address as its callers reach it (scheme, host, optional path before /admin/v1), for " +
        'the Link header of its listings; without it the header carries a relative reference'
    })
  ),
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  // Longer than the load balancer's idle timeout for upstream connections, so the balancer closes first.
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 100 }),
  CONNECTION_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+(/.*)?/v1$' })),
  STAGING_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+(/.*)?/v1$' })),
  // The load balancers whose X-Forwarded-For and X-Request-Id are believed: a comma-separated list of
  // addresses, CIDR ranges and the names loopback, linklocal and uniquelocal; false (or empty) for none.
  TRUST_PROXY: Type.String({ default: 'false' }),
  // Requests a client address may make per minute without a valid key.
  UNAUTHENTICATED_PER_MINUTE: Type.Integer({ default: 60, minimum: 1 }),
  // Requests a key may send while refused, after its first 429 in a window, before it is banned.
  BAN_AFTER: Type.Integer({ default: 10, minimum: 0 }),
  BAN_SECONDS: Type.Integer({ default: 900, minimum: 1 }),
  // How long a request waits for one with the same Idempotency-Key still in flight before 409, and how
  // often expired keys are deleted.
  IDEMPOTENCY_WAIT_MS: Type.Integer({ default: 1000, minimum: 1 }),
  IDEMPOTENCY_CLEANUP_INTERVAL_MS: Type.Integer({ default: 600_000, minimum: 100 }),
  // Overload shedding (@fastify/under-pressure): /v1 answers 503 while a measure is over its limit; 0 turns one off.
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ default: 1000, minimum: 0 }),
  OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: Type.Number({ default: 0, minimum: 0, maximum: 1 }),
  OVERLOAD_MAX_HEAP_USED_BYTES: Type.Integer({ default: 0, minimum: 0 }),
  // Largest request head (request line and headers) the HTTP server reads; larger ones get 431.
  MAX_HEADER_BYTES: Type.Integer({ default: 16_384, minimum: 1024, maximum: 1_048_576 }),
  DEPRECATION_DATE: Type.String({ default: '2026-11-22T00:00:00Z', pattern: ISO_DATE_TIME }),
  SUNSET_DATE: Type.String({ default: '2030-12-05T00:00:00Z', pattern: ISO_DATE_TIME })
})

export type Config = Static<typeof ConfigSchema> & {
  PUBLIC_BASE_URL: string
  STAGING_BASE_URL: string
}

export class ConfigError extends Error {}

const PROXY_EXAMPLE =
  "the load balancer's addresses or CIDR ranges, e.g. TRUST_PROXY=10.0.0.0/8 or TRUST_PROXY=loopback"

/**
 * The peers TRUST_PROXY trusts, as Fastify's `trustProxy` and @fastify/proxy-addr take them. `true`
 * and hop counts are refused: with either, a client that reaches the port directly names its own
 * address in X-Forwarded-For.
 */
export function trustedProxies(value: string): string[] {
  const setting = value.trim().toLowerCase()
  if (setting === 'false' || setting === '') return []
  if (setting === 'true') {
    throw new ConfigError(`Invalid configuration: TRUST_PROXY=true would believe any client; list ${PROXY_EXAMPLE}`)
  }
  if (/^\d+$/.test(setting)) {
    throw new ConfigError(
      `Invalid configuration: TRUST_PROXY=${setting} is a hop count, which believes whoever connects; list ${PROXY_EXAMPLE}`
    )
  }
  const entries = value.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    try {
      proxyAddr.compile(entry)
    } catch {
      throw new ConfigError(
        `Invalid configuration: TRUST_PROXY has '${entry}', which is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`
      )
    }
  }
  return entries
}

// Validates an environment into a typed Config; throws a ConfigError whose message names the variable.
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  let raw: Static<typeof ConfigSchema>
  try {
    raw = envSchema<Static<typeof ConfigSchema>>({ schema: ConfigSchema, data: { ...env }, dotenv: false })
  } catch (error) {
    const message = (error as Error).message.replace(/^env\/?/, '').replace(/^must /, 'configuration must ')
    throw new ConfigError(`Invalid configuration: ${message}`)
  }
  trustedProxies(raw.TRUST_PROXY)
  if (raw.HEADERS_TIMEOUT_MS > raw.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS')
  }
  const localBase = `http://${raw.HOST === '0.0.0.0' ? '127.0.0.1' : raw.HOST}:${raw.PORT}/v1`
  const publicBase = raw.PUBLIC_BASE_URL ?? localBase
  return { ...raw, PUBLIC_BASE_URL: publicBase, STAGING_BASE_URL: raw.STAGING_BASE_URL ?? publicBase }
}
