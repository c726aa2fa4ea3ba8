import { canonicalRange, MOST_ALLOWED_ADDRESSES } from '../auth/allowed-addresses.js'
import type { Metadata, Scope } from '../db/schema.js'
import { InvalidInputError } from '../errors.js'
import { SCOPES } from '../repositories/api-keys.js'
import type { FieldChange } from '../repositories/audit-events.js'
import { EARLIEST_INSTANT_MS, INSTANT_RULE, LATEST_INSTANT_MS, parseInstant } from '../schemas/instant.js'
import { STORABLE_TEXT } from '../schemas/pets.js'

// The rules the admin API and the CLI share: what a name, an expiry and a set of scopes may be. A
// value that breaks one is an InvalidInputError: 400 on the admin API, exit code 2 on the CLI.

/**
 * Who made a change, for its audit event: `actor` is who the service authenticated (`bootstrap`,
 * `operator:NAME`, `key:PREFIX`) or `cli:USER`; `onBehalfOf` is whom the caller said it acted for
 * (X-Audit-Actor), kept beside it and never in its place.
 */
export interface Actor {
  actor: string
  onBehalfOf?: string | null
  requestId: string | null
  /** The SHA-256 of the token the request presented: the database appends `bootstrap` and `operator:` events only with it. */
  credential?: Buffer | null
}

const STORABLE = new RegExp(STORABLE_TEXT, 'u')
/** Every format character, those outside the BMP (tags, musical and shorthand format controls) included. */
const FORMAT = /\p{Cf}/u
const EXTERNAL_ID = /^[A-Za-z0-9._:-]{1,255}$/

/** A name of 1 to 255 characters that stores and prints as it is; null clears it. */
export function checkName<T extends string | null | undefined>(field: string, value: T): T {
  if (typeof value !== 'string') return value
  if (value.length < 1 || value.length > 255) throw new InvalidInputError(`${field} must be 1 to 255 characters`)
  if (!STORABLE.test(value) || FORMAT.test(value)) {
    throw new InvalidInputError(
      `${field} must not contain control characters, invisible format characters, line separators or unpaired surrogates`
    )
  }
  return value
}

export const isExternalId = (value: string) => EXTERNAL_ID.test(value)

export function checkExternalId(value: string): string {
  if (!isExternalId(value)) {
    throw new InvalidInputError('externalId must be 1 to 255 characters of A-Z, a-z, 0-9, ".", "_", ":" and "-"')
  }
  return value
}

/**
 * An expiry as an instant still to come. Text that names no real instant (a leap second, the 30th
 * of February) is refused rather than read as another instant or as no date at all.
 */
export function checkExpiry(value: string | Date | null | undefined, now: number): Date | null | undefined {
  if (value === null || value === undefined) return value
  const instant = checkInstant('expiresAt', value)
  if (instant.getTime() <= now) throw new InvalidInputError('expiresAt must be in the future')
  return instant
}

const storedInstant = (value: Date) =>
  value.getTime() >= EARLIEST_INSTANT_MS && value.getTime() <= LATEST_INSTANT_MS ? value : undefined

/** An instant in ISO 8601 that names a real one in the stored range; whether it lies ahead is for the database's clock to say. */
export function checkInstant(field: string, value: string | Date): Date {
  const instant = typeof value === 'string' ? parseInstant(value) : storedInstant(value)
  if (instant === undefined) {
    throw new InvalidInputError(`${field} ${INSTANT_RULE}, not '${String(value)}'`)
  }
  return instant
}

/** A non-empty set of known scopes, each once, in a fixed order. */
export function checkScopes(scopes: readonly string[] | undefined): Scope[] | undefined {
  if (scopes === undefined) return undefined
  const unknown = scopes.filter((scope) => !SCOPES.includes(scope as Scope))
  if (unknown.length) throw new InvalidInputError(`unknown scope '${unknown[0]}'; scopes are ${SCOPES.join(', ')}`)
  if (scopes.length === 0) throw new InvalidInputError(`scopes must name at least one of ${SCOPES.join(', ')}`)
  return SCOPES.filter((scope) => scopes.includes(scope))
}

/** The longest grace a replaced secret may keep working (a key's) or signing (a webhook endpoint's): a week. */
export const LONGEST_GRACE_SECONDS = 7 * 24 * 3600

