import { hash, randomBytes } from 'node:crypto'
import crc32 from 'crc-32'
import { sql, type Expression, type Kysely, type QueryCreator, type SqlBool, type Transaction } from 'kysely'
import type { Database, Metadata, PlanName, Scope } from '../db/schema.js'
import { againOnDeadlock, statement, type Queryable } from '../db/statements.js'
import { limitInForce, replaceCustomLimits, type CustomLimits } from './accounts.js'
import { quotaStateOf, type CountedRow, type QuotaState } from './rate-limits.js'

type Db = Kysely<Database> | Transaction<Database>

export const SCOPES: readonly Scope[] = ['pets:read', 'pets:write', 'keys:manage', 'usage:read']

/** What authentication and the rate limiter know of a key: never its secret. Plan and limits are its account's. */
export interface ApiKeyRecord {
  id: bigint
  prefix: string
  name: string | null
  accountId: bigint
  accountExternalId: string | null
  scopes: Scope[]
  plan: PlanName
  /** What each route named by the plan costs, in units (`POST /v1/pets`); a route not named costs 1. */
  costs: Record<string, number>
  createdAt: Date
  expiresAt: Date | null
  revokedAt: Date | null
  /** The CIDR ranges the key may be used from, in canonical form; null: any address. */
  allowedAddresses: string[] | null
}

/** A key as operators see it: its record, the secret a rotation replaced while that still works, its metadata. */
export interface ApiKeyDetails extends ApiKeyRecord {
  /** The account's minute and day limits in force (its override's, else its plan's); null: it has none. */
  perMinute: number | null
  perDay: number | null
  /**
   * The replaced secret's prefix while it still works (by the database's clock): its grace runs and the
   * key is usable (not revoked, not expired, its account open); null otherwise.
   */
  previousPrefix: string | null
  /** When the replaced secret stops working: its grace's end, or the key's expiry if sooner; null when none works. */
  previousSecretExpiresAt: Date | null
  metadata: Metadata
}

export interface IssuedApiKey extends ApiKeyDetails {
  /** The whole key: shown once, stored only as its SHA-256 hash. */
  key: string
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export function randomBase62(length: number): string {
  // 248 is the largest multiple of 62 under 256: rejecting bytes above it keeps every character equally likely.
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

/** Keys issued today: `ask_<8 prefix>_<32 random>_<6 checksum>`. */
const KEY_SHAPE = /^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/
/** Keys issued before the checksum (and still in use): `ask_<8 prefix>_<32 random>`. */
const LEGACY_KEY_SHAPE = /^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}$/
const CHECKSUM_LENGTH = 6

/**
 * A key's checksum: the CRC-32 (IEEE 802.3, as zlib and GitHub's tokens use it) of everything before
 * its last `_` (`ask_`, the prefix, `_`, the random part), written in base62, most significant digit
 * first, padded with `0` to 6 characters (62^6 > 2^32).
 */
export function apiKeyChecksum(body: string): string {
  let value = crc32.str(body) >>> 0
  let out = ''
  while (value > 0) {
    out = BASE62[value % 62]! + out
    value = Math.floor(value / 62)
  }
  return out.padStart(CHECKSUM_LENGTH, '0')
}

/**
 * What a token's shape says it is, in memory: a key of today's format whose checksum matches
 * (`current`), one of the format issued before checksums (`legacy`), or nothing that can be a key
 * (undefined; a mistyped or made-up key of today's format among them).
 */
export function apiKeyFormat(token: string): 'current' | 'legacy' | undefined {
  if (KEY_SHAPE.test(token)) {
    const body = token.slice(0, -CHECKSUM_LENGTH - 1)
    return apiKeyChecksum(body) === token.slice(-CHECKSUM_LENGTH) ? 'current' : undefined
  }
  return LEGACY_KEY_SHAPE.test(token) ? 'legacy' : undefined
}

/**
 * A key reads `ask_<8 characters>_<32 characters>_<6 characters>`: the first part is its readable
 * prefix, the 40 base62 characters after `ask_` carry 238 random bits, and the last 6 are the
 * checksum of all before them (apiKeyChecksum).
 */
export function newApiKeySecret(): { key: string; prefix: string } {
  const prefix = `ask_${randomBase62(8)}`
  const body = `${prefix}_${randomBase62(32)}`
  return { key: `${body}_${apiKeyChecksum(body)}`, prefix }
}

function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer')
}

