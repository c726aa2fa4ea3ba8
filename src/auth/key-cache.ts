import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import type { Queryable } from '../db/prepared.js'
import { findUsableApiKey, hashApiKeyBase64, type ApiKeyRecord } from '../repositories/api-keys.js'

export const API_KEYS_CHANNEL = 'api_keys_changed'
const RECONNECT_DELAY_MS = 250

/**
 * Authenticates keys from memory. Every change to api_keys or plans is announced on a Postgres
 * channel (a trigger does it), and each announcement empties the cache, so revocation, rotation
 * and plan changes reach every instance as fast as NOTIFY travels. While the channel is not being
 * listened to, nothing is cached and every lookup goes to the database.
 */
export class ApiKeyCache {
  readonly #entries = new Map<string, ApiKeyRecord>()
  // Bumped on every invalidation: a lookup that raced with one must not cache what it read.
  #generation = 0
  #listener: pg.Client | undefined
  #reconnectTimer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(
    private readonly db: Queryable,
    /** The listener holds a connection of its own, outside the pool that serves requests. */
    private readonly url: string,
    private readonly log: FastifyBaseLogger,
    private readonly maxEntries = 10_000
  ) {}

  get listening(): boolean {
    return this.#listener !== undefined
  }

  async start(): Promise<void> {
    this.#stopped = false
    await this.#listen()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#reconnectTimer)
    const listener = this.#listener
    this.#drop()
    await listener?.end().catch(() => {})
  }

  /**
   * The usable key with this secret, or undefined: at once from memory on a hit, through the
   * database (1 round trip) on a miss.
   */
  authenticate(key: string, now: Date): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined> {
    const cacheKey = hashApiKeyBase64(key)
    const cached = this.#entries.get(cacheKey)
    if (!cached) return this.#lookUp(cacheKey, now)
    if (cached.expiresAt === null || cached.expiresAt > now) return cached
    this.#entries.delete(cacheKey)
    return undefined
  }

  async #lookUp(cacheKey: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const generation = this.#generation
    const record = await findUsableApiKey(this.db, Buffer.from(cacheKey, 'base64'), now)
    if (record && this.#listener && generation === this.#generation) {
      if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
      this.#entries.set(cacheKey, record)
    }
    return record
  }

  #invalidate() {
    this.#generation++
    this.#entries.clear()
  }

  #drop() {
    this.#listener = undefined
    this.#invalidate()
  }

  async #listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'animal-store-listener', keepAlive: true })
    const onLost = (error?: Error) => {
      if (this.#listener !== client) return
      this.log.warn({ err: error }, 'lost the api key change channel; caching is off until it is back')
      this.#drop()
      client.end().catch(() => {})
      this.#scheduleReconnect()
    }
    client.on('error', onLost)
    client.on('end', () => onLost())
    client.on('notification', (message) => {
      if (message.channel === API_KEYS_CHANNEL) this.#invalidate()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${API_KEYS_CHANNEL}`)
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    }
    // Whatever changed while nobody listened is forgotten before caching resumes.
    this.#invalidate()
    this.#listener = client
  }

  #scheduleReconnect() {
    if (this.#stopped) return
    this.#reconnectTimer = setTimeout(() => {
      this.#listen().catch(() => this.#scheduleReconnect())
    }, RECONNECT_DELAY_MS)
    this.#reconnectTimer.unref()
  }
}
