import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiKeyCache } from '../../../src/auth/key-cache.js'
import type { Queryable } from '../../../src/db/statements.js'
import { FakeKeyDatabase, keyRecord } from './fake-key-database.js'
import { FakeListener } from './fake-listener.js'

const NOW = Date.UTC(2027, 0, 1, 12)
const LOST = 'lost the api key change channel; caching is off until it is back'

/** A secret's digest as the guard hands it to the cache. */
const digestOf = (secret: string) => createHash('sha256').update(secret).digest('base64')
const A = digestOf('a')
const B = digestOf('b')
const C = digestOf('c')
/** A key that expired: in the membership filter, never usable. */
const EXPIRED = [digestOf('expired 1'), digestOf('expired 2'), digestOf('expired 3')]
/** No key's: not in the membership filter. */
const MADE_UP = digestOf('made up')

let database: FakeKeyDatabase
let listeners: FakeListener[]
/** Readies each listener the cache opens, in order; a fresh one works. */
let readyListener: (listener: FakeListener, index: number) => void
let warn: ReturnType<typeof vi.fn>
let cache: ApiKeyCache

const make = (
  caps: { maxKeys?: number; maxMisses?: number; onBan?: (apiKeyId: bigint, bannedUntil: number) => void } = {}
) =>
  new ApiKeyCache({
    pool: database.db,
    log: { warn } as unknown as FastifyBaseLogger,
    openListener: () => {
      const listener = new FakeListener()
      readyListener(listener, listeners.length)
      listeners.push(listener)
      return listener
    },
    ...caps
  })

/** A key as the cache hands it to the guard: what a request needs of its record, with no allow-list. */
const held = (id: bigint) => {
  const { prefix, accountId, accountExternalId, scopes, plan, costs } = keyRecord(id)
  return { id, prefix, accountId, accountExternalId, scopes, plan, costs, allowedFrom: null }
}

/** Lets every answer already given reach the cache. */
const flush = () => vi.advanceTimersByTimeAsync(0)

beforeEach(() => {
  vi.useFakeTimers({ now: NOW })
  database = new FakeKeyDatabase()
  for (const [index, digest] of [A, B, C].entries()) database.add(digest, keyRecord(BigInt(index + 1)))
  for (const [index, digest] of EXPIRED.entries()) database.add(digest, keyRecord(BigInt(index + 10), new Date(0)))
  listeners = []
  readyListener = () => {}
  warn = vi.fn()
  cache = make()
})

afterEach(async () => {
  await cache.stop()
  vi.useRealTimers()
})

