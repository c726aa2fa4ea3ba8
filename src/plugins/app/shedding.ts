// The shed path, whole: the instance's ceiling on requests without a valid key
// (UNAUTHENTICATED_PER_SECOND), the hold of what it sheds (SHED_HOLD_MS, SHED_HOLD_MAX), the server
// that sheds before routing, and the 429 it answers. buildApp passes the server to Fastify; the guard's
// hook asks the ceiling about the rest; nothing else knows of it.
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http'
import type { FastifyServerFactory, FastifyServerOptions } from 'fastify'
import type { Config } from '../../config.js'
import { ApiError } from '../../errors.js'
import type { ErrorBody } from '../../schemas/error.js'
import { API_SECURITY_HEADERS } from '../external/helmet.js'
import { REQUEST_ID_HEADER, requestIdGenerator } from './request-id.js'

/**
 * A ceiling on the requests one instance serves a second, in memory: a bucket that refills at
 * `perSecond` and holds a tenth of a second's worth (at least one), so what it admits comes evenly
 * rather than all at the start of each second.
 */
export class PerSecondCeiling {
  readonly burst: number
  #tokens: number
  #at = Number.NEGATIVE_INFINITY

  constructor(readonly perSecond: number) {
    this.burst = Math.max(1, Math.floor(perSecond / 10))
    this.#tokens = this.burst
  }

  /** Counts one request at `now` (Unix ms); false when the ceiling has nothing left to admit. */
  admit(now: number): boolean {
    // A clock that steps back refills nothing.
    const elapsed = Math.max(0, now - this.#at)
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.perSecond) / 1000)
    this.#at = Math.max(this.#at, now)
    if (this.#tokens < 1) return false
    this.#tokens -= 1
    return true
  }
}

/**
 * Shed answers kept back for up to `holdMs` before they are sent, at most `max` at a time; past that,
 * or once released for good, an answer goes at once. A client that waits for each answer before its
 * next request, as most floods do, then sends about one request per connection per hold, and pays for
 * its flood in connections held open rather than the instance in answers written.
 */
export class ShedHold {
  readonly #held = new Map<NodeJS.Timeout, () => void>()
  #released = false

  constructor(
    readonly holdMs: number,
    readonly max: number,
    readonly random: () => number = Math.random
  ) {}

  /** Answers held now. */
  get held(): number {
    return this.#held.size
  }

  /** Calls `send` after the hold, or at once when the hold is full, off, or released. */
  hold(send: () => void): void {
    if (this.holdMs === 0 || this.#released || this.held >= this.max) return send()
    // Between half the hold and all of it: connections shed together are neither answered nor back together.
    const timer = setTimeout(
      () => {
        this.#held.delete(timer)
        send()
      },
      this.holdMs * (0.5 + this.random() / 2)
    )
    timer.unref()
    this.#held.set(timer, send)
  }

  /** Sends every answer held and holds no more: for shutdown. */
  release(): void {
    this.#released = true
    for (const [timer, send] of this.#held) {
      clearTimeout(timer)
      send()
    }
    this.#held.clear()
  }
}

const COUNTED = Symbol('counted against the unkeyed ceiling')

/** Whether the ceiling has shed the request: its answer is a held 429 (the connection cap may close it first). */
export const isShed = (request: IncomingMessage) =>
  (request as IncomingMessage & { [COUNTED]?: boolean })[COUNTED] === false

/** What a shed request is answered, before routing and in the guard alike. */
const shedRefusal = () =>
  new ApiError('rate_limited', 'Too many requests without a valid API key; retry in 1 s', { 'retry-after': '1' })

/**
 * The instance's ceiling on requests without a valid key, counted once per request: as Node hands
 * over one under /v1 without an Authorization header (`shedAtSocket`), and in the guard for one whose
 * token turned out to be no key. What it sheds is answered after `hold`.
 */
export class UnkeyedCeiling {
  readonly #ceiling: PerSecondCeiling
  /** Requests shed since the instance started, read by the metrics. */
  shed = 0