/** The same digest as text: a cache key without a Buffer. */
export function hashApiKeyBase64(key: string): string {
  return hash('sha256', key, 'base64')
}

/** What every reading of a key selects but its prefix, which depends on the secret it was found by. */
const keyColumns = (db: QueryCreator<Database>) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .select([
      'k.id',
      'k.name',
      'k.account_id as accountId',
      'a.external_id as accountExternalId',
      'k.scopes',
      'a.plan',
      sql<Record<string, number>>`(
        SELECT coalesce(jsonb_object_agg(c.route, c.cost), '{}') FROM plan_costs c WHERE c.plan = a.plan
      )`.as('costs'),
      'k.created_at as createdAt',
      'k.expires_at as expiresAt',
      'k.revoked_at as revokedAt',
      'k.allowed_addresses as allowedAddresses'
    ])

/** Whether the key may be used at `now`: not revoked, its account open, not expired. */
const usableAt = (now: Date | Expression<Date>) =>
  sql<SqlBool>`(k.revoked_at IS NULL AND a.closed_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now}))`

/** When a key's previous secret stops working: its grace's end, or the key's expiry when that comes first. */
const previousSecretUntil = sql<Date>`least(k.expires_at, k.previous_secret_expires_at)`

/** `value` while the key's previous secret still works, by the database's clock; else null. */
const whilePreviousWorks = <T>(value: Expression<T>) =>
  sql<T | null>`CASE WHEN k.previous_secret_expires_at > service_now() AND ${usableAt(sql<Date>`service_now()`)}
    THEN ${value} END`

const detailColumns = (db: Db) =>
  keyColumns(db).select([
    'k.prefix',
    limitInForce('minute').as('perMinute'),
    limitInForce('day').as('perDay'),
    whilePreviousWorks(sql.ref<string>('k.previous_prefix')).as('previousPrefix'),
    whilePreviousWorks(previousSecretUntil).as('previousSecretExpiresAt'),
    'k.metadata'
  ])

/**
 * Issues a key in `accountId`'s account, or, without one, in a new account of its own with `plan`
 * and `limits` (one statement either way).
 */
export async function issueApiKey(
  db: Db,
  options: {
    plan?: PlanName
    name?: string
    limits?: CustomLimits
    expiresAt?: Date
    accountId?: bigint
    scopes?: Scope[]
    allowedAddresses?: string[] | null
    metadata?: Metadata
  }
): Promise<IssuedApiKey> {
  const { key, prefix } = newApiKeySecret()
  const values = {
    prefix,
    secret_hash: hashApiKey(key),
    name: options.name ?? null,
    expires_at: options.expiresAt ?? null,
    allowed_addresses: options.allowedAddresses ?? null,
    ...(options.scopes ? { scopes: options.scopes } : {}),
    ...(options.metadata ? { metadata: JSON.stringify(options.metadata) } : {})
  }
  let inserted
  if (options.accountId !== undefined) {
    inserted = db.insertInto('api_keys').values({ ...values, account_id: options.accountId })
  } else {
    const plan = options.plan ?? 'free'
    inserted = db
      .with('account', (db) => db.insertInto('accounts').values({ plan }).returning('id'))
      .insertInto('api_keys')
      .values((eb) => ({ ...values, account_id: eb.selectFrom('account').select('id') }))
  }
  const { id } = await inserted.returning('id').executeTakeFirstOrThrow()
  if (options.accountId === undefined && options.limits) {
    await replaceCustomLimits(db, (await getApiKey(db, id))!.accountId, options.limits)
  }
  return { ...(await getApiKey(db, id))!, key }
}

export async function getApiKey(db: Db, id: bigint): Promise<ApiKeyDetails | undefined> {
  return detailColumns(db).where('k.id', '=', id).executeTakeFirst()
}

