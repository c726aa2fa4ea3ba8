import proxyAddr from '@fastify/proxy-addr'
import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import { bearerToken } from './auth/bearer-token.js'
import { parseAllowedCidrs, type AddressPolicy } from './webhooks/address-policy.js'

export const ISO_DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$'

// The one description of the service's configuration. Nothing else reads process.env.
// docs/configuration.md is generated from the descriptions below (npm run docs:config).
export const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
    description: '`production` logs JSON lines; `development` at a terminal logs pretty lines.'
  }),
  HOST: Type.String({
    default: '127.0.0.1',
    minLength: 1,
    description: 'Address the public listener binds (`0.0.0.0` in a container; the image sets it).'
  }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'Port of the public listener.' }),
  DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        'PostgreSQL connection URL, `postgres://user:password@host:5432/db`; its password is never logged. Unset, the server and the CLI run an embedded PostgreSQL in `EMBEDDED_DATA_DIR`. Required in the image.'
    })
  ),
  DATABASE_DIRECT_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description:
        'A direct session connection for migrations and change notifications (`LISTEN`), for when `DATABASE_URL` is a transaction pooler such as PgBouncer in transaction mode. Unset, `DATABASE_URL` serves both, and the hot statements are prepared per connection.'
    })
  ),
  DATABASE_POOL_MAX: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 200,
    description:
      "Connections in the request pool. An instance opens at most 3 more: 2 for the rate limiter's counting statements and 1 for change notifications; and `WEBHOOKS_CONCURRENCY` more while it runs the webhook worker."
  }),
  DATABASE_TIMEOUT_MS: Type.Integer({
    default: 2000,
    minimum: 100,
    description:
      "Longest wait for a pooled connection, a new connection or a query's answer before a request gets 503; also bounds the readiness probe."
  }),
  MIGRATE_ON_START: Type.Boolean({
    default: true,
    description:
      "Whether the server and the CLI's key commands run pending migrations at start. `false` where their role may not change the schema (the image sets it): start-up then stops, naming the migrate command, while migrations are pending."
  }),
  EMBEDDED_DATA_DIR: Type.String({
    default: '.data',
    minLength: 1,
    description: 'Folder of the embedded PostgreSQL, used when `DATABASE_URL` is unset.'
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'Lowest level of the log lines written.' }
  ),
  METRICS_HOST: Type.String({
    default: '127.0.0.1',
    minLength: 1,
    description: 'Address of the Prometheus listener (`GET /metrics`), separate from the public one.'
  }),
  METRICS_PORT: Type.Integer({
    default: 9464,
    minimum: 0,
    maximum: 65535,
    description: 'Port of the Prometheus listener, never the public port; `0` turns it off.'
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description:
        'Turns tracing on: the OTLP collector that spans go to (`http://collector:4318`). Unset, no tracing module is loaded. The OpenTelemetry SDK reads it itself, with the other standard variables: `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` (`parentbased_traceidratio` and `0.1` keep a tenth of the traces whose caller did not decide), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_BSP_*`, `OTEL_PROPAGATORS`. Only traces are sent: metrics stay on the Prometheus listener.'
    })
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Union(
    ['http/protobuf', 'http/json', 'grpc'].map((protocol) => Type.Literal(protocol)),
    {
      default: 'http/protobuf',
      description: 'How spans reach `OTEL_EXPORTER_OTLP_ENDPOINT`, as OpenTelemetry names the protocols.'
    }
  ),
  ADMIN_TOKEN: Type.Optional(
    Type.String({
      minLength: 32,
      description:
        'Turns the admin API on (keys and usage over HTTP, on a listener of its own). One token, or two separated by a comma while one replaces the other; each at least 32 of the characters a bearer token may hold (A-Z, a-z, 0-9 and - . _ ~ + /, then = only at its end), with at least 128 bits of entropy as its characters show it (one character repeated, or a word repeated, is refused: use `openssl rand -hex 32`), else start-up stops. It is the bootstrap admin: operators with their own tokens and roles are made with it. Keep it in a secret.'
    })
  ),
  ADMIN_HOST: Type.String({
    default: '127.0.0.1',
    minLength: 1,
    description: "Address of the admin API's own listener."
  }),
  ADMIN_PORT: Type.Integer({
    default: 9465,
    minimum: 0,
    maximum: 65535,
    description: 'Port of the admin API, never the public port.'
  }),
  USAGE_RETENTION_DAYS: Type.Integer({
    default: 400,
    minimum: 1,
    description: 'Days of per-key hourly usage kept for billing; older hours are deleted every ten minutes.'
  }),
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
  SHUTDOWN_GRACE_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    description: 'Longest a graceful shutdown may take before the process exits 1.'
  }),
  REQUEST_TIMEOUT_MS: Type.Integer({
    default: 30_000,
    minimum: 100,
    description: 'Longest a client may take to send a whole request, headers and body (408).'
  }),
  HEADERS_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    description:
      'Longest a client may take to send the request headers (408); at most `REQUEST_TIMEOUT_MS`. A connection that sends nothing is closed after it too.'
  }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({
    default: 72_000,
    minimum: 100,
    description:
      "How long an idle keep-alive connection stays open. Keep it above the load balancer's upstream idle timeout (nginx: 60 s), so the balancer closes first."
  }),
  CONNECTION_TIMEOUT_MS: Type.Integer({
    default: 60_000,
    minimum: 0,
    description:
      'A connection that sends and receives nothing for this long is closed (`KEEP_ALIVE_TIMEOUT_MS` governs idle time between requests); `0` turns this off.'
  }),
  MAX_CONNECTIONS: Type.Integer({
    default: 0,
    minimum: 0,
    description:
      'Connections one instance holds open on its public port; `0`: no cap. A new one past it closes the connection idle the longest (a keep-alive connection between requests, or one whose request waits only for its shed 429); when none is, it is closed at once. Against a flood that reconnects at once it costs keyed traffic more than it saves memory (docs/benchmark.md#memory).'
  }),
  PUBLIC_BASE_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^/]+(/.*)?/v1$',
      description:
        'Base URL clients use, ending in `/v1`: in `Link` headers and the OpenAPI `servers`. Unset, `http://HOST:PORT/v1` (`127.0.0.1` for a `HOST` of `0.0.0.0`).'
    })
  ),
  STAGING_BASE_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^/]+(/.*)?/v1$',
      description: 'Staging base URL, listed in the OpenAPI `servers`. Unset, `PUBLIC_BASE_URL`.'
    })
  ),
  TRUST_PROXY: Type.String({
    default: 'false',
    description:
      'The load balancers whose `X-Forwarded-For` and `X-Request-Id` are believed: a comma-separated list of addresses, CIDR ranges and the names `loopback`, `linklocal` and `uniquelocal`; `false` (or empty) for none. `true` and hop counts stop start-up, since with either a client that reaches the port directly names its own address.'
  }),
  UNAUTHENTICATED_PER_MINUTE: Type.Integer({
    default: 60,
    minimum: 1,
    description:
      "Requests a client address may make without a valid key in each UTC minute (on the database's clock, as every window), counted in each instance's memory."
  }),
  UNAUTHENTICATED_ADDRESSES: Type.Integer({
    default: 100_000,
    minimum: 1,
    description:
      'Client addresses whose budget of requests without a valid key an instance keeps in memory, least recently seen dropped first'
  }),
  UNAUTHENTICATED_PER_SECOND: Type.Integer({
    default: 1_000,
    minimum: 1,
    description:
      'Requests without a valid key one instance serves per second, from all addresses together; past it they get 429 with Retry-After'
  }),
  SHED_HOLD_MS: Type.Integer({
    default: 1000,
    minimum: 0,
    description:
      'How long a request shed by `UNAUTHENTICATED_PER_SECOND` waits for its 429, so that a client which waits for each answer floods one request per connection per hold; `0` answers at once.'
  }),
  SHED_HOLD_MAX: Type.Integer({
    default: 10_000,
    minimum: 0,
    description: 'Shed requests one instance holds at a time (`SHED_HOLD_MS`); past it they are answered at once.'
  }),
  COUNTING_QUEUE_MAX: Type.Integer({
    default: 10_000,
    minimum: 1,
    description:
      'Subjects (accounts) one instance lets wait for its next counting statement, and first requests of keys not cached there for theirs; past it a request that needs a count gets 503 with Retry-After at once.'
  }),
  BAN_AFTER: Type.Integer({
    default: 10,
    minimum: 0,
    description: 'Requests a key may send while refused, after its first 429 in a window, before it is banned.'
  }),
  BAN_SECONDS: Type.Integer({ default: 900, minimum: 1, description: 'How long a ban lasts, in seconds.' }),
  IDEMPOTENCY_WAIT_MS: Type.Integer({
    default: 1000,
    minimum: 1,
    description:
      'How long a repeat waits for the request with the same `Idempotency-Key` still in flight before answering 409.'
  }),
  IDEMPOTENCY_CLEANUP_INTERVAL_MS: Type.Integer({
    default: 600_000,
    minimum: 100,
    description: 'How often each instance deletes idempotency keys older than 24 hours.'
  }),
  // Overload shedding is @fastify/under-pressure's: /v1 answers 503 while a measure is over its limit.
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({
    default: 1000,
    minimum: 0,
    description: 'Event-loop delay above which `/v1` sheds load with 503 and `Retry-After`; `0` turns it off.'
  }),
  OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: Type.Number({
    default: 0,
    minimum: 0,
    maximum: 1,
    description: 'Event-loop utilization (0 to 1) above which `/v1` answers 503; `0` turns it off.'
  }),
  OVERLOAD_MAX_HEAP_USED_BYTES: Type.Integer({
    default: 0,
    minimum: 0,
    description: 'Heap size in bytes above which `/v1` answers 503; `0` turns it off.'
  }),
  MAX_HEADER_BYTES: Type.Integer({
    default: 16_384,
    minimum: 1024,
    maximum: 1_048_576,
    description: 'Largest request head (request line and headers) the HTTP server reads; larger ones get 431.'
  }),
  WEBHOOKS_ALLOW_HTTP: Type.Boolean({
    default: false,
    description:
      'Also allows webhook endpoints over http and on loopback addresses, for a local receiver. Off, endpoints are https to public addresses.'
  }),
  WEBHOOKS_ALLOWED_CIDRS: Type.String({
    default: '',
    description:
      'Comma-separated CIDR ranges (`10.20.0.0/16`) that webhook endpoints may resolve to although private, link-local or otherwise not public; checked at each delivery after DNS resolution.'
  }),
  WEBHOOKS_WORKER: Type.Boolean({
    default: true,
    description: 'Whether this instance runs the webhook delivery worker; any number of instances may run it at once.'
  }),
  WEBHOOKS_CONCURRENCY: Type.Integer({
    default: 4,
    minimum: 1,
    maximum: 64,
    description:
      'Endpoints one instance delivers to at once, each holding one database connection of its own while it sends.'
  }),
  WEBHOOKS_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    maximum: 60_000,
    description: 'Longest a webhook endpoint may take to answer a delivery before the attempt counts as failed.'
  }),
  KEY_EXPIRING_DAYS: Type.Integer({
    default: 7,
    minimum: 1,
    maximum: 365,
    description:
      'Days before a key expires that its `key.expiring` webhook event goes out, once per key and expiry; looked for every ten minutes.'
  }),
  WEBHOOKS_RETENTION_DAYS: Type.Integer({
    default: 7,
    minimum: 1,
    description:
      'Days a finished webhook delivery (delivered or failed) is kept, with its last answer; then it is deleted, and its event once no delivery needs it.'
  }),
  DEPRECATION_DATE: Type.String({
    default: '2026-11-22T00:00:00Z',
    pattern: ISO_DATE_TIME,
    description: 'Sent as `Deprecation` on `GET /v1/pets/{petId}`.'
  }),
  SUNSET_DATE: Type.String({
    default: '2030-12-05T00:00:00Z',
    pattern: ISO_DATE_TIME,
    description: 'Sent as `Sunset` on `GET /v1/pets/{petId}`; from this instant that path answers 410.'
  })
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

