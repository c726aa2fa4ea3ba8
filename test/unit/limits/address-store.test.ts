import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { localAddressStore } from '../../../src/limits/address-store.js'

const NOW = Date.UTC(2027, 0, 1, 12)
const WINDOW = 60_000
const MAX = 2

interface Count {
  current: number
  ttl: number
}

/** The store as @fastify/rate-limit makes and calls it, its callbacks turned into results. */
function makeStore(cache: number) {
  const Store = localAddressStore(cache)
  const store = new Store()
  const call = (method: 'incr' | 'read', address: string) => {
    let result: Count | undefined
    store[method](
      address,
      (error, count) => {
        if (error) throw error
        result = count
      },
      WINDOW,
      MAX
    )
    return result!
  }
  return {
    store,
    incr: (address: string) => call('incr', address),
    read: (address: string) => call('read', address)
  }
}

beforeEach(() => {
  vi.useFakeTimers({ now: NOW })
})

afterEach(() => {
  vi.useRealTimers()
})

describe('localAddressStore', () => {
  it('counts each address apart, in a window from its first request', () => {
    const { incr } = makeStore(10)
    expect(incr('192.0.2.1')).toEqual({ current: 1, ttl: WINDOW })
    vi.setSystemTime(NOW + 10_000)
    expect(incr('192.0.2.1')).toEqual({ current: 2, ttl: WINDOW - 10_000 })
    expect(incr('192.0.2.2')).toEqual({ current: 1, ttl: WINDOW })
    vi.setSystemTime(NOW + WINDOW)
    expect(incr('192.0.2.1')).toEqual({ current: 1, ttl: WINDOW })
  })

  it('keeps the window of an address past its budget: a refused request does not push its reset back', () => {
    const { incr } = makeStore(10)
    incr('192.0.2.1')
    vi.setSystemTime(NOW + 10_000)
    incr('192.0.2.1')
    vi.setSystemTime(NOW + 20_000)
    expect(incr('192.0.2.1')).toEqual({ current: 3, ttl: WINDOW - 20_000 })
    vi.setSystemTime(NOW + 30_000)
    expect(incr('192.0.2.1')).toEqual({ current: 4, ttl: WINDOW - 30_000 })
  })

  it('hands each request a count of its own, which later requests leave as it was', () => {
    const { incr, read } = makeStore(10)
    const first = incr('192.0.2.1')
    const second = incr('192.0.2.1')
    const seen = read('192.0.2.1')
    incr('192.0.2.1')
    expect([first.current, second.current, seen.current]).toEqual([1, 2, 2])
    expect(first).not.toHaveProperty('iterationStartMs')
  })

  it('reads an address without counting it', () => {
    const { incr, read } = makeStore(10)
    expect(read('192.0.2.1')).toEqual({ current: 0, ttl: 0 })
    incr('192.0.2.1')
    vi.setSystemTime(NOW + 5_000)
    expect(read('192.0.2.1')).toEqual({ current: 1, ttl: WINDOW - 5_000 })
    expect(read('192.0.2.1')).toEqual({ current: 1, ttl: WINDOW - 5_000 })
  })

  it('keeps the addresses seen last up to its cap, and forgets the least recently seen', () => {
    const { incr } = makeStore(2)
    incr('192.0.2.1')
    incr('192.0.2.2')
    incr('192.0.2.1')
    incr('192.0.2.3')
    expect(incr('192.0.2.1').current).toBe(3)
    expect(incr('192.0.2.2').current).toBe(1)
  })

  it('is its own child: a route with a limit of its own shares the addresses’ counts', () => {
    const { store } = makeStore(10)
    expect(store.child()).toBe(store)
  })
})