/** Keys in ascending id order: every one, or a page of `limit` after `afterId`; of one account, or of all. */
export async function listApiKeys(
  db: Db,
  page: { afterId?: bigint; limit?: number; accountId?: bigint } = {}
): Promise<ApiKeyDetails[]> {
  let query = detailColumns(db).orderBy('k.id')
  if (page.accountId !== undefined) query = query.where('k.account_id', '=', page.accountId)
  if (page.afterId !== undefined) query = query.where('k.id', '>', page.afterId)
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}

export async function countApiKeys(db: Db): Promise<number> {
  const { count } = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow()
  return Number(count)
}

/**
 * The key that has this secret, as its own or as the one a rotation replaced while its grace runs, if
 * it may be used at `now`: not revoked, its account open, not expired. Both may be columns of an
 * outer query (a batch of lookups).
 */
// A batch joins it LATERAL with OFFSET 0, so that PostgreSQL runs it once per lookup on the secret
// hash's indexes rather than flattening it into a scan of every key.
const usableKey = (db: QueryCreator<Database>, secretHash: Buffer | Expression<Buffer>, now: Date | Expression<Date>) =>
  keyColumns(db)
    .select([
      sql<string>`CASE WHEN k.secret_hash = ${secretHash} THEN k.prefix ELSE k.previous_prefix END`.as('prefix'),
      sql<Date | null>`CASE WHEN k.secret_hash = ${secretHash} THEN k.expires_at ELSE ${previousSecretUntil} END`.as(
        'usableUntil'
      )
    ])
    .where((eb) =>
      eb.or([
        eb('k.secret_hash', '=', secretHash),
        eb.and([eb('k.previous_secret_hash', '=', secretHash), eb('k.previous_secret_expires_at', '>', now)])
      ])
    )
    .where(usableAt(now))

type UsableKey = ApiKeyRecord & { usableUntil: Date | null }

// Every key a fleet serves is looked up again once its cached record is a minute old: a hot statement.
const FIND_USABLE = statement<{ secretHash: Buffer; now: Date }, UsableKey>((db, { secretHash, now }) =>
  usableKey(db, secretHash, now)
)

// Keys served from the cache past their age, looked up again in the background, many a round trip.
const FIND_USABLE_MANY = statement<{ secretHashes: Buffer[]; now: Date }, UsableKey & { lookup: string }>(
  (db, { secretHashes, now }) => sql<UsableKey & { lookup: string }>`
    SELECT asked.lookup, key.*
    FROM unnest(${secretHashes}::bytea[]) WITH ORDINALITY AS asked(secret_hash, lookup)
    CROSS JOIN LATERAL (${usableKey(db, sql.ref('asked.secret_hash'), now)} OFFSET 0) AS key
  `
)

/** What a request asks of its account when its key is looked up and counted in one statement. */
export type FirstRequest = {
  /** The route as a plan's costs name it (`POST /v1/pets`): it costs what the key's plan says, else 1. */
  route: string
  banAfter: number | null
  banSeconds: number
}

/** A first request's key lookup: its secret's hash, the instant its expiry is judged at, and what it asks. */
export type KeyLookup = FirstRequest & { secretHash: Buffer; now: Date }

/**
 * A row of FIND_USABLE_AND_COUNT: the lookup it answers (1-based), its key, and what count_units
 * decided, or nulls where it did not count.
 */
type UsableKeyCounted = UsableKey & { lookup: string } & (CountedRow | { [K in keyof CountedRow]: null })