const ADMIN_TOKENS_MAX = 2
const ADMIN_TOKEN_MIN_LENGTH = 32
const ADMIN_TOKEN_MIN_BITS = 128

/**
 * The tokens ADMIN_TOKEN accepts: one, or two during a rotation, comma-separated. Messages never
 * quote a token.
 */
export function adminTokens(value: string): string[] {
  const tokens = value.split(',').map((token) => token.trim())
  if (tokens.length > ADMIN_TOKENS_MAX) {
    throw new ConfigError(
      `Invalid configuration: ADMIN_TOKEN holds ${tokens.length} tokens; at most ${ADMIN_TOKENS_MAX}, comma-separated`
    )
  }
  if (tokens.some((token) => token.length < ADMIN_TOKEN_MIN_LENGTH)) {
    throw new ConfigError(
      `Invalid configuration: each token in ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters`
    )
  }
  // A token no `Authorization: Bearer` header can carry would start the admin API and never open it.
  if (tokens.some((token) => bearerToken(`Bearer ${token}`) !== token)) {
    throw new ConfigError(
      'Invalid configuration: each token in ADMIN_TOKEN must be of the characters a bearer token may hold ' +
        "(RFC 6750): A-Z, a-z, 0-9, '-', '.', '_', '~', '+' and '/', then '=' only at its end; make one with " +
        'openssl rand -hex 32'
    )
  }
  if (tokens.some((token) => estimatedEntropyBits(token) < ADMIN_TOKEN_MIN_BITS)) {
    throw new ConfigError(
      `Invalid configuration: each token in ADMIN_TOKEN must carry at least ${ADMIN_TOKEN_MIN_BITS} bits of entropy ` +
        '(repeated or few distinct characters do not); make one with openssl rand -hex 32'
    )
  }
  return tokens
}

