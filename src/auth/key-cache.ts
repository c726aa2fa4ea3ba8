import { randomBytes } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { BloomFilter } from 'bloomfilter'
import { LRUCache } from 'lru-cache'
import pg from 'pg'
import type { Queryable } from '../db/statements.js'
import {
  countUnrevokedApiKeys,
  findUsableApiKey,
  findUsableApiKeys,
  SECRET_HASH_BYTES,
  secretHashesAfter,
  type ApiKeyRecord
} from '../repositories/api-keys.js'
import type { Scope } from '../db/schema.js'
import { AllowedAddresses } from './allowed-addresses.js'

const CHANGES_CHANNEL = 'api_keys_changed'
/** Carries the secret hash of each key issued or rotated (migration 0014). */
const ADDED_CHANNEL = 'api_keys_added'
/** Carries `<key id>:<end of ban in epoch ms>` for each key the counting statement bans (migration 0019). */
const BANNED_CHANNEL = 'api_key_banned'
/** The change channel is proven alive this often, and given up when the proof takes longer than the timeout. */
const HEARTBEAT_INTERVAL_MS = 2_000
const HEARTBEAT_TIMEOUT_MS = 2_000
const RECONNECT_DELAY_MS = 250
/**
 * A cached key is looked up again after this long even if no change was announced: in the background,
 * in batches, while it is still served from memory; after MAX_SERVED_MS only on the request's path.
 */
const MAX_AGE_MS = 60_000
const MAX_SERVED_MS = 300_000
/** Keys due to be looked up again are gathered this long, and looked up this many in a round trip. */
const REVALIDATE_DELAY_MS = 100
const REVALIDATE_BATCH = 1_000
/** A secret looked up and not found is not looked up again for this long, unless keys change. */
const MISS_TTL_MS = 60_000
/** Keys and misses are capped apart, so a flood of made-up keys cannot push out the keys in use. */
const MAX_KEYS = 50_000
const MAX_MISSES = 50_000
/** The membership filter holds this many keys (or twice those unrevoked at its load, if more) at about 0.1 % false positives, in 1.8 MB. */
const FILTER_KEYS = 1_000_000
const FILTER_BITS_PER_KEY = 14.4
const FILTER_HASHES = 10
// Small pages leave a smaller heap behind than large ones, in the same time
// (docs/history/benchmark.md#measurements-behind-the-code).
const FILTER_PAGE = 2_000
/**
 * For this long after keys are announced as issued, the filter may lack one whose announcement is
 * still on its way (issued on another instance together with those announced).
 */
const RECENT_ADDITION_MS = 5_000

interface Entry<T> {
  value: T
  at: number
  /** The cache's generation when it was looked up: entries of an earlier one are stale. */
  generation: number
}

interface KeyEntry extends Entry<AuthenticatedKey> {
  /** When the secret stops working, whatever the channel says: the key's expiry, or a rotation's grace's end. */
  until: number
  /** Announced as changed (its key or its account): looked up again before it is used. */
  changed?: true
}

/**
 * A usable key as the guard takes it: what a request needs of its record (the access line logs its
 * prefix), and its allow-list parsed once, when it was looked up. Its name and dates stay in the
 * database: each cached key holds only these (docs/benchmark.md#memory).
 */
export interface AuthenticatedKey extends Pick<
  ApiKeyRecord,
  'id' | 'prefix' | 'accountId' | 'accountExternalId' | 'scopes' | 'plan' | 'costs'
> {
  /** The client addresses it may be used from; null: any. */
  allowedFrom: AllowedAddresses | null
}

/** Distinct plans, scope sets and cost tables kept once each, for the cached keys to share. */
const MAX_SHARED = 1_000

/** The session the cache listens on: a pg.Client of its own, or a fake in unit tests. */
export interface ChangeListener {
  connect(): Promise<unknown>
  query(text: string): Promise<unknown>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'end', listener: () => void): unknown
  on(event: 'notification', listener: (message: pg.Notification) => void): unknown
}