describe('ApiKeyCache', () => {
  it('knows nothing yet of a digest in the membership filter, and rules out one missing from it', async () => {
    await cache.start()
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'unknown' })
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unlisted' })
    expect(database.count('find')).toBe(0)
  })

  it('listens on the change, addition, ban and heartbeat channels before it loads the filter', async () => {
    database.held.add('count')
    const starting = cache.start()
    await flush()
    expect([...listeners[0]!.channels]).toEqual([
      'api_keys_changed',
      'api_keys_added',
      'api_key_banned',
      expect.stringMatching(/^api_keys_heartbeat_[0-9a-f]{16}$/)
    ])
    database.release()
    await starting
  })

  it('holds a key it looked up as usable, so the next request needs no lookup', async () => {
    await cache.start()
    expect(await cache.lookUp(A, NOW)).toEqual(held(1n))
    expect(cache.cachedState(A, NOW + 1_000)).toEqual({ state: 'usable', key: held(1n) })
    expect(database.count('find')).toBe(1)
  })

  it('holds a digest that matched no usable key as missed for 60 s', async () => {
    await cache.start()
    expect(await cache.lookUp(EXPIRED[0]!, NOW)).toBeUndefined()
    expect(cache.cachedState(EXPIRED[0]!, NOW + 59_999)).toEqual({ state: 'missed' })
    expect(cache.cachedState(EXPIRED[0]!, NOW + 60_000)).toEqual({ state: 'unknown' })
  })

  it('serves a key past 60 s while it looks it up again in the background, many keys a round trip', async () => {
    await cache.start()
    for (const digest of [A, B, C]) await cache.lookUp(digest, NOW)
    expect(cache.cachedState(A, NOW + 59_999)).toMatchObject({ state: 'usable' })
    expect(database.count('findMany')).toBe(0)
    database.revoke(C)
    for (const digest of [A, B, C]) expect(cache.cachedState(digest, NOW + 60_000)).toMatchObject({ state: 'usable' })
    await vi.advanceTimersByTimeAsync(100)
    expect(database.count('findMany')).toBe(1)
    expect(database.statements.find((statement) => statement.kind === 'findMany')!.values[0]).toHaveLength(3)
    // Found again: fresh for another 60 s. Revoked meanwhile (unannounced): dropped.
    expect(cache.cachedState(A, NOW + 119_999)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(C, NOW + 60_000)).toEqual({ state: 'unknown' })
    expect(database.count('find')).toBe(3)
  })

  it('looks up at most 1,000 keys a round trip, and holds each fresh from the latest instant it was served at', async () => {
    const many = Array.from({ length: 1_001 }, (_, i) => digestOf(`many ${i}`))
    for (const [i, digest] of many.entries()) database.add(digest, keyRecord(BigInt(100 + i)))
    await cache.start()
    for (const digest of many) await cache.lookUp(digest, NOW)
    for (const digest of many) cache.cachedState(digest, NOW + 60_000)
    cache.cachedState(many[0]!, NOW + 61_000)
    await vi.advanceTimersByTimeAsync(100)
    const batches = database.statements.filter((statement) => statement.kind === 'findMany')
    expect(batches.map((statement) => (statement.values[0] as Buffer[]).length)).toEqual([1_000, 1])
    expect((batches[0]!.values[1] as Date).getTime()).toBe(NOW + 61_000)
    // Fresh from 61 s: no lookup due again before 121 s.
    cache.cachedState(many[1]!, NOW + 120_999)
    await vi.advanceTimersByTimeAsync(100)
    expect(database.count('findMany')).toBe(2)
  })

  it('leaves the keys of a background lookup that raced with a change as the change left them', async () => {
    await cache.start()
    for (const digest of [A, B]) await cache.lookUp(digest, NOW)
    database.held.add('findMany')
    for (const digest of [A, B]) cache.cachedState(digest, NOW + 60_000)
    await vi.advanceTimersByTimeAsync(100)
    listeners[0]!.notify('api_keys_changed', 'api_keys:1')
    database.release()
    await flush()
    expect(cache.cachedState(A, NOW + 60_000)).toEqual({ state: 'stale', accountId: 1n })
    // Not named, and not made fresh by the raced lookup: due again when next served.
    expect(cache.cachedState(B, NOW + 60_001)).toMatchObject({ state: 'usable' })
    await vi.advanceTimersByTimeAsync(100)
    expect(database.count('findMany')).toBe(2)
  })

  it('gathers the keys served while a background lookup runs into the next one', async () => {
    await cache.start()
    for (const digest of [A, B]) await cache.lookUp(digest, NOW)
    database.held.add('findMany')
    cache.cachedState(A, NOW + 60_000)
    await vi.advanceTimersByTimeAsync(100)
    cache.cachedState(B, NOW + 60_000)
    await vi.advanceTimersByTimeAsync(500)
    expect(database.count('findMany')).toBe(1)
    database.release()
    await flush()
    expect(database.count('findMany')).toBe(2)
    expect(database.statements.filter((statement) => statement.kind === 'findMany')[1]!.values[0]).toHaveLength(1)
  })

  it('has a key looked up on the request again once it was served 5 minutes without a lookup', async () => {
    database.held.add('findMany')
    await cache.start()
    await cache.lookUp(A, NOW)
    expect(cache.cachedState(A, NOW + 299_999)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(A, NOW + 300_000)).toEqual({ state: 'stale', accountId: 1n })
  })

  it('keeps serving a key whose lookup in the background failed, and tries again when it is next served', async () => {
    database.held.add('findMany')
    await cache.start()
    await cache.lookUp(A, NOW)
    cache.cachedState(A, NOW + 60_000)
    await vi.advanceTimersByTimeAsync(100)
    database.fail(new Error('connection reset'))
    await flush()
    expect(warn).toHaveBeenCalledTimes(1)
    expect(cache.cachedState(A, NOW + 61_000)).toMatchObject({ state: 'usable' })
    await vi.advanceTimersByTimeAsync(100)
    expect(database.count('findMany')).toBe(2)
    expect(cache.cachedState(A, NOW + 62_000)).toMatchObject({ state: 'usable' })
  })

  it('never holds a key usable from the instant it expires', async () => {
    database.add(MADE_UP, keyRecord(20n, new Date(NOW + 1_000)))
    await cache.start()
    await cache.lookUp(MADE_UP, NOW)
    expect(cache.cachedState(MADE_UP, NOW + 999)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(MADE_UP, NOW + 1_000)).toMatchObject({ state: 'stale' })
  })

  it('holds a secret a rotation replaced usable until its grace ends and not after, announced or not', async () => {
    const D = digestOf('d')
    database.rotate(A, D, new Date(NOW + 5_000))
    await cache.start()
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'unknown' })
    expect(cache.cachedState(D, NOW)).toEqual({ state: 'unknown' })
    expect(await cache.lookUp(A, NOW)).toEqual(held(1n))
    expect(await cache.lookUp(D, NOW)).toEqual(held(1n))
    expect(cache.cachedState(A, NOW + 4_999)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(A, NOW + 5_000)).toMatchObject({ state: 'stale' })
    expect(await cache.lookUp(A, NOW + 5_000)).toBeUndefined()
    expect(cache.cachedState(A, NOW + 5_000)).toEqual({ state: 'missed' })
    expect(cache.cachedState(D, NOW + 5_000)).toMatchObject({ state: 'usable' })
  })

  it('holds a replaced secret of a key that expires within the grace only until the key expires', async () => {
    const D = digestOf('d')
    database.add(MADE_UP, keyRecord(20n, new Date(NOW + 1_000)))
    database.rotate(MADE_UP, D, new Date(NOW + 5_000))
    await cache.start()
    await cache.lookUp(MADE_UP, NOW)
    expect(cache.cachedState(MADE_UP, NOW + 999)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(MADE_UP, NOW + 1_000)).toMatchObject({ state: 'stale' })
  })

  it("parses a key's allowed addresses once, when it looks the key up", async () => {
    database.add(MADE_UP, { ...keyRecord(20n), allowedAddresses: ['203.0.113.0/24', '2001:db8::/32'] })
    await cache.start()
    const key = (await cache.lookUp(MADE_UP, NOW))!
    expect(key.allowedFrom?.includes('203.0.113.9')).toBe(true)
    expect(key.allowedFrom?.includes('2001:db8::1')).toBe(true)
    expect(key.allowedFrom?.includes('198.51.100.1')).toBe(false)
    const cached = cache.cachedState(MADE_UP, NOW + 1)
    expect(cached.state === 'usable' && cached.key.allowedFrom).toBe(key.allowedFrom)
  })

  it('makes every cached key stale and forgets every miss when a change is announced', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    await cache.lookUp(EXPIRED[0]!, NOW)
    listeners[0]!.notify('api_keys_changed')
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(cache.cachedState(EXPIRED[0]!, NOW)).toEqual({ state: 'unknown' })
  })

  it('holds a key looked up again and found revoked as missed', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    database.revoke(A)
    listeners[0]!.notify('api_keys_changed')
    expect(await cache.lookUp(A, NOW)).toBeUndefined()
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'missed' })
  })

  it('makes stale only the keys a change names, by key or by account, and none for an issued key', async () => {
    await cache.start()
    for (const digest of [A, B, C]) await cache.lookUp(digest, NOW)
    await cache.lookUp(EXPIRED[0]!, NOW)
    listeners[0]!.notify('api_keys_changed', 'api_keys+')
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(EXPIRED[0]!, NOW)).toEqual({ state: 'unknown' })
    listeners[0]!.notify('api_keys_changed', 'api_keys:1,7')
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'stale', accountId: 1n })
    expect(cache.cachedState(B, NOW)).toMatchObject({ state: 'usable' })
    listeners[0]!.notify('api_keys_changed', 'accounts:3')
    expect(cache.cachedState(B, NOW)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(C, NOW)).toEqual({ state: 'stale', accountId: 3n })
    await cache.lookUp(A, NOW)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    // A table alone, or what cannot be read: every key.
    listeners[0]!.notify('api_keys_changed', 'plan_costs')
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(cache.cachedState(B, NOW)).toMatchObject({ state: 'stale' })
  })

  it('takes a change whose ids cannot be read for a change to every key, and forgets evicted keys by id', async () => {
    await cache.stop()
    cache = make({ maxKeys: 2 })
    await cache.start()
    for (const digest of [A, B, C]) await cache.lookUp(digest, NOW)
    // A was evicted: a change naming it reaches nothing, and B and C stay usable.
    listeners[0]!.notify('api_keys_changed', 'api_keys:1')
    expect(cache.cachedState(B, NOW)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(C, NOW)).toMatchObject({ state: 'usable' })
    listeners[0]!.notify('api_keys_changed', 'api_keys:2,x')
    expect(cache.cachedState(B, NOW)).toMatchObject({ state: 'stale' })
    expect(cache.cachedState(C, NOW)).toMatchObject({ state: 'stale' })
  })

  it('holds a key whose lookup raced with a change announced by id as changed', async () => {
    await cache.start()
    database.held.add('find')
    const lookup = cache.lookUp(A, NOW)
    await flush()
    listeners[0]!.notify('api_keys_changed', 'api_keys:2')
    database.release()
    expect(await lookup).toEqual(held(1n))
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
  })

  it('lets a key announced as added through the membership filter', async () => {
    await cache.start()
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unlisted' })
    listeners[0]!.notify('api_keys_added', MADE_UP)
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
  })

  it('may lack new keys before its filter is loaded and for 5 s after keys are announced as issued', async () => {
    expect(cache.mayLackNewKeys()).toBe(true)
    await cache.start()
    expect(cache.mayLackNewKeys()).toBe(false)
    listeners[0]!.notify('api_keys_added', MADE_UP)
    expect(cache.mayLackNewKeys()).toBe(true)
    await vi.advanceTimersByTimeAsync(4_999)
    expect(cache.mayLackNewKeys()).toBe(true)
    await vi.advanceTimersByTimeAsync(1)
    expect(cache.mayLackNewKeys()).toBe(false)
    // Issuing announced on the change channel opens the same window; other changes do not.
    listeners[0]!.notify('api_keys_changed', 'api_keys:1')
    expect(cache.mayLackNewKeys()).toBe(false)
    listeners[0]!.notify('api_keys_changed', 'api_keys+')
    expect(cache.mayLackNewKeys()).toBe(true)
  })

  it('tells onBan of each ban announced as `<key id>:<epoch ms>`, and of nothing else', async () => {
    const onBan = vi.fn()
    cache = make({ onBan })
    await cache.start()
    await cache.lookUp(A, NOW)
    listeners[0]!.notify('api_key_banned', '42:1800000000000')
    expect(onBan).toHaveBeenCalledExactlyOnceWith(42n, 1_800_000_000_000)
    // A ban changes no key: what is cached stays fresh.
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })

    onBan.mockClear()
    const malformed = ['42', '42:', ':1800000000000', 'x:1800000000000', '42:1.8e12', '-42:1800000000000', '']
    for (const payload of malformed) listeners[0]!.notify('api_key_banned', payload)
    listeners[0]!.notify('api_keys_changed', '42:1800000000000')
    expect(onBan).not.toHaveBeenCalled()
  })

  it('keeps the keys announced while the filter loads, and rules nothing out until it is loaded', async () => {
    database.held.add('hashes')
    const starting = cache.start()
    await flush()
    expect(database.pending).toBe(1)
    listeners[0]!.notify('api_keys_added', MADE_UP)
    expect(cache.cachedState(digestOf('another made up'), NOW)).toEqual({ state: 'unknown' })
    database.release()
    await starting
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
    expect(cache.cachedState(digestOf('another made up'), NOW)).toEqual({ state: 'unlisted' })
  })

  it('reads the filter a page of 2,000 hashes at a time', async () => {
    database = new FakeKeyDatabase()
    const hashes = Array.from({ length: 2_001 }, (_, i) => {
      const hash = Buffer.alloc(32)
      hash.writeUInt32BE(i + 1, 28)
      return hash.toString('base64')
    })
    for (const hash of hashes) database.add(hash)
    cache = make()
    await cache.start()
    const pages = database.statements.filter((statement) => statement.kind === 'hashes')
    // Each page starts after the last key id of the one before.
    expect(pages.map(({ values }) => values)).toEqual([
      [0n, 2_000],
      [2_000n, 2_000]
    ])
    expect(cache.cachedState(hashes[2_000]!, NOW)).toEqual({ state: 'unknown' })
    // Sized for a million keys, the filter lets hardly any digest of no key through.
    const madeUp = Array.from({ length: 1_000 }, (_, i) => digestOf(`made up ${i}`))
    expect(madeUp.filter((digest) => cache.cachedState(digest, NOW).state !== 'unlisted')).toEqual([])
  })

  it('lets through a key announced after it loaded an empty table', async () => {
    database = new FakeKeyDatabase()
    cache = make()
    await cache.start()
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unlisted' })
    listeners[0]!.notify('api_keys_added', MADE_UP)
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
  })

  it('rules nothing out and holds nothing fresh before the channel is open', async () => {
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
    expect(await cache.lookUp(A, NOW)).toEqual(held(1n))
    expect(await cache.lookUp(EXPIRED[0]!, NOW)).toBeUndefined()
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(cache.cachedState(EXPIRED[0]!, NOW)).toEqual({ state: 'unknown' })
    // What was looked up while nobody listened may have changed since: it is looked up again.
    await cache.start()
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
  })

  it('looks a digest up once for lookups that overlap, and again once that one is done', async () => {
    await cache.start()
    database.held.add('find')
    const first = cache.lookUp(A, NOW)
    const second = cache.lookUp(A, NOW)
    expect(database.count('find')).toBe(1)
    database.release()
    expect(await first).toEqual(held(1n))
    expect(await second).toEqual(held(1n))
    await cache.lookUp(A, NOW)
    expect(database.count('find')).toBe(2)
  })

  it('does not take a lookup that raced with a change for fresh', async () => {
    await cache.start()
    database.held.add('find')
    const key = cache.lookUp(A, NOW)
    const miss = cache.lookUp(EXPIRED[0]!, NOW)
    await flush()
    listeners[0]!.notify('api_keys_changed')
    database.release()
    expect(await key).toEqual(held(1n))
    expect(await miss).toBeUndefined()
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(cache.cachedState(EXPIRED[0]!, NOW)).toEqual({ state: 'unknown' })
  })

  it('fails every lookup that shared a failed query, and queries again for the next', async () => {
    const failing: Queryable = {
      query: ((_query: unknown, callback: (error: Error) => void) => {
        queueMicrotask(() => callback(new Error('connection reset')))
      }) as unknown as Queryable['query']
    }
    const query = vi.spyOn(failing, 'query')
    cache = new ApiKeyCache({ pool: failing, log: { warn } as never, openListener: () => new FakeListener() })
    const lookups = [cache.lookUp(A, NOW), cache.lookUp(A, NOW)]
    for (const lookup of lookups) await expect(lookup).rejects.toThrow('connection reset')
    expect(query).toHaveBeenCalledOnce()
    await expect(cache.lookUp(A, NOW)).rejects.toThrow('connection reset')
    expect(query).toHaveBeenCalledTimes(2)
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'unknown' })
  })
})