// The keys of many first requests found and their requests counted in one round trip: count_units
// (db/schema.sql) runs once for the usable keys found, with no lease, so that an unknown,
// revoked or expired key spends nothing. Nor does a key with allowed addresses, whose client address
// the guard checks first. count_units answers each key's requests in the order asked, so its rows
// are matched to the lookups by key and turn.
const FIND_USABLE_AND_COUNT = statement<{ [K in keyof KeyLookup]: KeyLookup[K][] }, UsableKeyCounted>(
  (db, { secretHash, now, route, banAfter, banSeconds }) => sql<UsableKeyCounted>`
    WITH asked AS (
      SELECT * FROM unnest(${secretHash}::bytea[], ${now}::timestamptz[], ${route}::text[], ${banAfter}::integer[],
        ${banSeconds}::integer[]) WITH ORDINALITY AS asked(secret_hash, now, route, ban_after, ban_seconds, lookup)
    ),
    found AS (
      SELECT asked.lookup, asked.route, asked.ban_after, asked.ban_seconds, key.*,
        row_number() OVER (PARTITION BY key.id ORDER BY asked.lookup) AS turn
      FROM asked CROSS JOIN LATERAL (${usableKey(db, sql.ref('asked.secret_hash'), sql.ref('asked.now'))} OFFSET 0) AS key
    ),
    counting AS (
      SELECT found.*, coalesce((found.costs ->> found.route)::integer, 1) AS cost FROM found
      WHERE found."allowedAddresses" IS NULL
    ),
    counted AS (
      SELECT c.*, row_number() OVER (PARTITION BY c."apiKeyId" ORDER BY c.position) AS turn
      FROM count_units(
        ARRAY(SELECT f.id FROM counting f ORDER BY f.lookup),
        ARRAY(SELECT f."accountId" FROM counting f ORDER BY f.lookup),
        ARRAY(SELECT f.cost FROM counting f ORDER BY f.lookup),
        ARRAY(SELECT f.cost FROM counting f ORDER BY f.lookup),
        ARRAY(SELECT 0 FROM counting f),
        ARRAY(SELECT 0::double precision FROM counting f),
        ARRAY(SELECT f.ban_after FROM counting f ORDER BY f.lookup),
        ARRAY(SELECT f.ban_seconds FROM counting f ORDER BY f.lookup),
        '{}', '{}', '{}', '{}', '{}'
      ) WITH ORDINALITY AS c("apiKeyId", admitted, granted, "now", "leaseUntil", reason, "retryAt", "bannedUntil",
        "newlyBanned", "windows", algorithms, limits, remaining, resets, credits, position)
    )
    SELECT found.lookup, found.id, found.prefix, found.name, found."accountId", found."accountExternalId",
      found.scopes, found.plan, found.costs, found."createdAt", found."expiresAt",
      found."revokedAt", found."allowedAddresses", found."usableUntil", counted."apiKeyId", counted.admitted,
      counted.granted, counted."now", counted."leaseUntil", counted.reason, counted."retryAt", counted."bannedUntil",
      counted."newlyBanned", counted."windows", counted.algorithms, counted.limits, counted.remaining,
      counted.resets, counted.credits
    FROM found LEFT JOIN counted ON counted."apiKeyId" = found.id AND counted.turn = found.turn
  `
)

const SECRET_HASHES_AFTER = statement<{ afterId: bigint; limit: number }, { lastId: string | null; hashes: Buffer }>(
  (db, { afterId, limit }) =>
    db
      .selectFrom(
        // In id order, which is nearly the table's own: a range of the primary key reads few pages.
        db
          .selectFrom('api_keys')
          .select([
            'id',
            // A key's previous secret while it still works: the filter must not rule it out.
            sql<Buffer>`CASE WHEN previous_secret_expires_at > service_now()
              THEN secret_hash || previous_secret_hash ELSE secret_hash END`.as('secrets')
          ])
          .where('revoked_at', 'is', null)
          .where('id', '>', afterId)
          .orderBy('id')
          .limit(limit)
          .as('page')
      )
      .select([
        sql<string | null>`max(id)`.as('lastId'),
        sql<Buffer>`coalesce(string_agg(secrets, ''::bytea), ''::bytea)`.as('hashes')
      ])
)

const COUNT_UNREVOKED = statement<Record<string, never>, { count: string }>((db) =>
  db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('revoked_at', 'is', null)
)

/** How many keys are not revoked. 1 round trip. */
export async function countUnrevokedApiKeys(db: Queryable): Promise<number> {
  const [row] = await COUNT_UNREVOKED(db, {})
  return Number(row!.count)
}