/** The listener holds a session of its own, outside the pool (and any transaction pooler). */
const listenerOn = (connectionString: string): ChangeListener =>
  new pg.Client({
    connectionString,
    application_name: 'animal-store-listener',
    connectionTimeoutMillis: HEARTBEAT_TIMEOUT_MS,
    query_timeout: HEARTBEAT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000
  })

/** Where the cache's listener comes from: a pg.Client on `listenUrl`, or `openListener` (a fake in unit tests). */
type ListenerSource = { listenUrl: string } | { openListener: () => ChangeListener }

/** A usable key as the database gave it, and when the secret it was found by stops working (null: no end but the key's). */
export interface FoundKey {
  key: ApiKeyRecord
  usableUntil: Date | null
}

/** Finds the usable key with this secret hash at `now` in one round trip, and what else it did there. */
export type KeyFinder<T extends FoundKey> = (secretHash: Buffer, now: Date) => Promise<T | undefined>

/** What a finder found, its key with what the cache adds. */
type Authenticated<T extends FoundKey> = Omit<T, 'key'> & { key: AuthenticatedKey }

/** What the cache knows of a secret digest. */
export type CachedKeyState =
  /** A usable key, fresh: no lookup needed. */
  | { state: 'usable'; key: AuthenticatedKey }
  /** Looked up lately and matched no usable key. */
  | { state: 'missed' }
  /** A key that was usable when last looked up, of this account then: it must be looked up again before use. */
  | { state: 'stale'; accountId: bigint }
  /** Not known here, and perhaps a key: look it up. */
  | { state: 'unknown' }
  /** Not in the membership filter: no key, unless one issued so lately that its announcement is still on its way. */
  | { state: 'unlisted' }

/**
 * Authenticates keys from memory. A membership filter of every key's secret hash, loaded when the
 * change channel opens and told each new hash over it, rules out tokens that match no key without a
 * lookup once their address has spent its budget, so a flood of made-up keys costs the database
 * nothing. While the channel is down the
 * filter may lack new keys, so it rules nothing out until it has been loaded again. Every change to api_keys or plans is announced on a Postgres
 * channel (a trigger does it), and each announcement makes every cached key stale, so revocation,
 * rotation and plan changes reach every instance as fast as NOTIFY travels. What no announcement
 * tells, a key's expiry and the end of a rotation's grace, each cached secret carries as its own end. The channel is trusted
 * only while a heartbeat (a NOTIFY to itself every 2 s) comes back within 2 s: a connection that
 * hangs without closing (a frozen backend, a NAT dropping it) stops the cache within about 4 s, and
 * the channel is opened again. While it is not trusted, every key is looked up on every request.
 * Lookups of one secret that overlap share one round trip.
 */
export class ApiKeyCache {
  readonly #keys: LRUCache<string, KeyEntry>
  readonly #misses: LRUCache<string, Entry<true>>
  readonly #lookups = new Map<string, Promise<AuthenticatedKey | undefined>>()
  /** The cached digests of each key and of each account, so that a change announced by id reaches them. */
  readonly #byKey = new Map<bigint, Digests>()
  readonly #byAccount = new Map<bigint, Digests>()
  /** One copy of each plan name, scope set and cost table the cached keys hold, by its text. */
  readonly #shared = new LRUCache<string, string | Scope[] | Record<string, number>>({ max: MAX_SHARED })
  /** Digests served past their age, to be looked up again in the background, each with the instant it was served at. */
  readonly #due = new Map<string, number>()
  /** Counts the changes announced by id: a lookup that raced with one holds its key as changed. */
  #changes = 0
  #revalidation: NodeJS.Timeout | undefined
  #revalidating = false
  /** Holds every usable key's secret hash while the channel is trusted; undefined otherwise. */
  #filter: BloomFilter | undefined
  /** When keys were last announced as issued, by this process's clock. */
  #lastAddition = -Infinity
  /** Hashes announced while the filter is being loaded, added to it once loaded. */
  #announcedWhileLoading: string[] | undefined
  // Bumped on every invalidation: it makes every entry stale, and a lookup that raced with it must
  // not be taken for fresh.
  #generation = 0
  #listener: ChangeListener | undefined
  #heartbeat: NodeJS.Timeout | undefined
  #heartbeatDeadline: NodeJS.Timeout | undefined
  #reconnect: NodeJS.Timeout | undefined
  #stopped = false
  /** Waiting for their NOTIFY on the heartbeat channel to come back, by payload. */
  readonly #barriers = new Map<string, () => void>()
  // Each instance proves its own channel, on a channel no other instance listens to.
  readonly #heartbeatChannel = `api_keys_heartbeat_${randomBytes(8).toString('hex')}`