/**
 * A token's entropy as its own characters show it: its length times the Shannon entropy of their
 * frequencies, and a token that repeats a shorter one counts as that one. One character repeated
 * carries 0 bits, two alternating 1 bit, a word repeated what the word does; 64 random hex digits
 * about 250, 32 random base64 characters about 145. An upper bound of the real entropy for text a
 * person chose, so it refuses the worst tokens and proves nothing of the rest.
 */
function estimatedEntropyBits(token: string): number {
  const repeated = /^(.+?)\1+$/su.exec(token)
  if (repeated) return estimatedEntropyBits(repeated[1]!)
  const counts = new Map<string, number>()
  for (const character of token) counts.set(character, (counts.get(character) ?? 0) + 1)
  const length = [...token].length
  let perCharacter = 0
  for (const count of counts.values()) perCharacter -= (count / length) * Math.log2(count / length)
  return perCharacter * length
}

// Validates an environment (process.env unless given) into a typed Config; throws a ConfigError whose
// message names the variable.
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  let raw: Static<typeof ConfigSchema>
  try {
    // `env: false`: the environment given alone, never merged with process.env.
    raw = envSchema<Static<typeof ConfigSchema>>({ schema: ConfigSchema, data: { ...env }, dotenv: false, env: false })
  } catch (error) {
    const message = (error as Error).message.replace(/^env\/?/, '').replace(/^must /, 'configuration must ')
    throw new ConfigError(`Invalid configuration: ${message}`)
  }
  trustedProxies(raw.TRUST_PROXY)
  if (raw.ADMIN_TOKEN !== undefined) adminTokens(raw.ADMIN_TOKEN)
  try {
    parseAllowedCidrs(raw.WEBHOOKS_ALLOWED_CIDRS)
  } catch (error) {
    throw new ConfigError(`Invalid configuration: WEBHOOKS_ALLOWED_CIDRS has ${(error as Error).message}`)
  }
  if (raw.HEADERS_TIMEOUT_MS > raw.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS')
  }
  const localBase = `http://${raw.HOST === '0.0.0.0' ? '127.0.0.1' : raw.HOST}:${raw.PORT}/v1`
  const publicBase = raw.PUBLIC_BASE_URL ?? localBase
  return { ...raw, PUBLIC_BASE_URL: publicBase, STAGING_BASE_URL: raw.STAGING_BASE_URL ?? publicBase }
}

/** Where webhooks may be sent, from WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOWED_CIDRS. */
export function webhookAddressPolicy(config: Config): AddressPolicy {
  return { allowHttp: config.WEBHOOKS_ALLOW_HTTP, allowedCidrs: parseAllowedCidrs(config.WEBHOOKS_ALLOWED_CIDRS) }
}
