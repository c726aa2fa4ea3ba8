export interface RetryOptions {
  /** Attempts in all, the first one included. Default 4. */
  maxAttempts?: number
  /** The first backoff step; each further step doubles it. Default 500 ms. */
  baseDelayMs?: number
  /**
   * The longest single wait. Backoff steps are capped at it; a Retry-After longer than it is not
   * waited out (never cut short either): the answer goes to the caller. Default 60 s, one minute window.
   */
  maxDelayMs?: number
  /** Waits between attempts; replace it to observe or shorten the waits. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  /** The jitter source, in [0, 1). Default Math.random. */
  random?: () => number
}

type Fetch = (request: Request) => Promise<Response>

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])
const GATEWAY_FAILURES = new Set([502, 504])

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** Retry-After in milliseconds, as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Full jitter: a random wait between 0 and the capped exponential step for this retry (1, 2, …). */
function backoffMs(
  retry: number,
  options: Required<Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'>>
): number {
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retry - 1))
  return Math.floor(options.random() * step)
}

// A banned key is not retried at all: the ban lasts minutes, and sending during it is what earned it.
async function isBan(response: Response): Promise<boolean> {
  try {
    const body = (await response.clone().json()) as { code?: unknown }
    return body.code === 'key_banned'
  } catch {
    return false
  }
}

/**
 * Wraps fetch with retries. Only requests that are safe to repeat are retried: GET and the other
 * idempotent methods, and any request carrying an Idempotency-Key. Retried: 429 (not a ban) and
 * 503 after Retry-After, never sooner; 502, 504 and network failures after a backoff step.
 */
export function retryingFetch(fetch: Fetch, options: RetryOptions = {}): Fetch {
  const maxAttempts = options.maxAttempts ?? 4
  const policy = {
    baseDelayMs: options.baseDelayMs ?? 500,
    maxDelayMs: options.maxDelayMs ?? 60_000,
    random: options.random ?? Math.random
  }
  const sleep = options.sleep ?? defaultSleep

  return async (request) => {
    const repeatable = SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key')
    for (let attempt = 1; ; attempt++) {
      const last = !repeatable || attempt >= maxAttempts
      let response: Response
      try {
        response = await fetch(last ? request : request.clone())
      } catch (error) {
        // A TypeError is fetch's network failure; anything else (an abort, say) is not retried.
        if (last || !(error instanceof TypeError)) throw error
        await sleep(backoffMs(attempt, policy), request.signal)
        continue
      }
      if (last) return response

      let delay: number
      if (response.status === 429 || response.status === 503) {
        if (response.status === 429 && (await isBan(response))) return response
        const wait = retryAfterMs(response)
        delay = Math.max(wait ?? 0, backoffMs(attempt, policy))
        if (wait !== undefined && wait > policy.maxDelayMs) return response
      } else if (GATEWAY_FAILURES.has(response.status)) {
        delay = backoffMs(attempt, policy)
      } else {
        return response
      }
      await response.body?.cancel()
      await sleep(delay, request.signal)
    }
  }
}
