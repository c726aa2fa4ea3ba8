import { createRequire } from 'node:module'
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import {
  destination,
  pino,
  stdSerializers,
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type Logger,
  type LoggerOptions
} from 'pino'
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

// An API key's (ask_) or an operator token's (aso_) secret part, after its readable prefix (a key's
// checksum with it).
const KEY_SECRET = /\b(as[ko]_[0-9A-Za-z]{8})_[0-9A-Za-z]+(?:_[0-9A-Za-z]+)?/g

/**
 * A request's path for a log line: never its query string, where a client may have put a key
 * (`?access_token=ask_…`), and the secret part of anything shaped like a key or an operator token in the
 * path masked.
 */
function loggedPath(url: string): string {
  const query = url.indexOf('?')
  const path = query === -1 ? url : url.slice(0, query)
  return path.includes('ask_') || path.includes('aso_') ? path.replace(KEY_SECRET, '$1_[redacted]') : path
}

// Fastify's request fields, with the client address the rate limiter uses rather than request.ip.
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: loggedPath(request.url),
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

let stdout: DestinationStream | undefined

/**
 * stdout, written asynchronously: lines gather in a buffer and go out together once it holds 4 KB,
 * or 100 ms after the last write when traffic is slow; whatever is left is written synchronously
 * when the process exits. Measured by `npm run bench:log` (docs/benchmark.md): about 5 µs of CPU a
 * line against about 8 with a write per line. One per process, so that the public and admin apps
 * never interleave their lines.
 */
function stdoutDestination(): DestinationStream {
  return (stdout ??= destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }))
}

/** The process's logger: `loggerOptions` writing to `stream`, or to stdout asynchronously. */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL' | 'NODE_ENV'>,
  stream?: DestinationStream,
  terminal: { isTTY?: boolean } = process.stdout
): Logger {
  const options = loggerOptions(config, terminal)
  if (options.transport && !stream) return pino(options)
  const { transport: _pretty, ...plain } = options
  return pino(plain, stream ?? stdoutDestination())
}

/** A request's access line, as written: the fields an operator searches by, nothing a client sent unchecked. */
interface AccessLine {
  reqId: string
  method: string
  /** The route's pattern (`/v1/pets/:petId`), or the path of a request no route matched. */
  route: string
  status: number
  /** Milliseconds from the request's arrival to the response's last byte handed to the kernel. */
  responseTime: number
  /** The readable prefix of the request's API key, once the key is known to be valid. */
  keyPrefix?: string
  remoteAddress: string
}

/** The access line of a request Fastify has answered. */
function accessLine(request: FastifyRequest, reply: FastifyReply): AccessLine {
  const key = (request as { apiKey?: { prefix: string } | null }).apiKey
  return {
    reqId: request.id,
    method: request.method,
    route: request.routeOptions.url ?? loggedPath(request.url),
    status: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 100) / 100,
    keyPrefix: key?.prefix,
    remoteAddress: clientAddress(request)
  }
}

/**
 * Fastify's request logging: one line per request once it is answered, `request completed` at
 * `info`, written by the app's own logger (no child logger per request) and only where the route's
 * log level lets `info` through (the health probes' is `warn`). Fastify's `incoming request` line
 * and its line for an unmatched route are not written: the access line has both.
 */
export class AccessLog extends LogController {
  readonly #info: number
  readonly #levels: Record<string, number>
  /**
   * The app's logger without its redaction, which would cost more than the rest of the line
   * together: an access line's fields are all made here, and none holds a secret.
   */
  readonly #lines: Logger

  constructor(private readonly log: Logger) {
    super()
    this.#levels = log.levels.values
    this.#info = this.#levels.info!
    this.#lines = log.child({}, { redact: [] })
  }

  override incomingRequest() {}

  override routeNotFound() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (error) this.log.error({ ...accessLine(request, reply), err: error }, 'request errored')
    else if (this.#info >= (this.#levels[request.log.level] ?? Infinity)) {
      this.#lines.info(accessLine(request, reply), 'request completed')
    }
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