/** The length of a key's secret hash (SHA-256). */
export const SECRET_HASH_BYTES = 32

/**
 * The secret hashes of up to `limit` keys not revoked with an id above `afterId` (with the previous
 * secret of a key in a rotation's grace), end to end in one Buffer (one object a page rather than
 * one a key), and the last id of the page: null when none was left. 1 round trip.
 */
export async function secretHashesAfter(
  db: Queryable,
  afterId: bigint,
  limit: number
): Promise<{ lastId: bigint | null; hashes: Buffer }> {
  const [page] = await SECRET_HASHES_AFTER(db, { afterId, limit })
  return { lastId: page!.lastId === null ? null : BigInt(page!.lastId), hashes: page!.hashes }
}

/**
 * The key this secret hash may use at `now` (the database's clock as measured): its own secret or,
 * during a rotation's grace, the one replaced; not revoked, not expired, its account open. With the
 * key, its prefix is the secret's, and `usableUntil` when the secret stops working: the key's expiry
 * or the grace's end, whichever comes first. 1 round trip.
 */
export async function findUsableApiKey(
  db: Queryable,
  secretHash: Buffer,
  now: Date
): Promise<{ key: ApiKeyRecord; usableUntil: Date | null } | undefined> {
  const [row] = await FIND_USABLE(db, { secretHash, now })
  if (!row) return undefined
  const { usableUntil, ...key } = row
  return { key, usableUntil }
}

/** findUsableApiKey for many secret hashes at once, in their order: undefined where none is usable. 1 round trip. */
export async function findUsableApiKeys(
  db: Queryable,
  secretHashes: readonly Buffer[],
  now: Date
): Promise<({ key: ApiKeyRecord; usableUntil: Date | null } | undefined)[]> {
  const rows = await FIND_USABLE_MANY(db, { secretHashes: [...secretHashes], now })
  const found = new Array<{ key: ApiKeyRecord; usableUntil: Date | null } | undefined>(secretHashes.length)
  for (const { lookup, usableUntil, ...key } of rows) found[Number(lookup) - 1] = { key, usableUntil }
  return found
}

/**
 * findUsableApiKey for many lookups at once, each request counted against its key's account (what
 * count_units decided) unless the key has allowed addresses; undefined, and nothing counted, for a
 * lookup that finds no usable key. In the order of the lookups. 1 round trip.
 */
export async function findUsableApiKeysAndCount(
  db: Queryable,
  lookups: readonly KeyLookup[]
): Promise<({ key: ApiKeyRecord; usableUntil: Date | null; counted?: QuotaState } | undefined)[]> {
  const column = <K extends keyof KeyLookup>(field: K) => lookups.map((lookup) => lookup[field])
  const rows = await againOnDeadlock(() =>
    FIND_USABLE_AND_COUNT(db, {
      secretHash: column('secretHash'),
      now: column('now'),
      route: column('route'),
      banAfter: column('banAfter'),
      banSeconds: column('banSeconds')
    })
  )
  const found = new Array<{ key: ApiKeyRecord; usableUntil: Date | null; counted?: QuotaState } | undefined>(
    lookups.length
  )
  for (const row of rows) {
    const { id, prefix, name, accountId, accountExternalId, scopes, plan, costs } = row
    const { createdAt, expiresAt, revokedAt, allowedAddresses, usableUntil } = row
    const key = { id, prefix, name, accountId, accountExternalId, scopes, plan, costs, createdAt }
    const record = { ...key, expiresAt, revokedAt, allowedAddresses }
    found[Number(row.lookup) - 1] = {
      key: record,
      usableUntil,
      ...(row.apiKeyId === null ? {} : { counted: quotaStateOf(row) })
    }
  }
  return found
}

export async function revokeApiKey(db: Db, id: bigint): Promise<ApiKeyDetails | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql`coalesce(revoked_at, now())` })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst()
  return row && getApiKey(db, row.id)
}