export function checkGraceSeconds(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > LONGEST_GRACE_SECONDS) {
    throw new InvalidInputError(`graceSeconds must be a whole number from 0 to ${LONGEST_GRACE_SECONDS}`)
  }
  return value
}

/**
 * A key's allow-list as stored: each entry a CIDR range or a bare address, in canonical form, each
 * once, at most 20; null or none means any address (stored as null).
 */
export function checkAllowedAddresses(entries: readonly string[] | null | undefined): string[] | null | undefined {
  if (entries === undefined || entries === null) return entries
  if (entries.length > MOST_ALLOWED_ADDRESSES) {
    throw new InvalidInputError(
      `allowedAddresses may hold at most ${MOST_ALLOWED_ADDRESSES} ranges, not ${entries.length}`
    )
  }
  const ranges = entries.map((entry, index) => {
    try {
      return canonicalRange(entry)
    } catch (error) {
      throw new InvalidInputError(`allowedAddresses[${index}]: ${(error as Error).message}`)
    }
  })
  return ranges.length === 0 ? null : [...new Set(ranges)]
}

/** Metadata may take this many bytes as compact JSON (UTF-8). */
const LARGEST_METADATA_BYTES = 2048

/**
 * Metadata as stored: a JSON object of at most 2,048 bytes as compact JSON. A request body's integers
 * arrive as BigInts (json.ts): they are kept as numbers when a JSON number holds them exactly, else
 * refused. Text PostgreSQL cannot store (a NUL character, an unpaired surrogate) is refused too.
 */
export function checkMetadata(value: unknown): Metadata | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError('metadata must be a JSON object')
  }
  const metadata = storableJson(value, 'metadata') as Metadata
  const bytes = Buffer.byteLength(JSON.stringify(metadata))
  if (bytes > LARGEST_METADATA_BYTES) {
    throw new InvalidInputError(`metadata must take at most ${LARGEST_METADATA_BYTES} bytes as JSON, not ${bytes}`)
  }
  return metadata
}

/** Metadata as the audit trail records it: none (null) when empty, so that a thing made without any records none. */
export const auditedMetadata = (metadata: Metadata) => (Object.keys(metadata).length === 0 ? null : metadata)

// A NUL character, or a surrogate without its pair.
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function storableText(text: string, path: string): string {
  if (UNSTORABLE.test(text)) {
    throw new InvalidInputError(`${path} must not contain a NUL character or an unpaired surrogate`)
  }
  return text
}

/** How deep metadata may nest, objects and arrays counted, its own object the first. */
const DEEPEST_METADATA = 32

/** A parsed JSON value as plain JSON PostgreSQL stores as sent, or an InvalidInputError naming where it is not. */
function storableJson(value: unknown, path: string, depth = 1): unknown {
  if (typeof value === 'string') return storableText(value, path)
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new InvalidInputError(`${path} is an integer beyond ±${Number.MAX_SAFE_INTEGER}: send it as a string`)
    }
    return Number(value)
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new InvalidInputError(`${path} is not a finite number`)
  }
  if (value === null || typeof value !== 'object') return value
  // Checked before the walk goes deeper, so no body the parser took can exhaust the stack here.
  if (depth > DEEPEST_METADATA) {
    throw new InvalidInputError(`metadata is nested deeper than ${DEEPEST_METADATA} levels of objects and arrays`)
  }
  if (Array.isArray(value)) return value.map((item, index) => storableJson(item, `${path}[${index}]`, depth + 1))
  // fromEntries keeps a `__proto__` key an own property, as the body parser left it.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      storableText(key, path),
      storableJson(item, `${path}.${key}`, depth + 1)
    ])
  )
}

/** The fields whose values differ, each with its value before and after; instants as ISO text. */
export function changedFields(
  before: Record<string, unknown> | null,
  after: Record<string, unknown>
): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {}
  for (const [field, value] of Object.entries(after)) {
    const was = before?.[field] ?? null
    const now = value ?? null
    if (JSON.stringify(plain(was)) !== JSON.stringify(plain(now))) {
      changes[field] = { before: plain(was), after: plain(now) }
    }
  }
  return changes
}

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'bigint') return value.toString()
  return value
}