  constructor(
    private readonly options: {
      pool: Queryable
      log: FastifyBaseLogger
      /** Caps on the keys and on the misses kept; 50,000 each unless given. */
      maxKeys?: number
      maxMisses?: number
      /** Told of each ban the database announces, so that a lease held here never admits the key. */
      onBan?: (apiKeyId: bigint, bannedUntil: number) => void
    } & ListenerSource
  ) {
    this.#keys = new LRUCache({
      max: options.maxKeys ?? MAX_KEYS,
      dispose: (entry, digest) => {
        unindex(this.#byKey, entry.value.id, digest)
        unindex(this.#byAccount, entry.value.accountId, digest)
      }
    })
    this.#misses = new LRUCache({ max: options.maxMisses ?? MAX_MISSES })
  }

  async start(): Promise<void> {
    this.#stopped = false
    await this.#listen()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#reconnect)
    clearTimeout(this.#revalidation)
    this.#due.clear()
    const listener = this.#listener
    this.#drop()
    await listener?.end().catch(() => {})
  }

  /** Bumped whenever every cached key is made stale (the channel lost or reopened, an unnamed change). */
  get generation(): number {
    return this.#generation
  }

  /** What the cache knows of a secret digest at `now`, without I/O. */
  cachedState(digest: string, now: number): CachedKeyState {
    const trusted = this.#listener !== undefined
    const entry = this.#keys.get(digest)
    if (entry) {
      const current = trusted && entry.generation === this.#generation && !entry.changed && now < entry.until
      const age = now - entry.at
      if (current && age < MAX_SERVED_MS) {
        if (age >= MAX_AGE_MS) this.#revalidate(digest, now)
        return { state: 'usable', key: entry.value }
      }
      return { state: 'stale', accountId: entry.value.accountId }
    }
    if (trusted && this.#filter?.test(digest) === false) return { state: 'unlisted' }
    const miss = this.#misses.get(digest)
    if (miss && trusted && miss.generation === this.#generation && now - miss.at < MISS_TTL_MS) {
      return { state: 'missed' }
    }
    return { state: 'unknown' }
  }

  /**
   * Whether the membership filter may lack a key that exists: it is not loaded or not trusted, or
   * keys were announced as issued in the last few seconds, so another issued with them may not have
   * been announced here yet.
   */
  mayLackNewKeys(): boolean {
    return (
      this.#filter === undefined || this.#listener === undefined || Date.now() - this.#lastAddition < RECENT_ADDITION_MS
    )
  }

  /**
   * Resolves once every change committed before the call has been applied here: a NOTIFY sent to
   * itself comes back after every notification committed before it. Rejects while not listening.
   */
  async caughtUp(): Promise<void> {
    const listener = this.#listener
    if (!listener) throw new Error('not listening for key changes')
    const payload = `barrier-${randomBytes(8).toString('hex')}`
    const back = new Promise<void>((resolve) => this.#barriers.set(payload, resolve))
    await listener.query(`NOTIFY ${this.#heartbeatChannel}, '${payload}'`)
    await back
  }

  /** Looks the digest up in the database (1 round trip); a lookup of it already under way is shared. */
  async lookUp(digest: string, now: number): Promise<AuthenticatedKey | undefined> {
    const found = await this.lookUpWith(digest, now, (secretHash, at) =>
      findUsableApiKey(this.options.pool, secretHash, at)
    )
    return found?.key
  }

  /**
   * Looks the digest up with `find`, which finds the usable key and may do more in the same round
   * trip (count the request that carried it), and caches the key. A lookup of the digest already
   * under way is shared; then only its key comes back, the rest being its own request's.
   */
  async lookUpWith<T extends FoundKey>(
    digest: string,
    now: number,
    find: KeyFinder<T>
  ): Promise<Authenticated<T> | { key: AuthenticatedKey } | undefined> {
    const shared = this.#lookups.get(digest)
    if (shared) {
      const key = await shared
      return key && { key }
    }
    const found = this.#find(digest, now, find)
    const key = found.then((result) => result?.key)
    // Its failure reaches whoever shares it; alone, it is the caller's through `found`.
    key.catch(() => {})
    this.#lookups.set(digest, key)
    try {
      return await found
    } finally {
      this.#lookups.delete(digest)
    }
  }

  async #find<T extends FoundKey>(
    digest: string,
    now: number,
    find: KeyFinder<T>
  ): Promise<Authenticated<T> | undefined> {
    const generation = this.#generation
    const changes = this.#changes
    const found = await find(Buffer.from(digest, 'base64'), new Date(now))
    if (!found) {
      this.#keys.delete(digest)
      this.#misses.set(digest, { value: true, at: now, generation })
      return undefined
    }
    const key = this.#authenticated(found.key)
    this.#misses.delete(digest)
    this.#hold(digest, key, now, generation, found.usableUntil, changes !== this.#changes)
    return { ...found, key }
  }

  /** What the cache holds of a key's record, its plan, scopes and costs shared with the keys alike. */
  #authenticated(record: ApiKeyRecord): AuthenticatedKey {
    return {
      id: record.id,
      prefix: record.prefix,
      accountId: record.accountId,
      accountExternalId: record.accountExternalId,
      scopes: this.#share(`scopes ${record.scopes.join(' ')}`, record.scopes),
      plan: this.#share(`plan ${record.plan}`, record.plan),
      costs: this.#share(`costs ${JSON.stringify(record.costs)}`, record.costs),
      allowedFrom: AllowedAddresses.of(record.allowedAddresses)
    }
  }

  #share<T extends string | Scope[] | Record<string, number>>(text: string, value: T): T {
    const known = this.#shared.get(text)
    if (known !== undefined) return known as T
    this.#shared.set(text, value)
    return value
  }