/**
 * Gives the key a new secret (and prefix). The secret replaced keeps working until
 * `previousSecretExpiresAt`, in place of any previous secret still in its grace; with null it stops at
 * once, and so does any previous one.
 */
export async function rotateApiKey(
  db: Db,
  id: bigint,
  previousSecretExpiresAt: Date | null,
  { key, prefix } = newApiKeySecret()
): Promise<IssuedApiKey | undefined> {
  const grace = previousSecretExpiresAt !== null
  const row = await db
    .updateTable('api_keys')
    // The right-hand sides read the row as it was: the secret being replaced.
    .set({
      prefix,
      secret_hash: hashApiKey(key),
      previous_prefix: grace ? sql<string>`prefix` : null,
      previous_secret_hash: grace ? sql<Buffer>`secret_hash` : null,
      previous_secret_expires_at: previousSecretExpiresAt
    })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  if (!row) return undefined
  return { ...(await getApiKey(db, row.id))!, key }
}

export interface ApiKeyChanges {
  name?: string | null
  expiresAt?: Date | null
  scopes?: Scope[]
  allowedAddresses?: string[] | null
  metadata?: Metadata
}

/** The key, its row locked until the transaction ends, so that changes to it queue. */
export async function lockApiKey(db: Transaction<Database>, id: bigint): Promise<ApiKeyDetails | undefined> {
  const row = await db.selectFrom('api_keys').select('id').where('id', '=', id).forUpdate().executeTakeFirst()
  return row && getApiKey(db, row.id)
}

/** Changes what `changes` names and leaves the rest; undefined when no key has this id. */
export async function updateApiKey(db: Db, id: bigint, changes: ApiKeyChanges): Promise<ApiKeyDetails | undefined> {
  const { name, expiresAt, scopes, allowedAddresses, metadata } = changes
  const set = {
    ...(name === undefined ? {} : { name }),
    ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    ...(scopes === undefined ? {} : { scopes }),
    ...(allowedAddresses === undefined ? {} : { allowed_addresses: allowedAddresses }),
    ...(metadata === undefined ? {} : { metadata: JSON.stringify(metadata) })
  }
  if (Object.keys(set).length === 0) return getApiKey(db, id)
  const row = await db.updateTable('api_keys').set(set).where('id', '=', id).returning('id').executeTakeFirst()
  return row && getApiKey(db, row.id)
}

/**
 * The ids of the keys these secrets are (the current secret, or a previous one while it still
 * works), ascending, their rows locked. A token that cannot be a key, one whose checksum fails among
 * them, matches none and is not looked for.
 */
export async function lockKeysBySecrets(trx: Transaction<Database>, secrets: readonly string[]): Promise<bigint[]> {
  const hashes = [...new Set(secrets.filter((secret) => apiKeyFormat(secret) !== undefined))].map(hashApiKey)
  if (hashes.length === 0) return []
  const rows = await trx
    .selectFrom('api_keys as k')
    .select('k.id')
    .where((eb) =>
      eb.or([
        eb('k.secret_hash', '=', eb.fn.any(sql<Buffer[]>`${hashes}::bytea[]`)),
        eb.and([
          eb('k.previous_secret_hash', '=', eb.fn.any(sql<Buffer[]>`${hashes}::bytea[]`)),
          eb('k.previous_secret_expires_at', '>', sql<Date>`service_now()`)
        ])
      ])
    )
    .orderBy('k.id')
    .forUpdate()
    .execute()
  return rows.map((row) => row.id)
}

/**
 * The ids of the account's keys not revoked, ascending, their rows locked: a key revoked meanwhile by
 * another transaction is left out once that commits.
 */
export async function lockUnrevokedApiKeys(trx: Transaction<Database>, accountId: bigint): Promise<bigint[]> {
  const rows = await trx
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute()
  return rows.map((row) => row.id)
}

/** A key's metadata, which the services deciding on its requests are told. 1 round trip. */
export async function findApiKeyMetadata(db: Db, id: bigint): Promise<Metadata | undefined> {
  const row = await db.selectFrom('api_keys').select('metadata').where('id', '=', id).executeTakeFirst()
  return row?.metadata
}
