import { createRequire } from 'node:module'

interface Count {
  current: number
  ttl: number
}
type CountCallback = (error: Error | null, result?: Count) => void
interface Store {
  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void
  read(key: string, callback: CountCallback, timeWindow: number, max: number): void
}

const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache: number
) => Store

const copied =
  (callback: CountCallback): CountCallback =>
  (error, result) =>
    callback(error, result && { current: result.current, ttl: result.ttl })

/**
 * @fastify/rate-limit's own in-memory store, holding the `cache` addresses seen last, that answers
 * with a copy of an address's count: it hands out the entry it keeps, which requests that overlap
 * would otherwise all read after the last of them counted.
 */
export function localAddressStore(cache: number) {
  return class LocalAddressStore {
    readonly #store = new LocalStore(false, false, cache)

    incr(key: string, callback: CountCallback, timeWindow: number, max: number) {
      this.#store.incr(key, copied(callback), timeWindow, max)
    }

    read(key: string, callback: CountCallback, timeWindow: number, max: number) {
      this.#store.read(key, copied(callback), timeWindow, max)
    }

    child() {
      return this
    }
  }
}