describe('ApiKeyCache eviction', () => {
  it('lets the least recently used key go past its cap', async () => {
    cache = make({ maxKeys: 2 })
    await cache.start()
    await cache.lookUp(A, NOW)
    await cache.lookUp(B, NOW)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    await cache.lookUp(C, NOW)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    expect(cache.cachedState(B, NOW)).toEqual({ state: 'unknown' })
    expect(cache.cachedState(C, NOW)).toMatchObject({ state: 'usable' })
  })

  it('reaches both secrets of a rotated key by its id, and the one left once the other is let go', async () => {
    const D = digestOf('d')
    database.rotate(A, D, new Date(NOW + 60_000))
    cache = make({ maxKeys: 2 })
    await cache.start()
    await cache.lookUp(A, NOW)
    await cache.lookUp(D, NOW)
    listeners[0]!.notify('api_keys_changed', 'api_keys:1')
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'stale', accountId: 1n })
    expect(cache.cachedState(D, NOW)).toEqual({ state: 'stale', accountId: 1n })
    await cache.lookUp(A, NOW)
    await cache.lookUp(D, NOW)
    await cache.lookUp(B, NOW)
    expect(cache.cachedState(A, NOW)).toEqual({ state: 'unknown' })
    listeners[0]!.notify('api_keys_changed', 'accounts:1')
    expect(cache.cachedState(D, NOW)).toEqual({ state: 'stale', accountId: 1n })
    expect(cache.cachedState(B, NOW)).toMatchObject({ state: 'usable' })
  })

  it('holds one copy of the scopes and costs that keys share, not one a key', async () => {
    database.add(MADE_UP, { ...keyRecord(20n), scopes: ['pets:read'], costs: { 'POST /v1/pets': 2 } })
    await cache.start()
    const [a, b, other] = [await cache.lookUp(A, NOW), await cache.lookUp(B, NOW), await cache.lookUp(MADE_UP, NOW)]
    expect(a!.scopes).toBe(b!.scopes)
    expect(a!.costs).toBe(b!.costs)
    expect(other).toMatchObject({ scopes: ['pets:read'], costs: { 'POST /v1/pets': 2 }, plan: 'free' })
  })

  it('caps misses apart from keys, so misses cannot push keys out', async () => {
    cache = make({ maxKeys: 2, maxMisses: 2 })
    await cache.start()
    await cache.lookUp(A, NOW)
    for (const digest of EXPIRED) await cache.lookUp(digest, NOW)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    expect(EXPIRED.map((digest) => cache.cachedState(digest, NOW).state)).toEqual(['unknown', 'missed', 'missed'])
  })
})

