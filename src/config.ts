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
  DATABASE_POOL_MAX: Type.Integer({ default: 10, minimum: 1, maximum: 200 }),
  DATABASE_TIMEOUT_MS: Type.Integer({ default: 2000, minimum: 100 }),
  EMBEDDED_DATA_DIR: Type.String({ default: '.data', minLength: 1 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' }
  ),
  // Operations (docs/deploy.md): the metrics listener, shutdown and the HTTP server's timeouts.
  METRICS_HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  // 0 turns the metrics listener off.
  METRICS_PORT: Type.Integer({ default: 9464, minimum: 0, maximum: 65535 }),
  SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 100 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  // Longer than the load balancer's idle timeout for upstream connections, so the balancer closes first.
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 100 }),
  CONNECTION_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+(/.*)?/v1$' })),
  STAGING_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+(/.*)?/v1$' })),
  // Whether X-Forwarded-For / X-Request-Id from the load balancer are believed: false, true, a hop
  // count, or a comma-separated list of trusted addresses or CIDR ranges.
  TRUST_PROXY: Type.String({ default: 'false' }),
  // Requests a client address may make per minute without a valid key.
  UNAUTHENTICATED_PER_MINUTE: Type.Integer({ default: 60, minimum: 1 }),
  // Requests a key may send while refused, after its first 429 in a window, before it is banned.
  BAN_AFTER: Type.Integer({ default: 10, minimum: 0 }),
  BAN_SECONDS: Type.Integer({ default: 900, minimum: 1 }),
  // How long a request holds its Idempotency-Key before a retry with the same body may take over
  // (the instance serving it crashed), and how often expired keys are deleted.
  IDEMPOTENCY_CLAIM_MS: Type.Integer({ default: 10_000, minimum: 100 }),
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

/** TRUST_PROXY as Fastify's `trustProxy` option takes it. */
export function trustProxySetting(value: string): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === 'true') return true
  if (value === 'false' || value === '') return false
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value.split(',').map((entry) => entry.trim()).filter(Boolean)
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
  if (raw.HEADERS_TIMEOUT_MS > raw.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS')
  }
  const localBase = `http://${raw.HOST === '0.0.0.0' ? '127.0.0.1' : raw.HOST}:${raw.PORT}/v1`
  const publicBase = raw.PUBLIC_BASE_URL ?? localBase
  return { ...raw, PUBLIC_BASE_URL: publicBase, STAGING_BASE_URL: raw.STAGING_BASE_URL ?? publicBase }
}