  #hold(
    digest: string,
    key: AuthenticatedKey,
    at: number,
    generation: number,
    usableUntil: Date | null,
    changed: boolean
  ) {
    const until = usableUntil?.getTime() ?? Infinity
    this.#keys.set(
      digest,
      changed ? { value: key, at, generation, until, changed } : { value: key, at, generation, until }
    )
    index(this.#byKey, key.id, digest)
    index(this.#byAccount, key.accountId, digest)
  }

  #revalidate(digest: string, now: number) {
    this.#due.set(digest, now)
    if (this.#revalidation === undefined && !this.#revalidating) {
      this.#revalidation = setTimeout(() => {
        void this.#revalidateDue()
      }, REVALIDATE_DELAY_MS)
      this.#revalidation.unref()
    }
  }

  /**
   * Looks the keys served past their age up again, a batch a round trip: each found is held fresh
   * again, each not found (revoked, expired, its account closed) is dropped. A batch that raced with
   * an announced change leaves its keys as the change left them; one that failed is tried again when
   * its keys are next served.
   */
  async #revalidateDue() {
    this.#revalidation = undefined
    this.#revalidating = true
    try {
      while (this.#due.size > 0 && !this.#stopped) {
        const batch = [...this.#due].slice(0, REVALIDATE_BATCH)
        const digests = batch.map(([digest]) => digest)
        for (const digest of digests) this.#due.delete(digest)
        const generation = this.#generation
        const changes = this.#changes
        const now = Math.max(...batch.map(([, at]) => at))
        const found = await findUsableApiKeys(
          this.options.pool,
          digests.map((digest) => Buffer.from(digest, 'base64')),
          new Date(now)
        )
        if (generation !== this.#generation || changes !== this.#changes) continue
        for (const [i, digest] of digests.entries()) {
          const entry = this.#keys.peek(digest)
          if (!entry || entry.changed) continue
          const result = found[i]
          if (!result) this.#keys.delete(digest)
          else {
            this.#hold(digest, this.#authenticated(result.key), now, generation, result.usableUntil, false)
          }
        }
      }
    } catch (error) {
      this.#due.clear()
      this.options.log.warn({ err: error }, 'could not look cached api keys up again; they are looked up when used')
    } finally {
      this.#revalidating = false
    }
  }

  #banned(payload: string) {
    const [id, until] = payload.split(':')
    if (id && until && /^\d+$/.test(id) && /^\d+$/.test(until)) this.options.onBan?.(BigInt(id), Number(until))
  }

  #invalidate() {
    this.#generation++
    this.#misses.clear()
  }

  /**
   * An announced change: `api_keys:<ids>` or `accounts:<ids>` makes the keys it names (or the keys of
   * the accounts it names) stale, `api_keys+` (keys issued) none; anything else every key. Every miss
   * is forgotten, since a key changed or issued may be one that missed.
   */
  #changed(payload: string) {
    const [table, ids] = payload.split(':')
    if (payload === 'api_keys+') {
      this.#lastAddition = Date.now()
      return this.#misses.clear()
    }
    const named = table === 'api_keys' ? this.#byKey : table === 'accounts' ? this.#byAccount : undefined
    if (!named || ids === undefined || !/^\d+(,\d+)*$/.test(ids)) return this.#invalidate()
    this.#misses.clear()
    this.#changes++
    for (const id of ids.split(',')) {
      for (const digest of digestsOf(named, BigInt(id))) {
        const entry = this.#keys.peek(digest)
        if (entry) entry.changed = true
      }
    }
  }

  #drop() {
    this.#listener = undefined
    this.#filter = undefined
    clearInterval(this.#heartbeat)
    this.#clearHeartbeatDeadline()
    this.#invalidate()
  }

  #heard(payload: string | undefined) {
    const barrier = payload ? this.#barriers.get(payload) : undefined
    if (!barrier) return this.#clearHeartbeatDeadline()
    this.#barriers.delete(payload!)
    barrier()
  }

  #clearHeartbeatDeadline() {
    clearTimeout(this.#heartbeatDeadline)
    this.#heartbeatDeadline = undefined
  }

  async #listen(): Promise<void> {
    const client = 'openListener' in this.options ? this.options.openListener() : listenerOn(this.options.listenUrl)
    const lost = (reason: Error | string) => {
      if (this.#listener !== client) return
      this.options.log.warn({ err: reason }, 'lost the api key change channel; caching is off until it is back')
      this.#drop()
      void client.end().catch(() => {})
      // A hung peer never answers end(): drop the socket too. pg keeps it on `connection.stream`.
      ;(client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy()
      this.#scheduleReconnect()
    }
    client.on('error', lost)
    client.on('end', () => lost('the connection ended'))
    client.on('notification', (message) => {
      if (message.channel === CHANGES_CHANNEL) this.#changed(message.payload ?? '')
      else if (message.channel === ADDED_CHANNEL && message.payload) this.#announced(message.payload)
      else if (message.channel === BANNED_CHANNEL && message.payload) this.#banned(message.payload)
      else if (message.channel === this.#heartbeatChannel) this.#heard(message.payload)
    })
    let filter: BloomFilter
    try {
      await client.connect()
      await client.query(
        `LISTEN ${CHANGES_CHANNEL}; LISTEN ${ADDED_CHANNEL}; LISTEN ${BANNED_CHANNEL}; LISTEN ${this.#heartbeatChannel}`
      )
      // Listening first: a key issued during the load is announced, one issued before it is loaded.
      filter = await this.#loadFilter()
    } catch (error) {
      this.#announcedWhileLoading = undefined
      void client.end().catch(() => {})
      throw error
    }
    // Stopped while this channel was being opened: it is closed rather than put to use.
    if (this.#stopped) {
      void client.end().catch(() => {})
      return
    }
    // Whatever changed while nobody listened is forgotten before caching resumes.
    this.#invalidate()
    this.#filter = filter
    this.#listener = client
    this.#heartbeat = setInterval(() => {
      // A heartbeat still out keeps its deadline: the next one must not push it back, whichever of
      // the two timers due at the same instant runs first.
      if (this.#heartbeatDeadline !== undefined) return
      this.#heartbeatDeadline = setTimeout(() => lost('no heartbeat within 2 s'), HEARTBEAT_TIMEOUT_MS).unref()
      client.query(`NOTIFY ${this.#heartbeatChannel}`).catch(lost)
    }, HEARTBEAT_INTERVAL_MS)
    this.#heartbeat.unref()
  }

  #announced(digest: string) {
    this.#lastAddition = Date.now()
    this.#announcedWhileLoading?.push(digest)
    this.#filter?.add(digest)
  }

  /** Every unrevoked key's secret hash: one round trip to count them, one per 2,000 to read them. */
  async #loadFilter(): Promise<BloomFilter> {
    this.#announcedWhileLoading = []
    const capacity = Math.max(FILTER_KEYS, 2 * (await countUnrevokedApiKeys(this.options.pool)))
    const filter = new BloomFilter(Math.ceil(capacity * FILTER_BITS_PER_KEY), FILTER_HASHES)
    for (let afterId = 0n; ;) {
      const { lastId, hashes } = await secretHashesAfter(this.options.pool, afterId, FILTER_PAGE)
      for (let at = 0; at < hashes.length; at += SECRET_HASH_BYTES) {
        filter.add(hashes.toString('base64', at, at + SECRET_HASH_BYTES))
      }
      if (lastId === null || hashes.length < FILTER_PAGE * SECRET_HASH_BYTES) break
      afterId = lastId
    }
    for (const digest of this.#announcedWhileLoading) filter.add(digest)
    this.#announcedWhileLoading = undefined
    return filter
  }

  #scheduleReconnect() {
    if (this.#stopped) return
    this.#reconnect = setTimeout(() => {
      this.#listen().catch(() => this.#scheduleReconnect())
    }, RECONNECT_DELAY_MS)
    this.#reconnect.unref()
  }
}

/** An id's cached digests: nearly always one, held as itself rather than in a Set of its own (some 200 bytes). */
type Digests = string | Set<string>

function index(map: Map<bigint, Digests>, id: bigint, digest: string) {
  const digests = map.get(id)
  if (digests === undefined) map.set(id, digest)
  else if (typeof digests !== 'string') digests.add(digest)
  else if (digests !== digest) map.set(id, new Set([digests, digest]))
}

function unindex(map: Map<bigint, Digests>, id: bigint, digest: string) {
  const digests = map.get(id)
  if (digests === digest) map.delete(id)
  else if (typeof digests !== 'string' && digests?.delete(digest) && digests.size === 1) {
    map.set(id, digests.values().next().value!)
  }
}

function digestsOf(map: Map<bigint, Digests>, id: bigint): Iterable<string> {
  const digests = map.get(id)
  return digests === undefined ? [] : typeof digests === 'string' ? [digests] : digests
}