describe('ApiKeyCache change channel', () => {
  it('tells when every change announced before has been applied: its own NOTIFY has come back', async () => {
    await expect(cache.caughtUp()).rejects.toThrow('not listening for key changes')
    await cache.start()
    await cache.lookUp(A, NOW)
    const listener = listeners[0]!
    let caughtUp = false
    const waiting = cache.caughtUp().then(() => (caughtUp = true))
    const [, channel, barrier] = /^NOTIFY (\S+), '(barrier-[0-9a-f]{16})'$/.exec(listener.statements.at(-1)!)!
    // A heartbeat coming back meanwhile is not the barrier.
    listener.notify(channel!, '')
    listener.notify('api_keys_changed', 'api_keys:1')
    expect(caughtUp).toBe(false)
    await waiting
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(barrier).toBeDefined()
  })

  it('keeps trusting the channel while its heartbeat comes back every 2 s', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(listeners[0]!.heartbeats).toBe(5)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    expect(listeners).toHaveLength(1)
    expect(warn).not.toHaveBeenCalled()
  })

  it('stops trusting the channel when a heartbeat is not back within 2 s, and opens another', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    const [first] = listeners
    first!.hung = true
    await vi.advanceTimersByTimeAsync(2_000 + 1_999)
    expect(first!.heartbeats).toBe(1)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    await vi.advanceTimersByTimeAsync(1)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
    expect(warn).toHaveBeenCalledExactlyOnceWith({ err: 'no heartbeat within 2 s' }, LOST)
    expect(first!.ended).toBe(true)
    expect(first!.connection.stream.destroyed).toBe(true)

    await vi.advanceTimersByTimeAsync(249)
    expect(listeners).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(listeners).toHaveLength(2)
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unlisted' })
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    await cache.lookUp(A, NOW)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'usable' })
    // The lost session hears no more heartbeats.
    await vi.advanceTimersByTimeAsync(10_000)
    expect(first!.statements).toHaveLength(2)
    expect(warn).toHaveBeenCalledOnce()
  })

  it('stops trusting the channel at once when a heartbeat fails', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    const failure = new Error('connection reset')
    listeners[0]!.queryError = failure
    await vi.advanceTimersByTimeAsync(2_000)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(warn).toHaveBeenCalledExactlyOnceWith({ err: failure }, LOST)
  })

  it('stops trusting the channel at once when its connection fails or ends', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    const failure = new Error('connection reset')
    listeners[0]!.emit('error', failure)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(warn).toHaveBeenCalledExactlyOnceWith({ err: failure }, LOST)

    await vi.advanceTimersByTimeAsync(250)
    await cache.lookUp(A, NOW)
    listeners[1]!.emit('end')
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    expect(warn).toHaveBeenLastCalledWith({ err: 'the connection ended' }, LOST)
    expect(warn).toHaveBeenCalledTimes(2)
  })

  it('tries to open the channel again every 250 ms until it opens', async () => {
    readyListener = (listener, index) => {
      if (index === 1 || index === 2) listener.connectError = new Error('connection refused')
    }
    await cache.start()
    listeners[0]!.emit('error', new Error('connection reset'))
    await vi.advanceTimersByTimeAsync(500)
    expect(listeners).toHaveLength(3)
    expect(listeners.slice(1, 3).map((listener) => listener.ended)).toEqual([true, true])
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
    await vi.advanceTimersByTimeAsync(250)
    expect(listeners).toHaveLength(4)
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unlisted' })
  })

  it('fails to start when the channel cannot be opened, leaving its session closed', async () => {
    readyListener = (listener) => (listener.connectError = new Error('connection refused'))
    await expect(cache.start()).rejects.toThrow('connection refused')
    expect(listeners[0]!.ended).toBe(true)
    expect(cache.cachedState(MADE_UP, NOW)).toEqual({ state: 'unknown' })
  })

  it('closes the channel when stopped, and opens no other', async () => {
    await cache.start()
    await cache.lookUp(A, NOW)
    await cache.stop()
    expect(listeners[0]!.ended).toBe(true)
    expect(cache.cachedState(A, NOW)).toMatchObject({ state: 'stale' })
    await vi.advanceTimersByTimeAsync(10_000)
    expect(listeners).toHaveLength(1)
    expect(warn).not.toHaveBeenCalled()
  })

  /** Starts the cache, breaks its channel, and stops it while the new channel waits for its count of keys. */
  async function stopWhileReopening() {
    await cache.start()
    database.held.add('count')
    listeners[0]!.emit('error', new Error('connection reset'))
    await vi.advanceTimersByTimeAsync(250)
    expect(listeners).toHaveLength(2)
    // Wrapped, so that the caller gets the stop under way rather than waiting for it here.
    return { stopping: cache.stop() }
  }

  it('gives up opening the channel again when stopped while it was being opened', async () => {
    const { stopping } = await stopWhileReopening()
    database.fail(new Error('connection reset'))
    await stopping
    await vi.advanceTimersByTimeAsync(10_000)
    expect(listeners).toHaveLength(2)
    expect(listeners[1]!.ended).toBe(true)
  })

  it('closes the channel it was opening again when stopped meanwhile, even once that channel opens', async () => {
    const { stopping } = await stopWhileReopening()
    database.release()
    await stopping
    await flush()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(listeners[1]!.ended).toBe(true)
    expect(listeners[1]!.heartbeats).toBe(0)
  })

  it('opens no channel again once stopped after losing one', async () => {
    await cache.start()
    listeners[0]!.emit('error', new Error('connection reset'))
    await cache.stop()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(listeners).toHaveLength(1)
  })
})
