import { createRequire } from 'node:module'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { stdSerializers, type Bindings, type ChildLoggerOptions, type Logger, type LoggerOptions } from 'pino'
import { clientAddress } from './client-address.js'
import type { Config } from './config.js'

const SECRET_FIELDS = [
  'key',
  'apiKey',
  'secret',
  'password',
  'token',
  'authorization',
  'cookie',
  'connectionString',
  'DATABASE_URL'
]

// Secret-named fields up to three levels deep, and the headers that carry credentials.
const REDACTED_PATHS = [
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]),
  '*.headers["x-api-key"]',
  '*.headers["set-cookie"]'
]

const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*):[^@/?#\s]*@/gi

/** Masks the password of any `scheme://user:password@host` in a text, such as a driver's error message. */
export function scrubSecrets(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1:[redacted]@')
}

function serializeError(error: Error) {
  const serialized = stdSerializers.err(error)
  if (typeof serialized.message === 'string') serialized.message = scrubSecrets(serialized.message)
  if (typeof serialized.stack === 'string') serialized.stack = scrubSecrets(serialized.stack)
  return serialized
}

// Fastify's request fields, with the client address the rate limiter uses rather than request.ip.
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: request.url,
    host: request.host,
    remoteAddress: clientAddress(request),
    remotePort: request.socket.remotePort
  }
}

function canLoad(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name)
    return true
  } catch {
    return false
  }
}

/**
 * The logger as Fastify takes it: pino JSON lines, or pino-pretty for a developer at a terminal.
 * pino-pretty is a development dependency, so an image without it keeps to JSON.
 */
export function loggerOptions(
  config: Pick<Config, 'LOG_LEVEL' | 'NODE_ENV'>,
  stdout: { isTTY?: boolean } = process.stdout
): LoggerOptions {
  const pretty = config.NODE_ENV === 'development' && stdout.isTTY === true && canLoad('pino-pretty')
  return {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: serializeError, req: serializeRequest },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {})
  }
}

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type LogArguments = Parameters<FastifyBaseLogger['info']>

/**
 * Fastify's per-request logger, made on the first line a request actually writes. Most requests
 * write nothing at `warn` and above, and making a pino child is the costly part of a request's
 * logger: it runs the redaction over the request id binding.
 */
class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions
  ) {}

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  isLevelEnabled(level: LevelName): boolean {
    const values = this.parent.levels.values
    return values[level]! >= (values[this.level] ?? Infinity)
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }

  fatal(...args: LogArguments) {
    this.#write('fatal', args)
  }
  error(...args: LogArguments) {
    this.#write('error', args)
  }
  warn(...args: LogArguments) {
    this.#write('warn', args)
  }
  info(...args: LogArguments) {
    this.#write('info', args)
  }
  debug(...args: LogArguments) {
    this.#write('debug', args)
  }
  trace(...args: LogArguments) {
    this.#write('trace', args)
  }
  silent() {}

  #write(level: LevelName, args: LogArguments) {
    if (this.isLevelEnabled(level)) this.#logger()[level](...args)
  }

  #logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options))
  }
}

/** Fastify's `childLoggerFactory`: request loggers that cost nothing until they write. */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions
): FastifyBaseLogger {
  return new RequestLogger(logger as Logger, bindings, options)
}
