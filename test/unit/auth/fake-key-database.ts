import type { Queryable } from '../../../src/db/statements.js'
import type { ApiKeyRecord } from '../../../src/repositories/api-keys.js'

type Callback = (error: Error | null, result?: { rows: unknown[] }) => void
type Kind = 'find' | 'findMany' | 'count' | 'hashes'

interface StoredKey {
  id: bigint
  secretHash: Buffer
  record: ApiKeyRecord | undefined
  revoked: boolean
  /** The secret a rotation replaced and when it stops working. */
  previous?: { hash: Buffer; until: Date }
}

/** A key's record as the lookup returns it. */
export const keyRecord = (id: bigint, expiresAt: Date | null = null): ApiKeyRecord => ({
  id,
  prefix: `ask_${id}`,
  name: null,
  accountId: id,
  accountExternalId: null,
  scopes: ['pets:read', 'pets:write'],
  plan: 'free',
  costs: {},
  createdAt: new Date(0),
  expiresAt,
  revokedAt: null,
  allowedAddresses: null
})

/**
 * The api_keys table in memory, answering the three statements the key cache sends (a query object
 * and a callback, as pg takes them): the lookup of a usable key by its secret hash (one, or many at
 * once), the count of keys
 * not revoked, and the pages of their secret hashes. The kinds in `held` wait until `release()`, and
 * are then answered from the table as it stands, or until `fail()`.
 */
export class FakeKeyDatabase {
  readonly statements: { kind: Kind; values: unknown[] }[] = []
  readonly held = new Set<Kind>()
  readonly #keys: StoredKey[] = []
  readonly #pending: Callback[] = []

  readonly db: Queryable = {
    query: ((query: { text: string; values: unknown[] }, callback: Callback) => {
      const kind = kindOf(query.text)
      this.statements.push({ kind, values: query.values })
      const answer: Callback = (error) =>
        error ? callback(error) : callback(null, { rows: this.#rows(kind, query.values) })
      if (this.held.has(kind)) this.#pending.push(answer)
      else queueMicrotask(() => answer(null))
    }) as unknown as Queryable['query']
  }

  /** Adds a key, found by `digest` (base64); without a record, one only its hash is known of (for the filter). */
  add(digest: string, record?: ApiKeyRecord): void {
    this.#keys.push({
      id: BigInt(this.#keys.length + 1),
      secretHash: Buffer.from(digest, 'base64'),
      record,
      revoked: false
    })
  }

  /** Gives the key found by `digest` a new secret; the old one works until `until`. */
  rotate(digest: string, newDigest: string, until: Date): void {
    const key = this.#keys.find((stored) => stored.secretHash.equals(Buffer.from(digest, 'base64')))!
    key.previous = { hash: key.secretHash, until }
    key.secretHash = Buffer.from(newDigest, 'base64')
  }

  revoke(digest: string): void {
    for (const key of this.#keys) if (key.secretHash.equals(Buffer.from(digest, 'base64'))) key.revoked = true
  }

  count(kind: Kind): number {
    return this.statements.filter((statement) => statement.kind === kind).length
  }

  get pending(): number {
    return this.#pending.length
  }

  release(): void {
    this.held.clear()
    for (const answer of this.#pending.splice(0)) answer(null)
  }

  fail(error: Error): void {
    this.held.clear()
    for (const answer of this.#pending.splice(0)) answer(error)
  }

  #rows(kind: Kind, values: unknown[]): unknown[] {
    const unrevoked = this.#keys.filter((key) => !key.revoked)
    switch (kind) {
      case 'count':
        return [{ count: String(unrevoked.length) }]
      case 'hashes': {
        const [afterId, limit] = values as [bigint, number]
        const page = unrevoked.filter((key) => key.id > afterId).slice(0, limit)
        const lastId = page.at(-1)?.id
        return [
          {
            lastId: lastId === undefined ? null : String(lastId),
            hashes: Buffer.concat(page.flatMap((key) => [key.secretHash, ...(key.previous ? [key.previous.hash] : [])]))
          }
        ]
      }
      case 'findMany': {
        const [hashes, now] = values as [Buffer[], Date]
        return hashes.flatMap((hash, i) =>
          this.#usable(unrevoked, hash, now).map((row) => ({ ...row, lookup: String(i + 1) }))
        )
      }
      case 'find': {
        const secretHash = values.find((value) => Buffer.isBuffer(value))!
        const now = values.find((value) => value instanceof Date)!
        return this.#usable(unrevoked, secretHash, now)
      }
    }
  }

  #usable(unrevoked: StoredKey[], secretHash: Buffer, now: Date): object[] {
    const own = unrevoked.find((stored) => stored.secretHash.equals(secretHash))
    const previous = unrevoked.find((stored) => stored.previous?.hash.equals(secretHash) && stored.previous.until > now)
    const key = (own ?? previous)?.record
    const usable = key && (key.expiresAt === null || key.expiresAt > now)
    if (!usable) return []
    const graceEnd = own ? null : previous!.previous!.until
    const ends = [key.expiresAt, graceEnd].filter((at) => at !== null)
    const usableUntil = ends.length ? new Date(Math.min(...ends.map((at) => at.getTime()))) : null
    return [{ ...key, usableUntil }]
  }
}

function kindOf(text: string): Kind {
  if (text.startsWith('select count(*)')) return 'count'
  if (text.includes('string_agg(secrets')) return 'hashes'
  if (text.includes('"k"."previous_secret_hash" = $')) return 'find'
  if (text.includes('"k"."previous_secret_hash" = "asked"."secret_hash"')) return 'findMany'
  throw new Error(`the key cache sent a statement the fake does not know: ${text}`)
}