  constructor(
    perSecond: number,
    readonly clock: () => number,
    readonly hold: ShedHold
  ) {
    this.#ceiling = new PerSecondCeiling(perSecond)
  }

  /** Shed requests whose answer is held now. */
  get held(): number {
    return this.hold.held
  }

  /** Counts the request once: false when it is to be shed, and the same answer when asked again. */
  admit(request: IncomingMessage): boolean {
    const marked = request as IncomingMessage & { [COUNTED]?: boolean }
    if (marked[COUNTED] === undefined) {
      marked[COUNTED] = this.#ceiling.admit(this.clock())
      if (!marked[COUNTED]) this.shed++
    }
    return marked[COUNTED]
  }

  /** Counts the request once; past the ceiling, throws the shed 429 once its hold is over. */
  async pass(request: IncomingMessage): Promise<void> {
    if (this.admit(request)) return
    await new Promise<void>((resolve) => this.hold.hold(resolve))
    throw shedRefusal()
  }
}

/** Whether `url` is `prefix` itself or lies under it, as Fastify's route prefixes match. */
function under(prefix: string, url: string | undefined) {
  if (url === undefined || !url.startsWith(prefix)) return false
  const next = url[prefix.length]
  return next === undefined || next === '/' || next === '?'
}

/**
 * Fastify's `serverFactory`: the server Fastify would make, which hands a request under `prefix`
 * without an Authorization header to the unkeyed ceiling first. Past the ceiling `shed` answers it, after the
 * ceiling's hold, without Fastify routing it, running a hook or making an error: at about half the
 * CPU (docs/benchmark.md), and under a flood answering those is most of what the instance does.
 */
export function shedAtSocket(
  ceiling: UnkeyedCeiling,
  prefix: string,
  shed: (request: IncomingMessage, response: ServerResponse) => void
): FastifyServerFactory {
  return (handler, options) => {
    const fastify = options as Pick<
      FastifyServerOptions,
      'keepAliveTimeout' | 'requestTimeout' | 'connectionTimeout'
    > & {
      http?: ServerOptions
    }
    const server = createServer(fastify.http ?? {}, (request, response) => {
      if (request.headers.authorization === undefined && under(prefix, request.url) && !ceiling.admit(request)) {
        ceiling.hold.hold(() => shed(request, response))
      } else {
        handler(request, response)
      }
    })
    // As Fastify sets them on a server it makes itself.
    if (fastify.keepAliveTimeout !== undefined) server.keepAliveTimeout = fastify.keepAliveTimeout
    if (fastify.requestTimeout !== undefined) server.requestTimeout = fastify.requestTimeout
    if (fastify.connectionTimeout !== undefined) server.setTimeout(fastify.connectionTimeout)
    return server
  }
}

/**
 * The shed answer for a request shed before routing (`shedAtSocket`): the guard's status, Error body
 * and headers, made once.
 */
function shedBeforeRouting(requestId: (request: IncomingMessage) => string) {
  const { statusCode: status, code, message, headers: own } = shedRefusal()
  const body = JSON.stringify({ code, message, status } satisfies ErrorBody)
  const headers = Object.entries({
    ...API_SECURITY_HEADERS,
    'cache-control': 'no-store',
    ...own,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body))
  }).flat()
  return (request: IncomingMessage, response: ServerResponse) => {
    // Gone while its answer was held.
    if (response.destroyed) return
    response.writeHead(status, [...headers, REQUEST_ID_HEADER, requestId(request)])
    response.end(body)
  }
}

/**
 * The app's unkeyed ceiling as `config` sets it, and the server for Fastify's `serverFactory` that
 * sheds past it the requests under `prefix` that carry no token at all, as they arrive.
 */
export function unkeyedCeiling(config: Config, clock: () => number, prefix: string) {
  const hold = new ShedHold(config.SHED_HOLD_MS, config.SHED_HOLD_MAX)
  const ceiling = new UnkeyedCeiling(config.UNAUTHENTICATED_PER_SECOND, clock, hold)
  const serverFactory = shedAtSocket(ceiling, prefix, shedBeforeRouting(requestIdGenerator(config.TRUST_PROXY)))
  return { ceiling, serverFactory }
}
